# shellcheck shell=bash
# Variables set here are read by the suites that source this file:
# shellcheck disable=SC2034
# bench/lib.sh — small helpers shared by the benchmark suites under bench/.
#
# Source it from a suite script that already runs with `set -euo pipefail`:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#   cleanup_install_trap                 # once, early
#   cleanup_register rm -rf -- "$dir"    # run at exit, also on failure / Ctrl-C
#   drop_caches                          # cold cache before a timed step
#   secs=$(timeit some command args)     # elapsed wall seconds on stdout
#
# and, for the boilerplate every suite repeats:
#
#   while [[ $# -gt 0 ]]; do              # --quick, --rounds N, --out DIR, --help
#     if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
#     ...; shift
#   done
#   bench_find_bin STRATA_BIN src/cli/strata strata   # binary from STRATA_BIN / STRATA_BUILD
#   bench_install fio:fio                # Debian packages of missing commands
#   bench_results_dir read               # OUT (default bench/results/read-<time>)
#   bench_scratch read                   # SCRATCH, unmounted, its daemons stopped, removed at exit
#   bench_meta_open "${OUT}/meta.tsv"; bench_meta_env   # machine, kernel, strata commit
#   bench_arm_up ARM DIR LOG / bench_arm_down LOG       # fresh writable filesystems per arm
#
# Rules these helpers follow (see shared BENCHMARKING.md): wall time comes from
# `date +%s.%N`, a cold cache is made with `sync; echo 3 > drop_caches` and is
# verified, and nothing a suite creates outside its results folder is left behind.

# Guard against being sourced twice (two suites sourcing each other's helpers).
if [[ -n "${_BENCH_LIB_LOADED:-}" ]]; then
  return 0
fi
_BENCH_LIB_LOADED=1

# Print a message to stderr, prefixed so it stands out in long runs.
bench_log() {
  printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# Print an error to stderr and exit non-zero (the EXIT trap still cleans up).
bench_die() {
  printf '[bench] ERROR: %s\n' "$*" >&2
  exit 1
}

# Exit with a clear message unless running as root: dropping the page cache
# and installing packages both need it.
require_root() {
  if [[ ${EUID} -ne 0 ]]; then
    bench_die "this benchmark must run as root (it drops the page cache via /proc/sys/vm/drop_caches)"
  fi
}

# Current time as seconds since the epoch with nanoseconds, e.g. 1700000000.123456789.
now() {
  date +%s.%N
}

# Kilobytes of page cache currently held ("Cached" in /proc/meminfo).
cached_kb() {
  awk '/^Cached:/ { print $2; exit }' /proc/meminfo
}

# Make the next step run cold: write back dirty pages, then drop the page cache,
# dentries and inodes. Sets BENCH_CACHED_KB to the "Cached" figure measured right
# after the drop, so a suite can record that the drop really happened (a drop that
# silently failed would otherwise turn a "cold" number into a warm one).
# shellcheck disable=SC2034  # read by the suites that source this file
BENCH_CACHED_KB=
drop_caches() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
  # shellcheck disable=SC2034
  BENCH_CACHED_KB=$(cached_kb)
}

# Run a command and print its elapsed wall time in seconds (3 decimals) on stdout.
# The command's own stdout is sent to stderr so that `secs=$(timeit cmd ...)`
# captures only the number; redirect stderr to a log to keep the command's output.
# Returns the command's exit status (and prints nothing on stdout if it failed).
timeit() {
  local start end rc=0
  start=$(now)
  "$@" >&2 || rc=$?
  end=$(now)
  if [[ ${rc} -ne 0 ]]; then
    return "${rc}"
  fi
  awk -v s="${start}" -v e="${end}" 'BEGIN { printf "%.3f\n", e - s }'
}

# --- cleanup at exit --------------------------------------------------------
# Commands registered here run in reverse order when the script exits, whether
# it finished, failed under `set -e`, or was stopped with Ctrl-C / SIGTERM.
_BENCH_CLEANUPS=()
_BENCH_MAIN_PID=

# Register a command (given as separate words, quoted as you would run it).
cleanup_register() {
  local cmd
  printf -v cmd '%q ' "$@"
  _BENCH_CLEANUPS+=("${cmd}")
}

_bench_run_cleanups() {
  # Subshells (e.g. command substitutions) must not run the parent's cleanups.
  [[ "${BASHPID}" == "${_BENCH_MAIN_PID}" ]] || return 0
  local i
  for ((i = ${#_BENCH_CLEANUPS[@]} - 1; i >= 0; i--)); do
    eval "${_BENCH_CLEANUPS[i]}" || true
  done
  _BENCH_CLEANUPS=()
}

# Install the traps once, early in the suite script. INT/TERM are turned into an
# exit with the conventional status so the single EXIT trap does the work.
cleanup_install_trap() {
  _BENCH_MAIN_PID=${BASHPID}
  trap '_bench_run_cleanups' EXIT
  trap 'bench_log "interrupted, cleaning up"; exit 130' INT
  trap 'bench_log "terminated, cleaning up"; exit 143' TERM
}

# --- paths, options, results folder ------------------------------------------
# Every suite script lives in bench/<suite>/; BENCH_DIR and REPO_ROOT follow.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${BENCH_DIR}/.." && pwd)

# Print the header comment of the running script, lines FIRST..LAST, as its usage.
bench_usage() {
  sed -n "$1,$2p" "${BASH_SOURCE[-1]}" | sed 's/^# \{0,1\}//'
}

# The options every suite takes. In a suite's argument loop:
#
#   while [[ $# -gt 0 ]]; do
#     if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
#     case "$1" in --own-option) ...; esac
#     shift
#   done
#
# bench_common_opt consumes --quick, --rounds N, --out DIR and -h/--help (which
# calls the suite's `usage` function), sets QUICK, ROUNDS, OUT and BENCH_SHIFT
# (the words consumed), and returns 1 for any other word.
QUICK=0
ROUNDS=
OUT=
BENCH_SHIFT=1
bench_common_opt() {
  case "$1" in
    --quick) QUICK=1; BENCH_SHIFT=1 ;;
    --rounds | --out)
      [[ $# -ge 2 && -n "$2" ]] || bench_die "$1 needs a value"
      if [[ "$1" == --rounds ]]; then ROUNDS=$2; else OUT=$2; fi
      BENCH_SHIFT=2
      ;;
    -h | --help) usage; exit 0 ;;
    *) return 1 ;;
  esac
}

# The value of an option ("--items 500"), or die when it is missing:
#   --items) ITEMS=$(bench_optarg "$@"); shift ;;
bench_optarg() {
  [[ $# -ge 2 && -n "$2" ]] || bench_die "$1 needs a value"
  printf '%s\n' "$2"
}

# Die unless every VALUE is a positive integer: bench_check_int NAME VALUE [NAME VALUE ...]
bench_check_int() {
  while [[ $# -ge 2 ]]; do
    [[ "$2" =~ ^[1-9][0-9]*$ ]] || bench_die "$1 must be a positive integer, got '$2'"
    shift 2
  done
}

# bench_results_dir NAME: OUT defaults to bench/results/NAME-<time>; makes OUT/logs
# and turns OUT into an absolute path.
bench_results_dir() {
  OUT=${OUT:-${REPO_ROOT}/bench/results/$1-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "${OUT}/logs"
  OUT=$(cd "${OUT}" && pwd -P)
}

# bench_find_bin VAR RELPATH TARGET: the binary a suite runs, from VAR if set, else
# ${STRATA_BUILD:-<repo>/build}/RELPATH; dies with the build command when it is
# missing; sets VAR to its absolute path.
bench_find_bin() {
  local var=$1 rel=$2 target=$3 build=${STRATA_BUILD:-${REPO_ROOT}/build}
  local path=${!var:-${build}/${rel}}
  if [[ ! -x "${path}" ]]; then
    bench_die "${target} not found at ${path}.
  Build it first:  cmake -S ${REPO_ROOT} -B ${build} -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C ${build} ${target}
  or set STRATA_BUILD (a build directory) or ${var} (the binary)."
  fi
  printf -v "${var}" '%s' "$(cd "$(dirname "${path}")" && pwd -P)/$(basename "${path}")"
}

# bench_install CMD:PACKAGE ...: installs, with apt-get, the Debian package of every
# CMD not found (CMD may be an absolute file path). BENCH_NO_INSTALL=1 (set by
# bench/run, which installs everything once) turns a missing one into an error.
bench_install() {
  local pair cmd pkg
  local -a need=()
  for pair in "$@"; do
    cmd=${pair%%:*} pkg=${pair#*:}
    if [[ "${cmd}" == /* ]]; then [[ -e "${cmd}" ]] && continue; else command -v "${cmd}" >/dev/null && continue; fi
    [[ " ${need[*]} " == *" ${pkg} "* ]] || need+=("${pkg}")
  done
  ((${#need[@]})) || return 0
  [[ "${BENCH_NO_INSTALL:-0}" != 1 ]] || bench_die "missing Debian packages: ${need[*]}"
  bench_log "installing ${need[*]} (Debian packages)"
  # Retry after refreshing the package lists: a fresh machine may have none yet.
  apt-get install -y "${need[@]}" >&2 ||
    { apt-get update >&2 && apt-get install -y "${need[@]}" >&2; } ||
    bench_die "could not install ${need[*]} with apt-get"
}

# libfuse 3.14's passthrough_ll example, from the libfuse3-dev package.
readonly BENCH_PASSTHROUGH_SRC=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c

# bench_build_passthrough DEST LOG [SRC]: compiles passthrough_ll (or SRC, a
# changed copy of it, which finds the example's own headers) to DEST.
bench_build_passthrough() {
  local src=${3:-${BENCH_PASSTHROUGH_SRC}}
  bench_install "${BENCH_PASSTHROUGH_SRC}:libfuse3-dev" gcc:gcc pkg-config:pkg-config fusermount3:fuse3
  # shellcheck disable=SC2046  # pkg-config prints several words on purpose
  gcc -O2 -Wall -I "$(dirname "${BENCH_PASSTHROUGH_SRC}")" -o "$1" "${src}" $(pkg-config --cflags --libs fuse3) \
    >"$2" 2>&1 || bench_die "could not compile ${src}; see $2"
}

# The commit of strata measured: STRATA_COMMIT if set (a binary built elsewhere),
# else this checkout's HEAD, "-dirty" when src/ has uncommitted changes.
bench_strata_commit() {
  local sha
  if [[ -n "${STRATA_COMMIT:-}" ]]; then
    echo "${STRATA_COMMIT}"
  elif sha=$(git -C "${REPO_ROOT}" rev-parse --short HEAD 2>/dev/null); then
    if [[ -n "$(git -C "${REPO_ROOT}" status --porcelain --untracked-files=no -- src 2>/dev/null)" ]]; then
      sha="${sha}-dirty"
    fi
    echo "${sha}"
  else
    echo unknown
  fi
}

# meta.tsv: key<TAB>value lines describing a run. bench_meta_open FILE starts it;
# bench_meta_env records the machine (call it once SCRATCH exists).
BENCH_META=
bench_meta_open() {
  BENCH_META=$1
  : >"${BENCH_META}"
}
meta() {
  printf '%s\t%s\n' "$1" "${2//$'\n'/ }" >>"${BENCH_META}"
}
bench_meta_env() {
  meta date_utc "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  meta kernel "$(uname -r)"
  meta cpu_model "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
  meta nproc "$(nproc)"
  meta mem_total_kb "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
  meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
  meta strata_commit "$(bench_strata_commit)"
  meta quick "${QUICK}"
  meta rounds "${ROUNDS}"
  if [[ -n "${SCRATCH:-}" && -d "${SCRATCH}" ]]; then
    meta scratch_dir "${SCRATCH}"
    meta scratch_fs "$(df -T "${SCRATCH}" | awk 'NR == 2 { print $2 " on " $1 }')"
  fi
}

# bench_make_mixed_data PATH SIZE_MIB: the data file of the read suites — its
# first half random bytes (incompressible), its second half base64 text of
# random bytes (compresses to about 3/4), SIZE_MIB MiB in all; synced.
bench_make_mixed_data() {
  local path=$1 half=$(($2 << 19))
  bench_log "making $2 MiB of data (half random, half base64 text)"
  # The text half is cut from a longer base64 stream: its writer dies of SIGPIPE, on purpose.
  set +o pipefail
  {
    head -c "${half}" /dev/urandom
    head -c $((half * 3 / 4 + 4096)) /dev/urandom | base64 -w 76 | head -c "${half}"
  } >"${path}"
  set -o pipefail
  sync
  [[ $(stat -c %s "${path}") -eq $((half * 2)) ]] || bench_die "${path} has the wrong size"
}

# bench_rotate ROUND ITEM...: the items rotated left by ROUND-1, one per line (the
# arms' order of a round: each arm takes each position in turn).
bench_rotate() {
  local round=$1 i n
  shift
  n=$#
  local -a items=("$@")
  for ((i = 0; i < n; i++)); do printf '%s\n' "${items[(i + round - 1) % n]}"; done
}

# --- processes and mounts a suite starts ------------------------------------------
# Every FUSE daemon and mount a suite starts is tracked, so it can be stopped at
# exit by its pid (never by name). When BENCH_TRACK_FILE is set (by bench/run),
# they are also appended there, so the runner can clean up after a suite that
# was killed before its own cleanup ran.
_BENCH_PIDS=()

# bench_track_pid PID: remember PID with its start time ("pid:start"). The
# start time (field 22 of /proc/PID/stat) is set at fork and survives exec, so
# a pid tracked while its child is still between fork and exec (its name then
# that of the shell) is still recognised, and a reused pid is not.
bench_track_pid() {
  local start
  start=$(_bench_pid_start "$1") || return 0
  _BENCH_PIDS+=("$1:${start}")
  if [[ -n "${BENCH_TRACK_FILE:-}" ]]; then printf 'pid\t%s\t%s\n' "$1" "${start}" >>"${BENCH_TRACK_FILE}"; fi
}

# _bench_pid_start PID: its start time in clock ticks; fails for a zombie or no process.
_bench_pid_start() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }  # the fields after the command name, which may hold spaces
  local -a f
  read -r -a f <<<"${stat}"
  [[ "${f[0]}" != Z ]] || return 1
  echo "${f[19]}"  # field 22 of the whole line
}

# bench_track_mount MP: remember a mountpoint (for bench/run; the suite's own
# cleanup finds its mounts below SCRATCH).
bench_track_mount() {
  if [[ -n "${BENCH_TRACK_FILE:-}" ]]; then printf 'mount\t%s\n' "$1" >>"${BENCH_TRACK_FILE}"; fi
}

# bench_pid_runs PID START: whether PID is alive (not a zombie) and is the
# process that started at START.
bench_pid_runs() {
  local start
  start=$(_bench_pid_start "$1") || return 1
  [[ "${start}" == "$2" ]]
}

# bench_stop_pid PID:START: SIGTERM, then SIGKILL after 5 s, only while PID is
# still the process tracked (a pid reused by another process is left alone).
bench_stop_pid() {
  local pid=${1%%:*} start=${1#*:} i
  bench_pid_runs "${pid}" "${start}" || return 0
  kill -TERM "${pid}" 2>/dev/null || return 0
  for ((i = 0; i < 50; i++)); do
    bench_pid_runs "${pid}" "${start}" || return 0
    sleep 0.1
  done
  bench_log "cleanup: pid ${pid} ignored SIGTERM, sending SIGKILL"
  kill -KILL "${pid}" 2>/dev/null || true
}

# bench_unmount MP: unmount one mountpoint, FUSE or not, lazily if it is busy.
bench_unmount() {
  case "$(findmnt -n -o FSTYPE --mountpoint "$1" 2>/dev/null)" in
    "") return 0 ;;
    fuse*) fusermount3 -u "$1" 2>/dev/null || fusermount3 -uz "$1" 2>/dev/null || umount -l "$1" || true ;;
    *) umount "$1" 2>/dev/null || umount -l "$1" || true ;;
  esac
}

# bench_mounts_below DIR: every mountpoint at or below DIR, deepest first.
bench_mounts_below() {
  findmnt -rn -o TARGET | awk -v s="$1" '$0 == s || index($0, s "/") == 1' | sort -r
}

# bench_unmount_below DIR: unmount everything at or below DIR (repeated: mounts can stack).
bench_unmount_below() {
  local mp
  for _ in 1 2 3; do
    while read -r mp; do
      [[ -n "${mp}" ]] || continue
      bench_log "cleanup: unmounting ${mp}"
      bench_unmount "${mp}"
    done < <(bench_mounts_below "$1")
    [[ -z "$(bench_mounts_below "$1")" ]] && return 0
  done
  return 1
}

# bench_scratch NAME: SCRATCH, a fresh directory of the suite under
# ${BENCH_SCRATCH_ROOT:-/var/tmp} (bench/run points that at its own). At exit —
# also on failure or Ctrl-C — everything mounted below it is unmounted, every
# tracked daemon stopped, and it is removed (unless something stayed mounted).
# Call cleanup_install_trap first.
SCRATCH=
bench_scratch() {
  SCRATCH=${BENCH_SCRATCH_ROOT:-/var/tmp}/strata-bench-$1-$$
  cleanup_register _bench_cleanup_scratch
  mkdir -p "${SCRATCH}"
}
_bench_cleanup_scratch() {
  local p
  [[ -n "${SCRATCH}" && -d "${SCRATCH}" ]] || return 0
  bench_unmount_below "${SCRATCH}" || true
  for p in "${_BENCH_PIDS[@]}"; do bench_stop_pid "${p}"; done
  # A daemon stopped only now may have held a mount: sweep once more.
  bench_unmount_below "${SCRATCH}" || true
  if [[ -n "$(bench_mounts_below "${SCRATCH}")" ]]; then
    bench_log "cleanup: still mounted, NOT removing ${SCRATCH}: $(bench_mounts_below "${SCRATCH}" | tr '\n' ' ')"
    return 0
  fi
  rm -rf -- "${SCRATCH}"
}

# bench_wait_mounted MP PID LOG: wait until MP is a mountpoint (10 s at most),
# failing early if the daemon PID exits.
bench_wait_mounted() {
  local mp=$1 pid=$2 log=$3 i
  for ((i = 0; i < 100; i++)); do
    mountpoint -q "${mp}" && return 0
    if ! kill -0 "${pid}" 2>/dev/null; then
      tail -n 20 "${log}" >&2 || true
      bench_die "the daemon for ${mp} exited before mounting; see ${log}"
    fi
    sleep 0.1
  done
  bench_die "${mp} was not mounted after 10 s; see ${log}"
}

# --- fresh writable filesystems, one per arm ----------------------------------------
# The arms a writable suite compares (metadata, data, workload), each a fresh,
# empty filesystem on the disk that holds SCRATCH:
#   native              a plain directory
#   overlayfs           mount -t overlay, empty lower dir (root)
#   passthrough_ll      libfuse's example over a directory, defaults (1 s timeouts, cache=auto)
#   passthrough_ll-60s  the same with -o timeout=60 (strata's kernel timeout is 60 s)
#   passthrough_ll-60s-perm  the same plus -o default_permissions, strata's permission
#                       model: the kernel checks permissions itself and, after every
#                       change to a directory, asks the daemon for its attributes again
#   fuse-overlayfs      the Debian package, empty lower dir
#   strata              a fresh store, `strata mount --new`
# Needs BENCH_PT_BIN (bench_build_passthrough) for the passthrough arms and
# STRATA_BIN for strata.
readonly BENCH_WRITABLE_ARMS="native,overlayfs,passthrough_ll,passthrough_ll-60s,passthrough_ll-60s-perm,fuse-overlayfs,strata"
readonly BENCH_STRATA_WS=bench  # name of the workspace in each fresh store
BENCH_PT_BIN=
BENCH_STRATA_MOUNT_ARGS=()  # more arguments for the strata arm's `strata mount`

# The exact commands of those arms, for meta.tsv.
bench_meta_writable_arms() {
  meta cmd_native "a plain directory on the scratch filesystem"
  meta cmd_overlayfs "mount -t overlay overlay -o lowerdir=L,upperdir=U,workdir=W MP (L empty)"
  meta cmd_passthrough_ll "gcc -O2 ${BENCH_PASSTHROUGH_SRC} \$(pkg-config --cflags --libs fuse3); passthrough_ll -f -o source=SRC MP (default: timeout=1, cache=auto)"
  meta cmd_passthrough_ll-60s "passthrough_ll -f -o source=SRC -o timeout=60 MP (cache=auto)"
  meta cmd_passthrough_ll-60s-perm "passthrough_ll -f -o source=SRC -o timeout=60 -o default_permissions MP (cache=auto)"
  meta cmd_fuse-overlayfs "fuse-overlayfs -f -o lowerdir=L,upperdir=U,workdir=W MP (L empty)"
  meta cmd_strata "strata --store S init; strata --store S mount --new --name ${BENCH_STRATA_WS} MP (kernel entry/attr timeout 60 s); strata umount MP; strata workspace end ${BENCH_STRATA_WS} --discard"
  meta libfuse_version "$(pkg-config --modversion fuse3 2>/dev/null || echo unknown); $(fusermount3 -V 2>/dev/null || true)"
  if command -v fuse-overlayfs >/dev/null; then
    meta fuse_overlayfs_version "$(fuse-overlayfs --version 2>/dev/null | awk '/fuse-overlayfs/ { print $NF; exit }')"
  fi
  if [[ -n "${STRATA_BIN:-}" ]]; then
    meta strata_bin "${STRATA_BIN}"
    meta strata_version "$("${STRATA_BIN}" --version 2>/dev/null | head -n1 || true)"
  fi
}

# bench_arm_up ARM DIR LOG: a fresh, empty filesystem of ARM under DIR; sets
# BENCH_TARGET (the directory to work in) and BENCH_ARM, BENCH_ARM_DIR, BENCH_ARM_PID.
BENCH_TARGET=''
BENCH_ARM=''
BENCH_ARM_DIR=''
BENCH_ARM_PID=''
bench_arm_up() {
  local arm=$1 dir=$2 log=$3
  BENCH_ARM=${arm} BENCH_ARM_DIR=${dir} BENCH_ARM_PID=
  mkdir -p "${dir}"
  case "${arm}" in
    native)
      mkdir "${dir}/data"
      BENCH_TARGET=${dir}/data
      return 0
      ;;
    overlayfs)
      mkdir "${dir}/lower" "${dir}/upper" "${dir}/work" "${dir}/mnt"
      bench_track_mount "${dir}/mnt"
      mount -t overlay overlay -o "lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work" "${dir}/mnt" \
        >>"${log}" 2>&1 || bench_die "mount -t overlay failed; see ${log}"
      ;;
    passthrough_ll | passthrough_ll-60s | passthrough_ll-60s-perm)
      [[ -x "${BENCH_PT_BIN}" ]] || bench_die "passthrough_ll was not built (bench_build_passthrough)"
      mkdir "${dir}/src" "${dir}/mnt"
      local -a opts=(-o "source=${dir}/src")
      if [[ "${arm}" != passthrough_ll ]]; then opts+=(-o timeout=60); fi
      if [[ "${arm}" == passthrough_ll-60s-perm ]]; then opts+=(-o default_permissions); fi
      bench_track_mount "${dir}/mnt"
      # It holds a descriptor per inode the kernel knows: with 60 s timeouts the
      # workload suite's tens of thousands of files pass the usual limits. As
      # many as the kernel allows, else the hard limit (a container may forbid raising it).
      ({ ulimit -n "$(cat /proc/sys/fs/nr_open)" 2>/dev/null || ulimit -n "$(ulimit -Hn)"; } && exec "${BENCH_PT_BIN}" -f "${opts[@]}" "${dir}/mnt") >>"${log}" 2>&1 &
      BENCH_ARM_PID=$!
      bench_track_pid "${BENCH_ARM_PID}"
      bench_wait_mounted "${dir}/mnt" "${BENCH_ARM_PID}" "${log}"
      ;;
    fuse-overlayfs)
      mkdir "${dir}/lower" "${dir}/upper" "${dir}/work" "${dir}/mnt"
      bench_track_mount "${dir}/mnt"
      fuse-overlayfs -f -o "lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work" "${dir}/mnt" \
        >>"${log}" 2>&1 &
      BENCH_ARM_PID=$!
      bench_track_pid "${BENCH_ARM_PID}"
      bench_wait_mounted "${dir}/mnt" "${BENCH_ARM_PID}" "${log}"
      ;;
    strata)
      mkdir "${dir}/mnt"
      "${STRATA_BIN}" --store "${dir}/store" init >>"${log}" 2>&1 || bench_die "strata init failed; see ${log}"
      bench_track_mount "${dir}/mnt"
      "${STRATA_BIN}" --store "${dir}/store" mount --new --name "${BENCH_STRATA_WS}" "${BENCH_STRATA_MOUNT_ARGS[@]}" \
        "${dir}/mnt" >>"${log}" 2>&1 ||
        bench_die "strata mount failed; see ${log}"
      mountpoint -q "${dir}/mnt" || bench_die "strata mount returned but ${dir}/mnt is not a mountpoint"
      bench_track_strata_daemon "${dir}/store" "${dir}/mnt" "${log}"
      ;;
    *) bench_die "unknown arm '${arm}'" ;;
  esac
  BENCH_TARGET=${dir}/mnt
}

# bench_track_strata_daemon STORE MP LOG: track the daemon serving MP (its pid
# from `strata stats --json`), so it is stopped at exit should its unmount fail.
bench_track_strata_daemon() {
  BENCH_ARM_PID=$("${STRATA_BIN}" --store "$1" stats "$2" --json 2>>"$3" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["daemon_pid"])' 2>>"$3" || true)
  if [[ "${BENCH_ARM_PID}" =~ ^[0-9]+$ ]]; then bench_track_pid "${BENCH_ARM_PID}"; else BENCH_ARM_PID=; fi
}

# bench_arm_down LOG: unmount the arm bench_arm_up made, wait for its daemon, remove its files.
bench_arm_down() {
  local log=$1 dir=${BENCH_ARM_DIR} i
  case "${BENCH_ARM}" in
    native) ;;
    overlayfs) umount "${dir}/mnt" >>"${log}" 2>&1 || bench_die "umount ${dir}/mnt failed; see ${log}" ;;
    passthrough_ll | passthrough_ll-60s | passthrough_ll-60s-perm | fuse-overlayfs)
      fusermount3 -u "${dir}/mnt" >>"${log}" 2>&1 || bench_die "fusermount3 -u ${dir}/mnt failed; see ${log}"
      wait "${BENCH_ARM_PID}" || true  # a FUSE daemon's status after an unmount is not meaningful
      ;;
    strata)
      "${STRATA_BIN}" --store "${dir}/store" umount "${dir}/mnt" >>"${log}" 2>&1 ||
        bench_die "strata umount failed; see ${log}"
      "${STRATA_BIN}" --store "${dir}/store" workspace end "${BENCH_STRATA_WS}" --discard >>"${log}" 2>&1 ||
        bench_die "strata workspace end failed; see ${log}"
      # `umount` waits for the daemon already; this only bounds a slow exit.
      for ((i = 0; i < 100; i++)); do
        if [[ -z "${BENCH_ARM_PID}" ]] || ! kill -0 "${BENCH_ARM_PID}" 2>/dev/null; then break; fi
        sleep 0.1
      done
      ;;
  esac
  BENCH_ARM=''
  BENCH_ARM_PID=''
  rm -rf -- "${dir}"
}

# bench_strata_stats FILE: the strata arm's counters (`strata stats --json`) into FILE.
bench_strata_stats() {
  [[ "${BENCH_ARM}" == strata ]] || return 0
  local err
  err=$("${STRATA_BIN}" --store "${BENCH_ARM_DIR}/store" stats "${BENCH_ARM_DIR}/mnt" --json 2>&1 >"$1") ||
    bench_log "warning: 'strata stats --json' failed for $1: ${err}"
}

# bench_parse_arms ALL_CSV CSV: sets ARMS (array) and ARMS_CSV from CSV, every one
# checked against ALL_CSV. has_arm NAME then tells whether NAME was chosen.
ARMS=()
ARMS_CSV=
bench_parse_arms() {
  local arm
  ARMS_CSV=$2
  IFS=',' read -r -a ARMS <<<"${ARMS_CSV}"
  ((${#ARMS[@]} > 0)) || bench_die "--arms is empty"
  for arm in "${ARMS[@]}"; do
    [[ ",$1," == *",${arm},"* ]] || bench_die "unknown arm '${arm}' (expected some of $1)"
  done
}
has_arm() { [[ ",${ARMS_CSV}," == *",$1,"* ]]; }
