#!/usr/bin/env bash
# bench/mount/run.sh — a mounted strata workspace against native ext4, kernel overlayfs, passthrough_ll and fuse-overlayfs.
#
# Usage: bench/mount/run.sh [--quick] [--rounds N] [--out DIR] [--arms LIST] [--suites LIST]
#                           [--items N] [--size SIZE] [--runtime SECS] [--md-configs LIST] [--data-phases LIST]
#
#   --quick         500 items, 128 MiB file, 3 s per fio phase, 1 round: a smoke run of a few minutes
#   --rounds N      rounds to run (default 3, quick 1)
#   --out DIR       results folder (default bench/results/mount-<timestamp>)
#   --arms LIST     comma-separated subset of native,overlayfs,passthrough_ll,passthrough_ll-60s,
#                   passthrough_ll-60s-perm,fuse-overlayfs,strata (default all)
#   --suites LIST   metadata,data (default both)
#   --items N       mdbench items per process (default 5000, quick 500)
#   --size SIZE     fio file size (default 1g, quick 128m)
#   --runtime SECS  bound on each fio read phase and length of the random phases (default 15, quick 3)
#   --md-configs LIST  metadata configurations, a subset of dirs-1p,dirs-2p,shared-2p,dirs-1p-cold (default all)
#   --data-phases LIST data phases, a subset of seq-write,seq-read-warm,seq-read-cold,rand-read-1j,
#                      rand-read-2j,rand-write-1j,rand-write-2j (default all; seq-write always runs)
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
#   passthrough_ll-60s-perm  the same plus -o default_permissions, the permission model
#                       strata mounts with: the kernel checks permissions and fetches a
#                       directory's attributes again after every change in it, one more
#                       round trip per create, rename or removal
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
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { bench_usage 2 24; }

# --- arguments ----------------------------------------------------------------
ARMS_CSV=${BENCH_WRITABLE_ARMS}
SUITES_CSV="metadata,data"
MD_CONFIGS_CSV="dirs-1p,dirs-2p,shared-2p,dirs-1p-cold"
readonly ALL_DATA_PHASES="seq-write,seq-read-warm,seq-read-cold,rand-read-1j,rand-read-2j,rand-write-1j,rand-write-2j"
DATA_PHASES_CSV=${ALL_DATA_PHASES}
ITEMS=
SIZE=
RUNTIME=
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
    --suites) SUITES_CSV=$(bench_optarg "$@"); shift ;;
    --md-configs) MD_CONFIGS_CSV=$(bench_optarg "$@"); shift ;;
    --data-phases) DATA_PHASES_CSV=$(bench_optarg "$@"); shift ;;
    --items) ITEMS=$(bench_optarg "$@"); shift ;;
    --size) SIZE=$(bench_optarg "$@"); shift ;;
    --runtime) RUNTIME=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done

if ((QUICK)); then
  ROUNDS=${ROUNDS:-1}; ITEMS=${ITEMS:-500}; SIZE=${SIZE:-128m}; RUNTIME=${RUNTIME:-3}
else
  ROUNDS=${ROUNDS:-3}; ITEMS=${ITEMS:-5000}; SIZE=${SIZE:-1g}; RUNTIME=${RUNTIME:-15}
fi
bench_check_int --rounds "${ROUNDS}" --items "${ITEMS}" --runtime "${RUNTIME}"
[[ "${SIZE}" =~ ^[1-9][0-9]*[kmgKMG]$ ]] || bench_die "--size must look like 128m or 1g, got '${SIZE}'"
SIZE_BYTES=$(numfmt --from=iec "${SIZE^^}")

bench_parse_arms "${BENCH_WRITABLE_ARMS}" "${ARMS_CSV}"
IFS=',' read -r -a SUITES <<<"${SUITES_CSV}"
for s in "${SUITES[@]}"; do
  [[ "${s}" == metadata || "${s}" == data ]] || bench_die "unknown suite '${s}' (expected metadata, data)"
done
has_suite() { [[ ",${SUITES_CSV}," == *",$1,"* ]]; }
IFS=',' read -r -a MD_CONFIGS <<<"${MD_CONFIGS_CSV}"
for c in "${MD_CONFIGS[@]}"; do
  [[ ",dirs-1p,dirs-2p,shared-2p,dirs-1p-cold," == *",${c},"* ]] || bench_die "unknown metadata configuration '${c}'"
done

IFS=',' read -r -a _phases <<<"${DATA_PHASES_CSV}"
for p in "${_phases[@]}"; do
  [[ ",${ALL_DATA_PHASES}," == *",${p},"* ]] || bench_die "unknown data phase '${p}' (expected some of ${ALL_DATA_PHASES})"
done
# The sequential write makes the file every other phase works on.
[[ ",${DATA_PHASES_CSV}," == *",seq-write,"* ]] || DATA_PHASES_CSV="seq-write,${DATA_PHASES_CSV}"
data_phase() { [[ ",${DATA_PHASES_CSV}," == *",$1,"* ]]; }

# --- prerequisites ------------------------------------------------------------
require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the FUSE arms cannot run"
for tool in python3 mountpoint findmnt numfmt timeout; do
  command -v "${tool}" >/dev/null || bench_die "${tool} not found"
done
if has_suite data; then bench_install fio:fio; fi
if has_arm fuse-overlayfs; then bench_install fuse-overlayfs:fuse-overlayfs fusermount3:fuse3; fi
if has_arm strata; then bench_find_bin STRATA_BIN src/cli/strata strata; fi
if has_suite metadata; then bench_find_bin MDBENCH_BIN bench/tools/mdbench mdbench; fi

# --- scratch, results, cleanup ------------------------------------------------
cleanup_install_trap
bench_results_dir mount
bench_scratch mount
RAW=${OUT}/raw.tsv
FAILURES=${OUT}/failures.tsv

printf 'round\tposition\tarm\tsuite\tconfig\tphase\tprocs\tvalue\tunit\tcache\n' >"${RAW}"
printf 'round\tarm\tsuite\tconfig\twhat\tlog\n' >"${FAILURES}"
bench_meta_open "${OUT}/meta.tsv"
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
if has_arm passthrough_ll || has_arm passthrough_ll-60s || has_arm passthrough_ll-60s-perm; then
  BENCH_PT_BIN=${SCRATCH}/passthrough_ll
  bench_build_passthrough "${BENCH_PT_BIN}" "${OUT}/logs/passthrough_ll-build.log"
fi

# --- environment record -------------------------------------------------------
bench_meta_env
# e.g. "discard" makes every freed block (an rmdir) a discard request: it shows in dir-remove.
meta scratch_mount_options "$(findmnt -n -o OPTIONS --target "${SCRATCH}")"
scratch_dev=$(df --output=source "${SCRATCH}" | tail -n 1)
scratch_disk=$(lsblk -no PKNAME "${scratch_dev}" 2>/dev/null | head -n 1 || true)
scratch_disk=/dev/${scratch_disk:-$(basename "${scratch_dev}")}
meta disk "$(lsblk -dn -o SIZE,ROTA,MODEL "${scratch_disk}" 2>/dev/null |
  awk -v d="${scratch_disk}" '{ m = ""; for (i = 3; i <= NF; i++) m = m (i > 3 ? " " : "") $i
    printf "%s, %s, rotational=%s, model=%s", d, $1, $2, (m == "" ? "-" : m) }')"
meta arms "${ARMS_CSV}"
meta suites "${SUITES_CSV}"
meta md_configs "${MD_CONFIGS_CSV}"
meta data_phases "${DATA_PHASES_CSV}"
meta items "${ITEMS}"
meta fio_size "${SIZE} (${SIZE_BYTES} bytes)"
meta fio_runtime_s "${RUNTIME}"
if has_suite data; then meta fio_version "$(fio --version)"; fi
if has_suite metadata; then meta mdbench_bin "${MDBENCH_BIN}"; fi
bench_meta_writable_arms
meta cmd_mdbench "mdbench --dir MP --items ${ITEMS} --procs P [--shared-dir] [--drop-caches] --json-lines"
meta cmd_fio_common "fio --ioengine=psync --fallocate=none --invalidate=0 --output-format=json --filename=MP/<new name> --size=${SIZE}"
meta cmd_fio_seq_write "--rw=write --bs=1M --end_fsync=1 --numjobs=1 (a new file on a fresh filesystem)"
meta cmd_fio_seq_read "--rw=read --bs=1M --runtime=${RUNTIME} --numjobs=1 (stops at the end of the file or after ${RUNTIME} s)"
meta cmd_fio_rand_read "--rw=randread --bs=4k --norandommap --time_based --runtime=${RUNTIME} --numjobs=1|2 --group_reporting"
meta cmd_fio_rand_write "--rw=randwrite --bs=4k --norandommap --time_based --runtime=${RUNTIME} --end_fsync=1 --numjobs=1|2 --group_reporting (in the file the sequential write made)"
meta cache_metadata "warm: no cache drop, except config dirs-1p-cold: mdbench --drop-caches (sync; echo 3 > /proc/sys/vm/drop_caches before every phase, Cached kB after the drop in the mdbench JSON)"
meta cache_data "seq-write: durable (end_fsync=1); seq-read-warm: the whole file read once (cat) just before; seq-read-cold: sync; echo 3 > drop_caches just before (Cached kB after the drop in raw.tsv/logs); rand-read: the whole file read once just before; rand-write: durable (end_fsync=1)"

# --- the arms -----------------------------------------------------------------
# bench_arm_up / bench_arm_down (bench/lib.sh) make and remove a fresh filesystem
# of an arm; BENCH_TARGET is the directory to benchmark in.

# strata_stats NAME: the strata daemon's per-operation counters into logs/NAME.json.
strata_stats() { bench_strata_stats "${OUT}/logs/$1.json"; }

# --- metadata suite -----------------------------------------------------------
# config: procs, --shared-dir or not, --drop-caches or not
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
  local log=${OUT}/logs/${name}.log json=${OUT}/logs/${name}.jsonl
  local -a args
  read -r -a args <<<"$(md_args "${config}")"
  bench_arm_up "${arm}" "${SCRATCH}/r${round}/${arm}-md-${config}" "${log}"
  local procs=${args[1]} rc=0
  # A generous bound so a hung mount ends the measurement instead of the run.
  timeout -k 10 3600 "${MDBENCH_BIN}" --dir "${BENCH_TARGET}" --items "${ITEMS}" "${args[@]}" --json-lines \
    >"${json}" 2>>"${log}" || rc=$?
  strata_stats "${name}-stats"
  if ((rc != 0)); then
    record_failure "${round}" "${arm}" metadata "${config}" "mdbench exit ${rc}" "${log}"
  else
    # One JSON object per phase and line.
    python3 - "${json}" "${round}" "${pos}" "${arm}" "${config}" "${procs}" >>"${RAW}" <<'EOF'
import json, sys
path, rnd, pos, arm, config, procs = sys.argv[1:]
for line in open(path):
    v = json.loads(line)
    print("\t".join([rnd, pos, arm, "metadata", config, v["phase"], procs, f"{v['ops_per_s']:.1f}", "ops/s",
                     v["cache"]]))
EOF
    bench_log "round ${round} metadata ${config} ${arm}: $(awk -F'\t' -v r="${round}" -v a="${arm}" -v c="${config}" \
      '$1 == r && $3 == a && $4 == "metadata" && $5 == c { printf "%s%s %.0f", sep, $6, $8; sep = ", " }' "${RAW}") ops/s"
  fi
  bench_arm_down "${log}"
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
  bench_arm_up "${arm}" "${SCRATCH}/r${round}/${arm}-data" "${log}"
  # A name of its own for every write run (the filesystem is fresh anyway).
  local file=${BENCH_TARGET}/fio-r${round}-${arm}.dat size
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
    if data_phase seq-read-warm; then
      fio_phase "${round}" "${pos}" "${arm}" seq-read-warm 1 warm "${log}" "${f[@]}" --name=seq-read \
        --rw=read --bs=1M --runtime="${RUNTIME}" || true
    fi
    if data_phase seq-read-cold; then
      drop_caches
      echo "Cached after drop: ${BENCH_CACHED_KB} kB" >>"${log}"
      fio_phase "${round}" "${pos}" "${arm}" seq-read-cold 1 "cold (Cached ${BENCH_CACHED_KB} kB after drop)" "${log}" \
        "${f[@]}" --name=seq-read --rw=read --bs=1M --runtime="${RUNTIME}" || true
    fi
    local jobs
    for jobs in 1 2; do
      data_phase "rand-read-${jobs}j" || continue
      cat "${file}" >/dev/null
      fio_phase "${round}" "${pos}" "${arm}" rand-read "${jobs}" warm "${log}" "${f[@]}" --name=rand-read \
        --rw=randread --bs=4k --norandommap --time_based --runtime="${RUNTIME}" || true
    done
    for jobs in 1 2; do
      data_phase "rand-write-${jobs}j" || continue
      fio_phase "${round}" "${pos}" "${arm}" rand-write "${jobs}" durable "${log}" "${f[@]}" --name=rand-write \
        --rw=randwrite --bs=4k --norandommap --time_based --runtime="${RUNTIME}" --end_fsync=1 || true
    done
  fi
  strata_stats "r${round}-${arm}-data-stats"
  bench_arm_down "${log}"
}

# --- rounds -------------------------------------------------------------------
bench_log "results: ${OUT}"
bench_log "scratch: ${SCRATCH} ($(awk -F'\t' '$1 == "scratch_fs" { print $2 }' "${BENCH_META}"))"
bench_log "arms: ${ARMS[*]}; suites: ${SUITES[*]}; rounds: ${ROUNDS}; items ${ITEMS}; fio file ${SIZE}, ${RUNTIME} s phases"

for ((round = 1; round <= ROUNDS; round++)); do
  # Rotate the arm order by one each round.
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
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
