#!/usr/bin/env bash
# bench/read/run.sh — reading a committed file: strata against native ext4, passthrough_ll and squashfuse.
#
# Usage: bench/read/run.sh [--quick] [--rounds N] [--size-mib M] [--runtime SECS] [--arms LIST]
#                          [--phases LIST] [--out DIR]
#
#   --quick         256 MiB file, 1 round, 3 s random phase (a smoke run of a few minutes)
#   --rounds N      rounds (default 3, quick 1); arms interleaved, their order rotated each round
#   --size-mib M    size of the file (default 1024, quick 256): half random bytes, half base64 text
#   --runtime SECS  length of the random 4 KiB read phase (default 10, quick 3)
#   --arms LIST     comma-separated subset of native,passthrough_ll,squashfuse,strata,strata-enc,
#                   strata-enc-kept (default all but the two strata-enc)
#   --phases LIST   comma-separated subset of the phases below (default all)
#   --out DIR       results folder (default bench/results/read-<timestamp>)
#
# Environment: STRATA_BUILD (default <repo>/build) or STRATA_BIN: the strata binary;
# FOLIO_ORDERS_BIN: bench/tools/folio_orders (default STRATA_BUILD's, built there
# with ninja if missing);
# STRATA_MOUNT_ARGS: extra arguments for `strata mount` (e.g. "--chunk-cache-mib 256").
#
# One file, made once under /var/tmp/strata-bench-read-<pid> (removed at exit):
#   native          the file on the ext4 that holds /var/tmp
#   passthrough_ll  libfuse 3.14's example (compiled at run time from libfuse3-dev) over the
#                   directory holding the file, -o timeout=60 (like strata's 60 s), cache=auto
#   squashfuse      squashfuse (Debian) over `mksquashfs -comp zstd` of that directory
#   strata          the directory imported into a store (`strata import`), served by
#                   `strata mount --read-only bench`
#   strata-enc      the same in an encrypted store (`strata init --encrypt`), so that
#                   encryption's cost is a ratio in the same run (the mount unlocks the
#                   store once, before the timed read)
#   strata-enc-kept the same encrypted store, its key kept unlocked (`strata key unlock`,
#                   once, not timed) and mounted with no passphrase (no scrypt at mount)
# Every measurement mounts its FUSE arm afresh (no daemon-side cache carries over),
# and a cold one drops the page cache first and records what stayed cached: the
# kernel's "Cached" figure and `fincore` of the file, the image and the packs.
# Phases (fio, psync, --invalidate=0 so fio never drops or keeps the cache itself):
#   cold-seq-1m-1j, cold-seq-128k-1j   1 reader, sequential, the whole file, 1 MiB / 128 KiB requests
#   cold-seq-1m-4j, cold-seq-128k-4j   4 readers of the same file at once, each reads it all;
#                                      MB/s counts every reader's bytes
#   cold-rand-4k-1j                    random 4 KiB reads for RUNTIME s, starting cold (IOPS)
#   warm-seq-1m-1j                     the whole file read once (cat), then read sequentially;
#                                      between the two, bench/tools/folio_orders records how
#                                      the file's cached pages are grouped into folios
#                                      (logs/<name>-folios.json; read-only, reads nothing in)
# After each strata measurement `strata stats MP --json` is kept: demands, fetches,
# waits on an in-flight fetch, read-ahead issued and used, cache hits and misses,
# bytes verified.
# Output: raw.tsv, results.json, table.md (printed), meta.tsv, logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

readonly ALL_ARMS="native,passthrough_ll,squashfuse,strata,strata-enc,strata-enc-kept"
readonly DEFAULT_ARMS="native,passthrough_ll,squashfuse,strata"
readonly ALL_PHASES="cold-seq-1m-1j,cold-seq-128k-1j,cold-seq-1m-4j,cold-seq-128k-4j,cold-rand-4k-1j,warm-seq-1m-1j"
PHASES_CSV=${ALL_PHASES}

usage() { bench_usage 2 18; }

SIZE_MIB=''
RUNTIME=''
ARMS_CSV=${DEFAULT_ARMS}
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --size-mib) SIZE_MIB=$(bench_optarg "$@"); shift ;;
    --runtime) RUNTIME=$(bench_optarg "$@"); shift ;;
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
    --phases) PHASES_CSV=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  ROUNDS=${ROUNDS:-1} SIZE_MIB=${SIZE_MIB:-256} RUNTIME=${RUNTIME:-3}
else
  ROUNDS=${ROUNDS:-3} SIZE_MIB=${SIZE_MIB:-1024} RUNTIME=${RUNTIME:-10}
fi
bench_check_int --rounds "${ROUNDS}" --size-mib "${SIZE_MIB}" --runtime "${RUNTIME}"
bench_parse_arms "${ALL_ARMS}" "${ARMS_CSV}"
IFS=',' read -r -a PHASES <<<"${PHASES_CSV}"
for p in "${PHASES[@]}"; do
  [[ ",${ALL_PHASES}," == *",${p},"* ]] || bench_die "unknown phase '${p}' (expected some of ${ALL_PHASES})"
done

# --- prerequisites ------------------------------------------------------------
require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the FUSE arms cannot run"
bench_install fio:fio fincore:util-linux
if has_arm squashfuse; then bench_install mksquashfs:squashfs-tools squashfuse:squashfuse; fi
if has_arm strata || has_arm strata-enc || has_arm strata-enc-kept; then bench_find_bin STRATA_BIN src/cli/strata strata; fi
# folio_orders, for the warm phase: FOLIO_ORDERS_BIN, else the build directory's,
# built there with ninja if missing (as bench/run does for mdbench).
if [[ " ${PHASES[*]} " == *" warm-seq-1m-1j "* ]]; then
  folio_build=${STRATA_BUILD:-${REPO_ROOT}/build}
  if [[ -z "${FOLIO_ORDERS_BIN:-}" && ! -x "${folio_build}/bench/tools/folio_orders" &&
    -f "${folio_build}/build.ninja" ]]; then
    bench_log "building folio_orders in ${folio_build}"
    ninja -C "${folio_build}" folio_orders >&2 || bench_die "could not build folio_orders in ${folio_build}"
  fi
  bench_find_bin FOLIO_ORDERS_BIN bench/tools/folio_orders folio_orders
fi
read -r -a STRATA_MOUNT_EXTRA <<<"${STRATA_MOUNT_ARGS:-}"

cleanup_install_trap
bench_results_dir read
RAW=${OUT}/raw.tsv
printf 'round\tposition\tarm\tphase\tvalue\tunit\tcached_kb_after_drop\tbacking_resident_bytes\tstats\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"

bench_scratch read
mkdir -p "${SCRATCH}/data" "${SCRATCH}/mnt"
MP=${SCRATCH}/mnt
bench_track_mount "${MP}"
DAEMON_PID=

# --- the data, the image, the store --------------------------------------------
FILE_NAME=big.bin
DATA=${SCRATCH}/data/${FILE_NAME}
bench_make_mixed_data "${DATA}" "${SIZE_MIB}"

PT_BIN=${SCRATCH}/passthrough_ll
if has_arm passthrough_ll; then
  bench_build_passthrough "${PT_BIN}" "${OUT}/logs/passthrough_ll-build.log"
fi
IMAGE=${SCRATCH}/image.sqfs
if has_arm squashfuse; then
  bench_log "mksquashfs -comp zstd"
  mksquashfs "${SCRATCH}/data" "${IMAGE}" -comp zstd -noappend -quiet >"${OUT}/logs/mksquashfs.log" 2>&1 ||
    bench_die "mksquashfs failed; see ${OUT}/logs/mksquashfs.log"
fi
STORE=${SCRATCH}/store
strata() { "${STRATA_BIN}" --store "${STORE}" "$@"; }
if has_arm strata; then
  bench_log "strata import"
  strata init >"${OUT}/logs/strata-init.log" 2>&1
  strata import "${SCRATCH}/data" --branch bench -m data --json >"${OUT}/logs/strata-import.json" 2>&1 ||
    bench_die "strata import failed; see ${OUT}/logs/strata-import.json"
  strata stats --json >"${OUT}/logs/strata-store-stats.json"
fi
# Fixed, documented benchmark passphrase: the secret is irrelevant here.
STORE_ENC=${SCRATCH}/store-enc
strata_enc() { STRATA_PASSWORD="strata-bench-not-a-secret" "${STRATA_BIN}" --store "${STORE_ENC}" "$@"; }
# The kept arm's mounts get the key from the kernel keyring, no passphrase.
strata_enc_kept() { env -u STRATA_PASSWORD "${STRATA_BIN}" --store "${STORE_ENC}" "$@"; }
if has_arm strata-enc || has_arm strata-enc-kept; then
  bench_log "strata import (encrypted store)"
  strata_enc init --encrypt >"${OUT}/logs/strata-enc-init.log" 2>&1
  strata_enc import "${SCRATCH}/data" --branch bench -m data --json >"${OUT}/logs/strata-enc-import.json" 2>&1 ||
    bench_die "strata import into the encrypted store failed; see ${OUT}/logs/strata-enc-import.json"
fi
if has_arm strata-enc-kept; then
  strata_enc key unlock --for 2h >"${OUT}/logs/strata-enc-unlock.log" 2>&1 ||
    bench_die "strata key unlock failed; see ${OUT}/logs/strata-enc-unlock.log"
fi

# --- environment record -------------------------------------------------------
bench_meta_env
meta strata_mount_args "${STRATA_MOUNT_ARGS:-}"
meta size_mib "${SIZE_MIB}"
meta data "first half head -c /dev/urandom; second half base64 -w 76 of /dev/urandom"
meta fio_version "$(fio --version)"
meta libfuse_version "$(pkg-config --modversion fuse3 2>/dev/null || echo unknown)"
meta squashfuse_version "$(dpkg-query -W -f '${Version}' squashfuse 2>/dev/null || echo unknown)"
meta squashfs_tools_version "$(dpkg-query -W -f '${Version}' squashfs-tools 2>/dev/null || echo unknown)"
meta cmd_passthrough_ll "gcc -O2 ${BENCH_PASSTHROUGH_SRC}; passthrough_ll -f -o source=DATA -o timeout=60 MP"
meta cmd_squashfuse "mksquashfs DATA image.sqfs -comp zstd -noappend; squashfuse -f image.sqfs MP"
meta cmd_strata "strata init; strata import DATA --branch bench; strata mount --read-only bench ${STRATA_MOUNT_ARGS:-}MP"
meta cmd_strata_enc "STRATA_PASSWORD=<fixed> strata init --encrypt; then as strata, with STRATA_PASSWORD=<fixed>"
meta cmd_strata_enc_kept "the strata-enc store; STRATA_PASSWORD=<fixed> strata key unlock --for 2h once, then as strata with no STRATA_PASSWORD; key lock at the end"
meta cmd_fio "fio --name=read --filename=FILE --ioengine=psync --invalidate=0 --readonly --rw=read|randread --bs=1m|128k|4k --numjobs=1|4 --group_reporting [--time_based --runtime=${RUNTIME} --norandommap]"
meta cache_cold "sync; echo 3 > /proc/sys/vm/drop_caches, then Cached kB and fincore of the backing files recorded"
meta cache_warm "cat FILE > /dev/null just before"
meta folios_warm "after the warming cat, before fio: bench/tools/folio_orders --json FILE > logs/<name>-folios.json (mmap + mincore, touches only cached pages, folio order from /proc/self/pagemap + /proc/kpageflags; its open is one more open of FILE, as fio's is)"

# --- the arms -----------------------------------------------------------------
wait_mounted() {
  local i
  for ((i = 0; i < 100; i++)); do
    mountpoint -q "${MP}" && return 0
    kill -0 "${DAEMON_PID}" 2>/dev/null || bench_die "the daemon exited before mounting; see $1"
    sleep 0.1
  done
  bench_die "${MP} was not mounted after 10 s; see $1"
}

# arm_up ARM LOG: mounts ARM (fresh daemon) and sets FILE, the file to read.
FILE=
arm_up() {
  local arm=$1 log=$2
  DAEMON_PID=
  case "${arm}" in
    native) FILE=${DATA}; return ;;
    passthrough_ll)
      "${PT_BIN}" -f -o "source=${SCRATCH}/data" -o timeout=60 "${MP}" >>"${log}" 2>&1 &
      DAEMON_PID=$!
      bench_track_pid "${DAEMON_PID}"
      ;;
    squashfuse)
      squashfuse -f "${IMAGE}" "${MP}" >>"${log}" 2>&1 &
      DAEMON_PID=$!
      bench_track_pid "${DAEMON_PID}"
      ;;
    strata | strata-enc | strata-enc-kept)
      local run=strata
      [[ "${arm}" == strata-enc ]] && run=strata_enc
      [[ "${arm}" == strata-enc-kept ]] && run=strata_enc_kept
      "${run}" mount --read-only bench "${STRATA_MOUNT_EXTRA[@]}" "${MP}" >>"${log}" 2>&1 || bench_die "${arm} mount failed; see ${log}"
      DAEMON_PID=$("${run}" stats "${MP}" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["daemon_pid"])')
      bench_track_pid "${DAEMON_PID}"
      ;;
  esac
  wait_mounted "${log}"
  FILE=${MP}/${FILE_NAME}
}

arm_down() {
  local arm=$1 log=$2 i
  case "${arm}" in
    native) return ;;
    strata) strata umount "${MP}" >>"${log}" 2>&1 || bench_die "strata umount failed; see ${log}" ;;
    strata-enc | strata-enc-kept) strata_enc umount "${MP}" >>"${log}" 2>&1 || bench_die "${arm} umount failed; see ${log}" ;;
    *) fusermount3 -u "${MP}" >>"${log}" 2>&1 || bench_die "fusermount3 -u failed; see ${log}" ;;
  esac
  for ((i = 0; i < 100; i++)); do
    kill -0 "${DAEMON_PID}" 2>/dev/null || break
    sleep 0.1
  done
  DAEMON_PID=
}

# Bytes of the backing files (data file, image, packs) in the page cache.
backing_resident() {
  local -a files=("${DATA}")
  [[ -f "${IMAGE}" ]] && files+=("${IMAGE}")
  [[ -d "${STORE}/packs" ]] && files+=("${STORE}"/packs/*)
  [[ -d "${STORE_ENC}/packs" ]] && files+=("${STORE_ENC}"/packs/*)
  fincore --bytes --noheadings --output RES "${files[@]}" | awk '{ s += $1 } END { print s + 0 }'
}

# record_folios NAME LOG: how FILE's cached pages are grouped into folios, to
# logs/NAME-folios.json, with a one-line summary in LOG and on stderr. A failure
# is a warning: it says nothing about the read that follows.
record_folios() {
  local name=$1 log=$2 json=${OUT}/logs/$1-folios.json summary
  if ! "${FOLIO_ORDERS_BIN}" --json "${FILE}" >"${json}" 2>>"${log}"; then
    bench_log "warning: folio_orders failed for ${name}; see ${log}"
    return 0
  fi
  summary=$(python3 - "${json}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
orders = {int(k): v for k, v in r["orders"].items()}
large = sum(v["share"] for k, v in orders.items() if k >= 4)
print(f"page cache: {r['resident_pages']} of {r['pages']} pages resident in {r['folios']} folios; "
      f"order >= 4 holds {100 * large:.1f} % of resident bytes; orders " +
      (", ".join(f"{k}: {v['folios']}" for k, v in sorted(orders.items())) or "none"))
PY
  )
  printf 'folio_orders %s\n' "${summary}" >>"${log}"
  bench_log "${name}: ${summary}"
}

fio_args() {
  local phase=$1
  local -a a=(--name=read "--filename=${FILE}" --ioengine=psync --invalidate=0 --readonly --group_reporting
    --output-format=json)
  case "${phase}" in
    *-seq-1m-*) a+=(--rw=read --bs=1m) ;;
    *-seq-128k-*) a+=(--rw=read --bs=128k) ;;
    *-rand-4k-*) a+=(--rw=randread --bs=4k --norandommap --time_based "--runtime=${RUNTIME}") ;;
  esac
  case "${phase}" in
    *-4j) a+=(--numjobs=4) ;;
    *) a+=(--numjobs=1) ;;
  esac
  printf '%s\n' "${a[@]}"
}

# measure ROUND POSITION ARM PHASE
measure() {
  local round=$1 pos=$2 arm=$3 phase=$4
  local name=r${round}-${arm}-${phase}
  local log=${OUT}/logs/${name}.log json=${OUT}/logs/${name}.json stats=-
  local -a args
  drop_caches  # every phase starts from the same state, also the warm one
  arm_up "${arm}" "${log}"
  mapfile -t args < <(fio_args "${phase}")
  local cached=- resident=-
  if [[ "${phase}" == warm-* ]]; then
    cat "${FILE}" >/dev/null
    record_folios "${name}" "${log}"
  else
    drop_caches
    cached=${BENCH_CACHED_KB}
    resident=$(backing_resident)
  fi
  timeout -k 10 1800 fio "${args[@]}" >"${json}" 2>>"${log}" || bench_die "fio failed for ${name}; see ${log}"
  if [[ "${arm}" == strata* ]]; then
    stats=logs/${name}-stats.json
    "${STRATA_BIN}" stats "${MP}" --json >"${OUT}/${stats}" 2>>"${log}" || bench_log "warning: strata stats failed for ${name}"
  fi
  arm_down "${arm}" "${log}"
  local value unit
  IFS=$'\t' read -r value unit < <(python3 - "${json}" "${phase}" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]["read"]
if "rand" in sys.argv[2]:
    print("%.0f\tIOPS" % job["iops"])
else:
    print("%.1f\tMB/s" % (job["bw_bytes"] / 1e6))
PY
  )
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${round}" "${pos}" "${arm}" "${phase}" "${value}" "${unit}" \
    "${cached}" "${resident}" "${stats}" >>"${RAW}"
  bench_log "round ${round} ${phase} ${arm}: ${value} ${unit} (cached after drop ${cached} kB, backing resident ${resident} B)"
}

for ((round = 1; round <= ROUNDS; round++)); do
  # Rotate the arms' order from round to round; within a phase, arms alternate.
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  for phase in "${PHASES[@]}"; do
    pos=0
    for arm in "${order[@]}"; do
      pos=$((pos + 1))
      measure "${round}" "${pos}" "${arm}" "${phase}"
    done
  done
done
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
if has_arm strata-enc-kept; then strata_enc key lock >/dev/null || bench_log "warning: strata key lock failed"; fi

python3 "${SCRIPT_DIR}/report.py" "${OUT}" | tee "${OUT}/table.md"
