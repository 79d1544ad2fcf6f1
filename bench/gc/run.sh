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
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { bench_usage 2 11; }

OBJECTS=''
BRANCHES=20
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --objects) OBJECTS=$(bench_optarg "$@"); shift ;;
    --branches) BRANCHES=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  OBJECTS=${OBJECTS:-100000} ROUNDS=${ROUNDS:-1}
else
  OBJECTS=${OBJECTS:-1000000} ROUNDS=${ROUNDS:-3}
fi
bench_check_int --objects "${OBJECTS}" --branches "${BRANCHES}" --rounds "${ROUNDS}"
((BRANCHES >= 2)) || bench_die "--branches must be at least 2 (half of them are deleted)"

bench_find_bin STRATA_BIN src/cli/strata strata
bench_find_bin GC_STORE_GEN bench/tools/gc_store_gen gc_store_gen

cleanup_install_trap
bench_results_dir gc
bench_scratch gc

RAW=${OUT}/raw.tsv
printf 'round\tphase\tseconds\tobjects_before\tobjects_deleted\tmark_ms\tdelete_ms\trepack_ms\tlocked_ms\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"
bench_meta_env
meta objects "${OBJECTS}"
meta branches "${BRANCHES}"
meta disk "$(df -h --output=source,fstype "${SCRATCH}" | tail -n 1)"

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
