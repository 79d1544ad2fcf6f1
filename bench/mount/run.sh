#!/usr/bin/env bash
# bench/mount/run.sh — a mounted strata workspace against native ext4, kernel overlayfs, passthrough_ll and fuse-overlayfs.
#
# Usage: bench/mount/run.sh [--quick] [--rounds N] [--out DIR] [--arms LIST] [--suites LIST]
#                           [--items N] [--size SIZE] [--runtime SECS]
#
#   --quick         500 items, 128 MiB file, 3 s per fio phase, 1 round: a smoke run of a few minutes
#   --rounds N      rounds to run (default 3, quick 1)
#   --out DIR       results folder (default bench/results/mount-<timestamp>)
#   --arms LIST     comma-separated subset of native,overlayfs,passthrough_ll,passthrough_ll-60s,fuse-overlayfs,strata
#   --suites LIST   metadata,data (default both)
#   --items N       mdbench items per process (default 5000, quick 500)
#   --size SIZE     fio file size (default 1g, quick 128m)
#   --runtime SECS  bound on each fio read phase and length of the random phases (default 15, quick 3)
#
# Environment: STRATA_BUILD (default <repo>/build): where to find src/cli/strata and
# bench/tools/mdbench; STRATA_BIN and MDBENCH_BIN override each one; STRATA_COMMIT
# names the commit the strata binary was built from when that is not this checkout
# (default: this checkout's HEAD, "-dirty" if src/ has changes).
#
# Every measurement gets a fresh, empty filesystem of its arm, all on the same disk
# under /var/tmp/strata-bench-mount-<pid> (removed at exit, also on failure or Ctrl-C,
# after every mount left behind is unmounted and every daemon stopped):
#   native              a plain directory on the ext4 that holds /var/tmp
#   overlayfs           mount -t overlay (empty lower, upper and work dirs on that ext4)
#   passthrough_ll      libfuse 3's example, compiled at run time from libfuse3-dev, -o source=DIR,
#                       default options: entry/attr timeout 1 s, cache=auto
#   passthrough_ll-60s  the same with -o timeout=60: the like-for-like FUSE baseline for
#                       strata, whose kernel entry/attr timeout is 60 s
#   fuse-overlayfs      the Debian package, empty lower dir
#   strata              a fresh store, `strata mount --new`
#
# Suites, each round, arms interleaved and their order rotated round by round:
#   metadata  mdbench (bench/tools) with 1 process, 2 processes (a directory each),
#             2 processes in one shared directory, and 1 process with caches dropped
#             before every phase; N items per process; ops/s per phase.
#   data      fio, ioengine=psync: sequential write of SIZE in 1 MiB blocks with
#             end_fsync=1 (a new file); sequential read warm (read once before) and
#             cold (caches dropped before); random 4 KiB read (warm) and random 4 KiB
#             write (end_fsync=1) in that file for RUNTIME s; the random phases with 1
#             and with 2 jobs.
# Output in the results folder: raw.tsv (one line per measurement), results.json,
# table.md (also printed), ratios-*.svg, meta.tsv (versions, commands, cache states),
# logs/ (every tool's output, fio and mdbench JSON, `strata stats --json` after each run).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${SCRIPT_DIR}/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

readonly ALL_ARMS="native,overlayfs,passthrough_ll,passthrough_ll-60s,fuse-overlayfs,strata"
readonly PASSTHROUGH_SRC=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c
readonly STRATA_WS=bench  # name of the workspace in each fresh store

usage() {
  sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- arguments ----------------------------------------------------------------
QUICK=0
ROUNDS=
OUT=
ARMS_CSV=${ALL_ARMS}
SUITES_CSV="metadata,data"
ITEMS=
SIZE=
RUNTIME=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    --out) OUT=${2:?--out needs a directory}; shift ;;
    --arms) ARMS_CSV=${2:?--arms needs a list}; shift ;;
    --suites) SUITES_CSV=${2:?--suites needs a list}; shift ;;
    --items) ITEMS=${2:?--items needs a number}; shift ;;
    --size) SIZE=${2:?--size needs a size such as 1g}; shift ;;
    --runtime) RUNTIME=${2:?--runtime needs seconds}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done

if ((QUICK)); then
  ROUNDS=${ROUNDS:-1}; ITEMS=${ITEMS:-500}; SIZE=${SIZE:-128m}; RUNTIME=${RUNTIME:-3}
else
  ROUNDS=${ROUNDS:-3}; ITEMS=${ITEMS:-5000}; SIZE=${SIZE:-1g}; RUNTIME=${RUNTIME:-15}
fi
[[ "${ROUNDS}" =~ ^[1-9][0-9]*$ ]] || bench_die "--rounds must be a positive integer, got '${ROUNDS}'"
[[ "${ITEMS}" =~ ^[1-9][0-9]*$ ]] || bench_die "--items must be a positive integer, got '${ITEMS}'"
[[ "${RUNTIME}" =~ ^[1-9][0-9]*$ ]] || bench_die "--runtime must be a positive integer, got '${RUNTIME}'"
[[ "${SIZE}" =~ ^[1-9][0-9]*[kmgKMG]$ ]] || bench_die "--size must look like 128m or 1g, got '${SIZE}'"
SIZE_BYTES=$(numfmt --from=iec "${SIZE^^}")
OUT=${OUT:-${REPO_ROOT}/bench/results/mount-$(date +%Y%m%d-%H%M%S)}

IFS=',' read -r -a ARMS <<<"${ARMS_CSV}"
((${#ARMS[@]} > 0)) || bench_die "--arms is empty"
for arm in "${ARMS[@]}"; do
  [[ ",${ALL_ARMS}," == *",${arm},"* ]] || bench_die "unknown arm '${arm}' (expected some of ${ALL_ARMS})"
done
IFS=',' read -r -a SUITES <<<"${SUITES_CSV}"
for s in "${SUITES[@]}"; do
  [[ "${s}" == metadata || "${s}" == data ]] || bench_die "unknown suite '${s}' (expected metadata, data)"
done
has_arm() { [[ ",${ARMS_CSV}," == *",$1,"* ]]; }
has_suite() { [[ ",${SUITES_CSV}," == *",$1,"* ]]; }

# --- prerequisites ------------------------------------------------------------
require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the FUSE arms cannot run"
for tool in python3 mountpoint findmnt numfmt timeout; do
  command -v "${tool}" >/dev/null || bench_die "${tool} not found"
done

need_pkgs=()
if has_suite data && ! command -v fio >/dev/null; then need_pkgs+=(fio); fi
if has_arm fuse-overlayfs && ! command -v fuse-overlayfs >/dev/null; then need_pkgs+=(fuse-overlayfs); fi
if { has_arm passthrough_ll || has_arm passthrough_ll-60s; } && [[ ! -f "${PASSTHROUGH_SRC}" ]]; then
  need_pkgs+=(libfuse3-dev gcc pkg-config)
fi
if ((${#need_pkgs[@]})); then
  bench_log "installing ${need_pkgs[*]} (Debian packages)"
  apt-get install -y "${need_pkgs[@]}" >&2 ||
    { apt-get update >&2 && apt-get install -y "${need_pkgs[@]}" >&2; } ||
    bench_die "could not install ${need_pkgs[*]} with apt-get"
fi
if has_arm passthrough_ll || has_arm passthrough_ll-60s || has_arm fuse-overlayfs; then
  command -v fusermount3 >/dev/null || bench_die "fusermount3 not found (Debian package fuse3)"
fi

STRATA_BUILD=${STRATA_BUILD:-${REPO_ROOT}/build}
STRATA_BIN=${STRATA_BIN:-${STRATA_BUILD}/src/cli/strata}
MDBENCH_BIN=${MDBENCH_BIN:-${STRATA_BUILD}/bench/tools/mdbench}
if has_arm strata && [[ ! -x "${STRATA_BIN}" ]]; then
  bench_die "strata binary not found at ${STRATA_BIN}.
  Build it first:  cmake -S ${REPO_ROOT} -B ${STRATA_BUILD} -G Ninja && cmake --build ${STRATA_BUILD}
  or set STRATA_BUILD / STRATA_BIN (or leave strata out of --arms)."
fi
if has_suite metadata && [[ ! -x "${MDBENCH_BIN}" ]]; then
  bench_die "mdbench not found at ${MDBENCH_BIN}.
  Build it first:  cmake --build ${STRATA_BUILD} --target mdbench   (or set MDBENCH_BIN)"
fi
abs_path() { echo "$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")"; }
if has_arm strata; then STRATA_BIN=$(abs_path "${STRATA_BIN}"); fi
if has_suite metadata; then MDBENCH_BIN=$(abs_path "${MDBENCH_BIN}"); fi

# --- scratch, results, cleanup ------------------------------------------------
cleanup_install_trap
SCRATCH=/var/tmp/strata-bench-mount-$$
mkdir -p "${OUT}/logs"
OUT=$(cd "${OUT}" && pwd -P)
RAW=${OUT}/raw.tsv
META=${OUT}/meta.tsv
FAILURES=${OUT}/failures.tsv

# The arm being measured. Only one is mounted at a time; the cleanup at exit
# also sweeps every mount under SCRATCH and every daemon this run started.
ACTIVE_ARM=
ACTIVE_DIR=
ACTIVE_PID=
DAEMON_PIDS=()  # "pid:comm" of every FUSE daemon started, for the cleanup at exit

# Stop a daemon we started, by pid, only if that pid still runs the same program.
stop_daemon() {
  local pid=${1%%:*} comm=${1#*:} i
  [[ -r /proc/${pid}/comm && "$(cat "/proc/${pid}/comm" 2>/dev/null)" == "${comm}" ]] || return 0
  kill -TERM "${pid}" 2>/dev/null || return 0
  for ((i = 0; i < 50; i++)); do
    [[ -e /proc/${pid} && "$(cat "/proc/${pid}/comm" 2>/dev/null)" == "${comm}" ]] || return 0
    sleep 0.1
  done
  kill -KILL "${pid}" 2>/dev/null || true
}

# Unmount everything mounted at or below SCRATCH (deepest first), stop our
# daemons, then remove SCRATCH unless something could not be unmounted.
cleanup_scratch() {
  [[ -n "${SCRATCH}" && -d "${SCRATCH}" ]] || return 0
  local mp p left
  while read -r mp; do
    [[ -n "${mp}" ]] || continue
    bench_log "cleanup: unmounting ${mp}"
    case "$(findmnt -n -o FSTYPE --mountpoint "${mp}" 2>/dev/null)" in
      fuse*) fusermount3 -u "${mp}" 2>/dev/null || fusermount3 -uz "${mp}" 2>/dev/null || umount -l "${mp}" || true ;;
      *) umount "${mp}" 2>/dev/null || umount -l "${mp}" || true ;;
    esac
  done < <(findmnt -rn -o TARGET | awk -v s="${SCRATCH}" 'index($0, s "/") == 1' | sort -r)
  for p in "${DAEMON_PIDS[@]}"; do stop_daemon "${p}"; done
  left=$(findmnt -rn -o TARGET | awk -v s="${SCRATCH}" 'index($0, s "/") == 1' || true)
  if [[ -n "${left}" ]]; then
    bench_log "cleanup: still mounted, NOT removing ${SCRATCH}: ${left}"
    return 0
  fi
  rm -rf -- "${SCRATCH}"
}
cleanup_register cleanup_scratch
mkdir -p "${SCRATCH}"

printf 'round\tposition\tarm\tsuite\tconfig\tphase\tprocs\tvalue\tunit\tcache\n' >"${RAW}"
printf 'round\tarm\tsuite\tconfig\twhat\tlog\n' >"${FAILURES}"
: >"${META}"
meta() { printf '%s\t%s\n' "$1" "$2" >>"${META}"; }
raw() { local IFS=$'\t'; printf '%s\n' "$*" >>"${RAW}"; }
FAILED=0
# record_failure ROUND ARM SUITE CONFIG WHAT LOG: a measurement that failed is kept
# in failures.tsv and shown in the table; the run goes on and exits non-zero.
record_failure() {
  local IFS=$'\t'
  printf '%s\n' "$*" >>"${FAILURES}"
  FAILED=1
  bench_log "FAILED: round $1 $2 $3 $4: $5 — see $6"
  tail -n 15 "$6" >&2 || true
}

# --- passthrough_ll, built at run time ------------------------------------------
PT_BIN=
if has_arm passthrough_ll || has_arm passthrough_ll-60s; then
  PT_BIN=${SCRATCH}/passthrough_ll
  # shellcheck disable=SC2046  # pkg-config prints several words on purpose
  gcc -O2 -Wall -o "${PT_BIN}" "${PASSTHROUGH_SRC}" $(pkg-config --cflags --libs fuse3) \
    >"${OUT}/logs/passthrough_ll-build.log" 2>&1 ||
    bench_die "could not compile ${PASSTHROUGH_SRC}; see ${OUT}/logs/passthrough_ll-build.log"
fi

# --- environment record -------------------------------------------------------
strata_commit() {
  local sha
  if sha=$(git -C "${REPO_ROOT}" rev-parse --short HEAD 2>/dev/null); then
    # A dirty tree is not the commit it names: say so.
    if [[ -n "$(git -C "${REPO_ROOT}" status --porcelain --untracked-files=no -- src 2>/dev/null)" ]]; then
      sha="${sha}-dirty"
    fi
    echo "${sha}"
  else
    echo "uncommitted"
  fi
}
meta date_utc "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta kernel "$(uname -r)"
meta cpu_model "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
meta nproc "$(nproc)"
meta mem_total_kb "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta scratch_dir "${SCRATCH}"
meta scratch_fs "$(df -T "${SCRATCH}" | awk 'NR == 2 { print $2 " on " $1 }')"
# e.g. "discard" makes every freed block (an rmdir) a discard request: it shows in dir-remove.
meta scratch_mount_options "$(findmnt -n -o OPTIONS --target "${SCRATCH}")"
scratch_dev=$(df --output=source "${SCRATCH}" | tail -n 1)
scratch_disk=$(lsblk -no PKNAME "${scratch_dev}" 2>/dev/null | head -n 1 || true)
scratch_disk=/dev/${scratch_disk:-$(basename "${scratch_dev}")}
meta disk "$(lsblk -dn -o SIZE,ROTA,MODEL "${scratch_disk}" 2>/dev/null |
  awk -v d="${scratch_disk}" '{ m = ""; for (i = 3; i <= NF; i++) m = m (i > 3 ? " " : "") $i
    printf "%s, %s, rotational=%s, model=%s", d, $1, $2, (m == "" ? "-" : m) }')"
meta strata_commit "${STRATA_COMMIT:-$(strata_commit)}"
meta quick "${QUICK}"
meta rounds "${ROUNDS}"
meta arms "${ARMS_CSV}"
meta suites "${SUITES_CSV}"
meta items "${ITEMS}"
meta fio_size "${SIZE} (${SIZE_BYTES} bytes)"
meta fio_runtime_s "${RUNTIME}"
meta libfuse_version "$(pkg-config --modversion fuse3 2>/dev/null || echo unknown); $(fusermount3 -V 2>/dev/null || true)"
if has_suite data; then meta fio_version "$(fio --version)"; fi
if has_arm fuse-overlayfs; then
  meta fuse_overlayfs_version "$(fuse-overlayfs --version 2>/dev/null | awk '/fuse-overlayfs/ { print $NF; exit }')"
fi
if has_arm strata; then
  meta strata_bin "${STRATA_BIN}"
  meta strata_version "$("${STRATA_BIN}" --version 2>/dev/null | head -n1 || true)"
fi
if has_suite metadata; then meta mdbench_bin "${MDBENCH_BIN}"; fi
meta cmd_native "a plain directory on ${SCRATCH}'s filesystem"
meta cmd_overlayfs "mount -t overlay overlay -o lowerdir=L,upperdir=U,workdir=W MP (L empty)"
meta cmd_passthrough_ll "gcc -O2 ${PASSTHROUGH_SRC} \$(pkg-config --cflags --libs fuse3); passthrough_ll -f -o source=SRC MP (default: timeout=1, cache=auto)"
meta cmd_passthrough_ll-60s "passthrough_ll -f -o source=SRC -o timeout=60 MP (cache=auto)"
meta cmd_fuse-overlayfs "fuse-overlayfs -f -o lowerdir=L,upperdir=U,workdir=W MP (L empty)"
meta cmd_strata "strata --store S init; strata --store S mount --new --name ${STRATA_WS} MP (kernel entry/attr timeout 60 s); strata umount MP; strata workspace end ${STRATA_WS} --discard"
meta cmd_mdbench "mdbench --dir MP --items ${ITEMS} --procs P [--shared-dir] [--drop-caches] --json"
meta cmd_fio_common "fio --ioengine=psync --fallocate=none --invalidate=0 --output-format=json --filename=MP/<new name> --size=${SIZE}"
meta cmd_fio_seq_write "--rw=write --bs=1M --end_fsync=1 --numjobs=1 (a new file on a fresh filesystem)"
meta cmd_fio_seq_read "--rw=read --bs=1M --runtime=${RUNTIME} --numjobs=1 (stops at the end of the file or after ${RUNTIME} s)"
meta cmd_fio_rand_read "--rw=randread --bs=4k --norandommap --time_based --runtime=${RUNTIME} --numjobs=1|2 --group_reporting"
meta cmd_fio_rand_write "--rw=randwrite --bs=4k --norandommap --time_based --runtime=${RUNTIME} --end_fsync=1 --numjobs=1|2 --group_reporting (in the file the sequential write made)"
meta cache_metadata "warm: no cache drop, except config dirs-1p-cold: mdbench --drop-caches (sync; echo 3 > /proc/sys/vm/drop_caches before every phase, Cached kB after the drop in the mdbench JSON)"
meta cache_data "seq-write: durable (end_fsync=1); seq-read-warm: the whole file read once (cat) just before; seq-read-cold: sync; echo 3 > drop_caches just before (Cached kB after the drop in raw.tsv/logs); rand-read: the whole file read once just before; rand-write: durable (end_fsync=1)"

# --- the arms -----------------------------------------------------------------
# wait_mounted MP PID LOG: until MP is a mountpoint (10 s at most), failing early
# if the daemon PID exits.
wait_mounted() {
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

# arm_setup ARM DIR LOG: a fresh, empty filesystem of ARM under DIR; sets TARGET
# (the directory to benchmark in) and the ACTIVE_* globals.
TARGET=
arm_setup() {
  local arm=$1 dir=$2 log=$3
  ACTIVE_ARM=${arm}
  ACTIVE_DIR=${dir}
  ACTIVE_PID=
  mkdir -p "${dir}"
  case "${arm}" in
    native)
      mkdir "${dir}/data"
      TARGET=${dir}/data
      ;;
    overlayfs)
      mkdir "${dir}/lower" "${dir}/upper" "${dir}/work" "${dir}/mnt"
      mount -t overlay overlay -o "lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work" "${dir}/mnt" \
        >>"${log}" 2>&1 || bench_die "mount -t overlay failed; see ${log}"
      TARGET=${dir}/mnt
      ;;
    passthrough_ll | passthrough_ll-60s)
      mkdir "${dir}/src" "${dir}/mnt"
      local -a opts=(-o "source=${dir}/src")
      if [[ "${arm}" == passthrough_ll-60s ]]; then opts+=(-o timeout=60); fi
      "${PT_BIN}" -f "${opts[@]}" "${dir}/mnt" >>"${log}" 2>&1 &
      ACTIVE_PID=$!
      DAEMON_PIDS+=("${ACTIVE_PID}:passthrough_ll")
      wait_mounted "${dir}/mnt" "${ACTIVE_PID}" "${log}"
      TARGET=${dir}/mnt
      ;;
    fuse-overlayfs)
      mkdir "${dir}/lower" "${dir}/upper" "${dir}/work" "${dir}/mnt"
      fuse-overlayfs -f -o "lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work" "${dir}/mnt" \
        >>"${log}" 2>&1 &
      ACTIVE_PID=$!
      DAEMON_PIDS+=("${ACTIVE_PID}:fuse-overlayfs")
      wait_mounted "${dir}/mnt" "${ACTIVE_PID}" "${log}"
      TARGET=${dir}/mnt
      ;;
    strata)
      mkdir "${dir}/mnt"
      "${STRATA_BIN}" --store "${dir}/store" init >>"${log}" 2>&1 ||
        bench_die "strata init failed; see ${log}"
      "${STRATA_BIN}" --store "${dir}/store" mount --new --name "${STRATA_WS}" "${dir}/mnt" >>"${log}" 2>&1 ||
        bench_die "strata mount failed; see ${log}"
      mountpoint -q "${dir}/mnt" || bench_die "strata mount returned but ${dir}/mnt is not a mountpoint"
      # The daemon's pid, for the cleanup at exit should its unmount fail.
      ACTIVE_PID=$("${STRATA_BIN}" --store "${dir}/store" stats "${dir}/mnt" --json 2>>"${log}" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["daemon_pid"])' 2>>"${log}" || true)
      if [[ "${ACTIVE_PID}" =~ ^[0-9]+$ ]]; then
        DAEMON_PIDS+=("${ACTIVE_PID}:$(cat "/proc/${ACTIVE_PID}/comm" 2>/dev/null || echo strata)")
      fi
      TARGET=${dir}/mnt
      ;;
  esac
}

# arm_teardown LOG: unmount the active arm, wait for its daemon, remove its files.
arm_teardown() {
  local log=$1 dir=${ACTIVE_DIR} i
  case "${ACTIVE_ARM}" in
    native) ;;
    overlayfs) umount "${dir}/mnt" >>"${log}" 2>&1 || bench_die "umount ${dir}/mnt failed; see ${log}" ;;
    passthrough_ll | passthrough_ll-60s | fuse-overlayfs)
      fusermount3 -u "${dir}/mnt" >>"${log}" 2>&1 || bench_die "fusermount3 -u ${dir}/mnt failed; see ${log}"
      wait "${ACTIVE_PID}" || true  # a FUSE daemon's status after an unmount is not meaningful
      ;;
    strata)
      "${STRATA_BIN}" --store "${dir}/store" umount "${dir}/mnt" >>"${log}" 2>&1 ||
        bench_die "strata umount failed; see ${log}"
      "${STRATA_BIN}" --store "${dir}/store" workspace end "${STRATA_WS}" --discard >>"${log}" 2>&1 ||
        bench_die "strata workspace end failed; see ${log}"
      # `umount` waits for the daemon already; this only bounds a slow exit.
      for ((i = 0; i < 100; i++)); do
        if [[ -z "${ACTIVE_PID}" ]] || ! kill -0 "${ACTIVE_PID}" 2>/dev/null; then break; fi
        sleep 0.1
      done
      ;;
  esac
  ACTIVE_ARM=
  ACTIVE_PID=
  rm -rf -- "${dir}"
}

# strata_stats NAME: the strata daemon's per-operation counters into logs/NAME.json.
strata_stats() {
  [[ "${ACTIVE_ARM}" == strata ]] || return 0
  "${STRATA_BIN}" --store "${ACTIVE_DIR}/store" stats "${ACTIVE_DIR}/mnt" --json >"${OUT}/logs/$1.json" 2>/dev/null ||
    bench_log "warning: 'strata stats --json' failed for $1"
}

# --- metadata suite -----------------------------------------------------------
# config: procs, --shared-dir or not, --drop-caches or not
MD_CONFIGS=("dirs-1p" "dirs-2p" "shared-2p" "dirs-1p-cold")
md_args() {
  case "$1" in
    dirs-1p) echo "--procs 1" ;;
    dirs-2p) echo "--procs 2" ;;
    shared-2p) echo "--procs 2 --shared-dir" ;;
    dirs-1p-cold) echo "--procs 1 --drop-caches" ;;
  esac
}

# measure_metadata ROUND POSITION ARM CONFIG
measure_metadata() {
  local round=$1 pos=$2 arm=$3 config=$4
  local name=r${round}-${arm}-md-${config}
  local log=${OUT}/logs/${name}.log json=${OUT}/logs/${name}.json
  local -a args
  read -r -a args <<<"$(md_args "${config}")"
  arm_setup "${arm}" "${SCRATCH}/r${round}/${arm}-md-${config}" "${log}"
  local procs=${args[1]} rc=0
  # A generous bound so a hung mount ends the measurement instead of the run.
  timeout -k 10 3600 "${MDBENCH_BIN}" --dir "${TARGET}" --items "${ITEMS}" "${args[@]}" --json \
    >"${json}" 2>>"${log}" || rc=$?
  strata_stats "${name}-stats"
  if ((rc != 0)); then
    record_failure "${round}" "${arm}" metadata "${config}" "mdbench exit ${rc}" "${log}"
  else
    python3 - "${json}" "${round}" "${pos}" "${arm}" "${config}" "${procs}" >>"${RAW}" <<'EOF'
import json, sys
path, rnd, pos, arm, config, procs = sys.argv[1:]
for phase, v in json.load(open(path))["phases"].items():
    print("\t".join([rnd, pos, arm, "metadata", config, phase, procs, f"{v['ops_per_s']:.1f}", "ops/s", v["cache"]]))
EOF
    bench_log "round ${round} metadata ${config} ${arm}: $(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["phases"]
print(", ".join("%s %.0f" % (k, v["ops_per_s"]) for k, v in p.items()))' "${json}") ops/s"
  fi
  arm_teardown "${log}"
}

# --- data suite -----------------------------------------------------------------
# fio_phase ROUND POSITION ARM PHASE JOBS CACHE LOG FIO-ARGS...: one fio run; appends
# one line to raw.tsv (MB/s for sequential phases, IOPS for random ones).
fio_phase() {
  local round=$1 pos=$2 arm=$3 phase=$4 jobs=$5 cache=$6 log=$7
  shift 7
  local json=${OUT}/logs/r${round}-${arm}-data-${phase}-${jobs}j.json rc=0 value
  printf '\n=== fio %s, %s job(s), %s: fio %s\n' "${phase}" "${jobs}" "${cache}" "$*" >>"${log}"
  # --invalidate=0: fio would otherwise drop the file's pages before every job and
  # turn a warm read into a cold one; the cache state is set here, before each phase.
  timeout -k 10 $((RUNTIME + 900)) fio --ioengine=psync --fallocate=none --invalidate=0 --output-format=json \
    --output="${json}" --numjobs="${jobs}" --group_reporting "$@" >>"${log}" 2>&1 || rc=$?
  if ((rc == 0)); then
    value=$(python3 - "${json}" "${phase}" 2>>"${log}" <<'EOF'
import json, sys
path, phase = sys.argv[1:]
text = open(path).read()
job = json.loads(text[text.index("{"):])["jobs"][0]  # fio may print notes before the JSON
if job.get("error"):
    sys.exit(f"fio job error {job['error']}")
d = job["write" if "write" in phase else "read"]
if d["io_bytes"] <= 0:
    sys.exit("fio moved no data")
print(f"{d['bw_bytes'] / 1e6:.1f}\tMB/s" if phase.startswith("seq") else f"{d['iops']:.0f}\tIOPS")
EOF
    ) || rc=$?
  fi
  if ((rc != 0)); then
    record_failure "${round}" "${arm}" data "${jobs}j" "fio ${phase} exit ${rc}" "${log}"
    return 1
  fi
  raw "${round}" "${pos}" "${arm}" data "${jobs}j" "${phase}" "${jobs}" "${value}" "${cache}"
  bench_log "round ${round} data ${arm}: ${phase} ${jobs} job(s) ${value/$'\t'/ } (${cache})"
}

# measure_data ROUND POSITION ARM: all fio phases on one fresh filesystem.
measure_data() {
  local round=$1 pos=$2 arm=$3
  local log=${OUT}/logs/r${round}-${arm}-data.log
  arm_setup "${arm}" "${SCRATCH}/r${round}/${arm}-data" "${log}"
  # A name of its own for every write run (the filesystem is fresh anyway).
  local file=${TARGET}/fio-r${round}-${arm}.dat size
  local -a f=(--filename="${file}" --size="${SIZE}")
  local ok=1
  fio_phase "${round}" "${pos}" "${arm}" seq-write 1 durable "${log}" "${f[@]}" --name=seq-write \
    --rw=write --bs=1M --end_fsync=1 || ok=0
  if ((ok)); then
    size=$(stat -c %s "${file}")
    if ((size != SIZE_BYTES)); then
      record_failure "${round}" "${arm}" data 1j "seq-write left ${size} bytes, expected ${SIZE_BYTES}" "${log}"
      ok=0
    fi
  fi
  if ((ok)); then
    cat "${file}" >/dev/null
    fio_phase "${round}" "${pos}" "${arm}" seq-read-warm 1 warm "${log}" "${f[@]}" --name=seq-read \
      --rw=read --bs=1M --runtime="${RUNTIME}" || true
    drop_caches
    echo "Cached after drop: ${BENCH_CACHED_KB} kB" >>"${log}"
    fio_phase "${round}" "${pos}" "${arm}" seq-read-cold 1 "cold (Cached ${BENCH_CACHED_KB} kB after drop)" "${log}" \
      "${f[@]}" --name=seq-read --rw=read --bs=1M --runtime="${RUNTIME}" || true
    local jobs
    for jobs in 1 2; do
      cat "${file}" >/dev/null
      fio_phase "${round}" "${pos}" "${arm}" rand-read "${jobs}" warm "${log}" "${f[@]}" --name=rand-read \
        --rw=randread --bs=4k --norandommap --time_based --runtime="${RUNTIME}" || true
    done
    for jobs in 1 2; do
      fio_phase "${round}" "${pos}" "${arm}" rand-write "${jobs}" durable "${log}" "${f[@]}" --name=rand-write \
        --rw=randwrite --bs=4k --norandommap --time_based --runtime="${RUNTIME}" --end_fsync=1 || true
    done
  fi
  strata_stats "r${round}-${arm}-data-stats"
  arm_teardown "${log}"
}

# --- rounds -------------------------------------------------------------------
bench_log "results: ${OUT}"
bench_log "scratch: ${SCRATCH} ($(awk -F'\t' '$1 == "scratch_fs" { print $2 }' "${META}"))"
bench_log "arms: ${ARMS[*]}; suites: ${SUITES[*]}; rounds: ${ROUNDS}; items ${ITEMS}; fio file ${SIZE}, ${RUNTIME} s phases"

for ((round = 1; round <= ROUNDS; round++)); do
  # Rotate the arm order by one each round.
  order=()
  for ((i = 0; i < ${#ARMS[@]}; i++)); do
    order+=("${ARMS[(i + round - 1) % ${#ARMS[@]}]}")
  done
  meta "order_r${round}" "${order[*]}"
  bench_log "round ${round}/${ROUNDS}: order ${order[*]}"
  if has_suite metadata; then
    for config in "${MD_CONFIGS[@]}"; do
      for ((i = 0; i < ${#order[@]}; i++)); do
        measure_metadata "${round}" "$((i + 1))" "${order[i]}" "${config}"
      done
    done
  fi
  if has_suite data; then
    for ((i = 0; i < ${#order[@]}; i++)); do
      measure_data "${round}" "$((i + 1))" "${order[i]}"
    done
  fi
  rm -rf -- "${SCRATCH:?}/r${round}"
done
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta date_utc_end "$(date -u +%Y-%m-%dT%H:%M:%SZ)"

python3 "${SCRIPT_DIR}/report.py" "${OUT}"
bench_log "done: ${OUT}/results.json, ${OUT}/table.md"
if ((FAILED)); then
  bench_die "some measurements failed (listed in ${FAILURES} and in the table)"
fi
