#!/usr/bin/env bash
# bench/remote/repack.sh — a remote store of many tiny pushes, before and after `gc --remote`
# repacks it: pack count, and the time another machine takes to mount a branch of it.
#
# Usage: bench/remote/repack.sh [--quick] [--pushes N] [--rounds R] [--out DIR]
#
#   --quick       60 pushes, 2 rounds
#   --pushes N    tiny pushes to make (default 300): each changes one small file and adds 3 kB
#   --rounds R    mount measurements per state (default 3), before and after interleaved by state
#   --out DIR     results folder (default bench/results/repack-<timestamp>)
#
# Starts its own single-node Ceph (scripts/ceph.sh) under /var/tmp/strata-bench-repack-<pid> and
# stops it at exit. One store makes N commits of one tiny change each on branch `main`, pushing
# after each. Then, per round: a fresh store + `remote add` (empty index and block cache, as a new
# machine), caches dropped, and timed: `strata mount --read-only origin/main MP` (it lists packs/
# and reads every pack's footer) plus `cat` of one file; then unmounted. Then
# `strata gc --remote origin --grace 0` (timed; the grace is 0 because no one else writes) and the
# same rounds again. Output: raw.tsv and table.md (printed).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${SCRIPT_DIR}/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
QUICK=0 PUSHES='' ROUNDS='' OUT=''
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --pushes) PUSHES=$(bench_optarg "$@"); shift ;;
    --rounds) ROUNDS=$(bench_optarg "$@"); shift ;;
    --out) OUT=$(bench_optarg "$@"); shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then PUSHES=${PUSHES:-60} ROUNDS=${ROUNDS:-2}; else PUSHES=${PUSHES:-300} ROUNDS=${ROUNDS:-3}; fi
bench_check_int --pushes "${PUSHES}" --rounds "${ROUNDS}"

require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the mount cannot run"
BUILD=${STRATA_BUILD:-${REPO_ROOT}/build}
STRATA_BIN=${STRATA_BIN:-${BUILD}/src/cli/strata}
[[ -x "${STRATA_BIN}" ]] || bench_die "strata not found at ${STRATA_BIN} (set STRATA_BUILD or STRATA_BIN)"

cleanup_install_trap
OUT=${OUT:-${REPO_ROOT}/bench/results/repack-$(date +%Y%m%d-%H%M%S)}
mkdir -p "${OUT}/logs"
LOGS=${OUT}/logs
RAW=${OUT}/raw.tsv
printf 'state\tround\tpacks\tmount_seconds\n' >"${RAW}"

SCRATCH=/var/tmp/strata-bench-repack-$$
CEPH_DIR=${SCRATCH}/ceph
MP=${SCRATCH}/mnt
cleanup_scratch() {
  fusermount3 -u "${MP}" 2>/dev/null || fusermount3 -uz "${MP}" 2>/dev/null || true
  rm -rf -- "${SCRATCH}"
}
stop_ceph() { [[ -d "${CEPH_DIR}" ]] && "${REPO_ROOT}/scripts/ceph.sh" stop "${CEPH_DIR}" || true; }
cleanup_register cleanup_scratch
cleanup_register stop_ceph
mkdir -p "${SCRATCH}/src" "${MP}"

bench_log "starting Ceph"
"${REPO_ROOT}/scripts/ceph.sh" start "${CEPH_DIR}" >"${LOGS}/ceph-start.log" 2>&1 ||
  bench_die "scripts/ceph.sh start failed; see ${LOGS}/ceph-start.log"
# shellcheck disable=SC1091
source "${CEPH_DIR}/env"
URL=s3://strata-bench-repack/$$
STORE=${SCRATCH}/writer
"${STRATA_BIN}" init "${STORE}" >/dev/null
"${STRATA_BIN}" --store "${STORE}" remote add origin "${URL}" --endpoint "${STRATA_S3_ENDPOINT}" --create-bucket \
  >/dev/null

bench_log "${PUSHES} tiny pushes"
for ((i = 1; i <= PUSHES; i++)); do
  printf 'change %s\n' "${i}" >"${SCRATCH}/src/f$((i % 10)).txt"
  head -c 3000 /dev/urandom >"${SCRATCH}/src/own${i}.bin"
  "${STRATA_BIN}" --store "${STORE}" import "${SCRATCH}/src" --branch main -m "push ${i}" >/dev/null
  "${STRATA_BIN}" --store "${STORE}" push origin main >/dev/null 2>>"${LOGS}/push.log"
done

pack_count() {
  "${STRATA_BIN}" --store "${STORE}" --remote origin fsck --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["packs"])'
}

# mount_round STATE ROUND: a new machine's mount of origin/main, timed.
mount_round() {
  local reader=${SCRATCH}/reader-$1-$2 secs
  "${STRATA_BIN}" init "${reader}" >/dev/null
  "${STRATA_BIN}" --store "${reader}" remote add origin "${URL}" --endpoint "${STRATA_S3_ENDPOINT}" >/dev/null
  drop_caches
  secs=$(timeit bash -c '"$1" --store "$2" mount --read-only origin/main "$3" && cat "$3/f1.txt"' _ \
    "${STRATA_BIN}" "${reader}" "${MP}" 2>>"${LOGS}/mount.log")
  "${STRATA_BIN}" --store "${reader}" umount "${MP}" >/dev/null
  rm -rf -- "${reader}"
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${PACKS}" "${secs}" >>"${RAW}"
  bench_log "$1 round $2: ${PACKS} packs, mount ${secs} s"
}

PACKS=$(pack_count)
for ((r = 1; r <= ROUNDS; r++)); do mount_round before "${r}"; done
bench_log "gc --remote (repacking)"
# timeit sends the command's output to stderr: the JSON summary lands in gc.json.
GC_SECS=$(timeit "${STRATA_BIN}" --store "${STORE}" gc --remote origin --grace 0 --json 2>"${OUT}/gc.json")
PACKS=$(pack_count)
for ((r = 1; r <= ROUNDS; r++)); do mount_round after "${r}"; done

python3 - "${RAW}" "${GC_SECS:-?}" "${PUSHES}" >"${OUT}/table.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print(f"remote of {sys.argv[3]} tiny pushes; gc --remote (with repacking) took {sys.argv[2]} s\n")
print("| state | packs | mount + first read, s (min / median / max) |")
print("|---|---|---|")
for state in ("before", "after"):
    s = [float(r["mount_seconds"]) for r in rows if r["state"] == state]
    packs = next(r["packs"] for r in rows if r["state"] == state)
    print(f"| {state} repack | {packs} | {min(s):.2f} / {statistics.median(s):.2f} / {max(s):.2f} |")
EOF
cat "${OUT}/table.md"
