#!/usr/bin/env bash
# bench/gc/run.sh — what gc and fsck cost on a store of many objects.
#
# Usage: bench/gc/run.sh [--quick] [--objects N] [--branches B] [--rounds R] [--out DIR]
#
#   --objects N   objects in the store (default 1000000; quick 100000)
#   --branches B  branches they are spread over (default 20)
#   --rounds R    rounds (default 3; quick 1); each builds a new store
#   --out DIR     results folder (default bench/results/gc-<timestamp>)
#
# Environment: STRATA_BIN, GC_STORE_GEN (defaults: <repo>/build/src/cli/strata,
# <repo>/build/bench/tools/gc_store_gen).
#
# One round: gc_store_gen writes N objects (64-byte chunks in directories of
# 100 files, a tenth shared by all branches) on B branches; then, each timed
# as wall time and with gc's own --json phase times:
#   gc-nothing   gc when everything is reachable (the cost of marking)
#   gc-half      gc after deleting half of the branches (mark, delete, repack)
#   fsck         fsck of the collected store (every pack read and re-hashed)
#
# Output: raw.tsv, table.md (printed), logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${SCRIPT_DIR}/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

QUICK=0 OBJECTS= BRANCHES=20 ROUNDS= OUT=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --objects) OBJECTS=${2:?--objects needs a number}; shift ;;
    --branches) BRANCHES=${2:?--branches needs a number}; shift ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    --out) OUT=${2:?--out needs a directory}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  OBJECTS=${OBJECTS:-100000} ROUNDS=${ROUNDS:-1}
else
  OBJECTS=${OBJECTS:-1000000} ROUNDS=${ROUNDS:-3}
fi
for v in "${OBJECTS}" "${BRANCHES}" "${ROUNDS}"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || bench_die "expected a positive integer, got '$v'"
done
((BRANCHES >= 2)) || bench_die "--branches must be at least 2 (half of them are deleted)"

STRATA_BIN=${STRATA_BIN:-${REPO_ROOT}/build/src/cli/strata}
GC_STORE_GEN=${GC_STORE_GEN:-${REPO_ROOT}/build/bench/tools/gc_store_gen}
for b in "${STRATA_BIN}" "${GC_STORE_GEN}"; do
  [[ -x $b ]] || bench_die "$b not found (build with scripts/build.sh, or set STRATA_BIN / GC_STORE_GEN)"
done
OUT=${OUT:-${REPO_ROOT}/bench/results/gc-$(date +%Y%m%d-%H%M%S)}
mkdir -p "${OUT}/logs"
OUT=$(cd "${OUT}" && pwd -P)

cleanup_install_trap
SCRATCH=/var/tmp/strata-bench-gc-$$
cleanup_register rm -rf -- "${SCRATCH}"
mkdir -p "${SCRATCH}"

RAW=${OUT}/raw.tsv
printf 'round\tphase\tseconds\tobjects_before\tobjects_deleted\tmark_ms\tdelete_ms\trepack_ms\tlocked_ms\n' >"${RAW}"
{
  printf 'strata_commit\t%s\n' "$(git -C "${REPO_ROOT}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  printf 'kernel\t%s\ncpus\t%s\n' "$(uname -r)" "$(nproc)"
  printf 'objects\t%s\nbranches\t%s\nrounds\t%s\n' "${OBJECTS}" "${BRANCHES}" "${ROUNDS}"
  printf 'disk\t%s\n' "$(df -h --output=source,fstype "${SCRATCH}" | tail -n 1)"
} >"${OUT}/meta.tsv"

strata() { "${STRATA_BIN}" --store "${STORE}" "$@"; }

# timed_gc ROUND PHASE: runs gc --json, records wall time and gc's phase times.
timed_gc() {
  local round=$1 phase=$2 start end log=${OUT}/logs/r$1-$2.json
  start=$(now)
  strata gc --json >"${log}"
  end=$(now)
  python3 - "${log}" "${round}" "${phase}" "${start}" "${end}" >>"${RAW}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ms = d["ms"]
print("\t".join([sys.argv[2], sys.argv[3], "%.3f" % (float(sys.argv[5]) - float(sys.argv[4])),
                 str(d["objects_before"]), str(d["objects_deleted"])] +
                ["%.0f" % ms[k] for k in ("mark", "delete", "repack", "locked")]))
PY
  bench_log "round ${round} ${phase}: $(tail -n 1 "${RAW}" | cut -f3)s"
}

for ((round = 1; round <= ROUNDS; round++)); do
  STORE=${SCRATCH}/store-${round}
  bench_log "round ${round}: writing ${OBJECTS} objects on ${BRANCHES} branches"
  "${GC_STORE_GEN}" "${STORE}" "${OBJECTS}" "${BRANCHES}" >"${OUT}/logs/r${round}-generated.txt"
  sync
  timed_gc "${round}" gc-nothing
  for ((b = 0; b < BRANCHES; b += 2)); do strata branch delete "$(printf 'b%03d' "$b")" >/dev/null; done
  timed_gc "${round}" gc-half
  start=$(now)
  strata fsck --json >"${OUT}/logs/r${round}-fsck.json"
  end=$(now)
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["ok"], "fsck found problems"' \
    "${OUT}/logs/r${round}-fsck.json"
  printf '%s\tfsck\t%.3f\t\t\t\t\t\t\n' "${round}" "$(echo "${end} - ${start}" | bc)" >>"${RAW}"
  bench_log "round ${round} fsck: $(tail -n 1 "${RAW}" | cut -f3)s"
  rm -rf -- "${STORE}"
done

python3 - "${RAW}" <<'PY' | tee "${OUT}/table.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("| phase | objects before | deleted | wall s (median, min-max) | mark ms | delete ms | repack ms | writers held ms |")
print("|---|---|---|---|---|---|---|---|")
for phase in ("gc-nothing", "gc-half", "fsck"):
    rs = [r for r in rows if r["phase"] == phase]
    secs = [float(r["seconds"]) for r in rs]
    med = lambda k: ("%.0f" % statistics.median(float(r[k]) for r in rs)) if rs[0][k] else ""
    print("| %s | %s | %s | %.2f (%.2f-%.2f) | %s | %s | %s | %s |" % (
        phase, rs[0]["objects_before"], med("objects_deleted"), statistics.median(secs), min(secs), max(secs),
        med("mark_ms"), med("delete_ms"), med("repack_ms"), med("locked_ms")))
PY
