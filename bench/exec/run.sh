#!/usr/bin/env bash
# bench/exec/run.sh — what a sandbox on a workspace costs: start-up, and a
# whole fork + run + keep cycle, against what a user would build by hand.
#
# Usage: bench/exec/run.sh [--quick] [--tree DIR] [--iterations N] [--rounds R] [--out DIR]
#
#   --tree DIR      the working tree (default /usr/include: many small files)
#   --iterations N  runs of each arm per round, interleaved (default 10; quick 3)
#   --rounds R      rounds (default 3; quick 1)
#   --out DIR       results folder (default bench/results/exec-<timestamp>)
#
# Environment: STRATA_BIN (default <repo>/build/src/cli/strata); STRATA_BASE_BIN,
# another strata binary (the one before a change) measured as arm strata-base
# in the start-up and cycle phases, interleaved with the others on the same
# store. Needs root (overlayfs, cgroups) and bwrap.
#
# Phases and arms, each timed as wall time of the whole command:
#   start   /bin/true in a sandbox whose working tree is the tree:
#             strata          strata exec --workspace W --at /mnt -- /bin/true
#                             (mounts the workspace, runs, unmounts)
#             strata-mounted  the same on a workspace already mounted
#             bwrap-overlay   mount an overlayfs (the tree as lower, an empty
#                             upper), bwrap on it, unmount
#             bwrap-dir       bwrap on a plain directory (nothing set up)
#   cycle   fork, a program that changes one small file, and the change kept:
#             strata          strata fork + strata exec --branch --commit
#             strata-from     strata exec --branch --from --commit (the fork
#                             made by exec itself: one command)
#             bwrap-copy      cp -a of the tree, bwrap on the copy
#             bwrap-overlay   overlayfs with a fresh upper, bwrap, unmount
#                             (the upper directory is what was kept)
#
# Output: raw.tsv, table.md (printed), logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { bench_usage 2 31; }

TREE=/usr/include
ITER=''
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --tree) TREE=$(bench_optarg "$@"); shift ;;
    --iterations) ITER=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then ITER=${ITER:-3} ROUNDS=${ROUNDS:-1}; else ITER=${ITER:-10} ROUNDS=${ROUNDS:-3}; fi
bench_check_int --iterations "${ITER}" --rounds "${ROUNDS}"
require_root
command -v bwrap >/dev/null || bench_die "bwrap is missing (apt-get install bubblewrap)"
[[ -d ${TREE} ]] || bench_die "no tree at ${TREE}"
bench_find_bin STRATA_BIN src/cli/strata strata

cleanup_install_trap
bench_results_dir exec
bench_scratch exec
STORE=${SCRATCH}/store
strata() { "${STRATA_BIN}" --store "${STORE}" "$@"; }
BASE_BIN=${STRATA_BASE_BIN:-}
if [[ -n "${BASE_BIN}" ]]; then
  [[ -x "${BASE_BIN}" ]] || bench_die "STRATA_BASE_BIN=${BASE_BIN} is not an executable"
  BASE_BIN=$(realpath "${BASE_BIN}")
fi
strata_base() { "${BASE_BIN}" --store "${STORE}" "$@"; }

RAW=${OUT}/raw.tsv
printf 'round\tphase\tarm\tms\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"
bench_meta_env
[[ -z "${BASE_BIN}" ]] || meta strata_base_bin "${BASE_BIN} ($("${BASE_BIN}" --version 2>/dev/null | head -n 1))"
meta tree "${TREE} ($(find "${TREE}" -type f | wc -l) files, $(du -sh "${TREE}" | cut -f1))"
meta bwrap "$(bwrap --version)"
meta disk "$(df -h --output=source,fstype "${SCRATCH}" | tail -n 1)"

BWRAP=(bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp)
AT=/mnt
mkdir -p "${SCRATCH}/lower" "${SCRATCH}/plain"
cp -a "${TREE}/." "${SCRATCH}/lower/"
cp -a "${TREE}/." "${SCRATCH}/plain/"
strata init "${STORE}" >/dev/null
strata import "${SCRATCH}/lower" --branch main -m tree >/dev/null
# Unmounted with everything below the scratch folder at exit.
mkdir -p "${SCRATCH}/mnt-ws"
strata mount --branch main --name mounted "${SCRATCH}/mnt-ws" >/dev/null
bench_track_mount "${SCRATCH}/mnt-ws"
# A mount of its own per run: the start-up phase unmounts it again.
for ws in startws ${BASE_BIN:+startws-base}; do
  strata exec --branch main --name "${ws}" --keep-mounted --at "${AT}" -- true
  strata umount "$(awk -v ws="${ws}" '$1 ~ "^strata:" ws ":" {print $2}' /proc/mounts)" >/dev/null
done

# timed ROUND PHASE ARM CMD...: wall time of CMD in ms into raw.tsv.
timed() {
  local round=$1 phase=$2 arm=$3 start end
  shift 3
  start=$(date +%s%N)
  "$@" >>"${OUT}/logs/${phase}-${arm}.log" 2>&1 || bench_die "${phase}/${arm} failed: see ${OUT}/logs/${phase}-${arm}.log"
  end=$(date +%s%N)
  printf '%s\t%s\t%s\t%.3f\n' "${round}" "${phase}" "${arm}" "$(((end - start) / 1000))e-3" >>"${RAW}"
}

N=0
overlay_run() {  # overlay_run CMD...: a fresh overlay of the tree, CMD in bwrap on it, unmounted
  N=$((N + 1))
  local d=${SCRATCH}/ov-${N}
  mkdir -p "${d}/upper" "${d}/work" "${d}/merged"
  mount -t overlay overlay -o "lowerdir=${SCRATCH}/lower,upperdir=${d}/upper,workdir=${d}/work" "${d}/merged"
  "${BWRAP[@]}" --bind "${d}/merged" "${AT}" --chdir "${AT}" -- "$@"
  umount "${d}/merged"
}
copy_run() {  # copy_run CMD...: a copy of the tree, CMD in bwrap on it
  N=$((N + 1))
  local d=${SCRATCH}/copy-${N}
  cp -a "${SCRATCH}/lower" "${d}"
  "${BWRAP[@]}" --bind "${d}" "${AT}" --chdir "${AT}" -- "$@"
}
strata_cycle() {  # strata_cycle strata|strata_base
  N=$((N + 1))
  "$1" fork "c${N}" --from main >/dev/null
  "$1" exec --branch "c${N}" --name "c${N}" --commit -m "change ${N}" --at "${AT}" -- sh -c 'echo changed >>stdio.h'
}
strata_from_cycle() {  # the same cycle in one command (exec --from forks the branch)
  N=$((N + 1))
  strata exec --branch "c${N}" --from main --name "c${N}" --commit -m "change ${N}" --at "${AT}" -- sh -c 'echo changed >>stdio.h'
}
change='echo changed >>stdio.h'

for ((round = 1; round <= ROUNDS; round++)); do
  bench_log "round ${round}: start-up"
  for ((i = 0; i < ITER; i++)); do
    timed "${round}" start strata strata exec --workspace startws --at "${AT}" -- /bin/true
    [[ -z "${BASE_BIN}" ]] || timed "${round}" start strata-base strata_base exec --workspace startws-base --at "${AT}" -- /bin/true
    timed "${round}" start strata-mounted strata exec --workspace mounted --at "${AT}" -- /bin/true
    timed "${round}" start bwrap-overlay overlay_run /bin/true
    timed "${round}" start bwrap-dir "${BWRAP[@]}" --bind "${SCRATCH}/plain" "${AT}" -- /bin/true
  done
  bench_log "round ${round}: fork + run + keep"
  for ((i = 0; i < ITER; i++)); do
    timed "${round}" cycle strata strata_cycle strata
    timed "${round}" cycle strata-from strata_from_cycle
    [[ -z "${BASE_BIN}" ]] || timed "${round}" cycle strata-base strata_cycle strata_base
    timed "${round}" cycle bwrap-copy copy_run sh -c "${change}"
    timed "${round}" cycle bwrap-overlay overlay_run sh -c "${change}"
  done
  rm -rf "${SCRATCH}"/copy-* "${SCRATCH}"/ov-*
done

python3 - "${RAW}" <<'PY' | tee "${OUT}/table.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def ms(phase, arm):
    return [float(r["ms"]) for r in rows if r["phase"] == phase and r["arm"] == arm]
print("| phase | arm | ms median (min-max) | median / reference |")
print("|---|---|---|---|")
for phase, ref, arms in (("start", "bwrap-overlay", ("strata", "strata-base", "strata-mounted", "bwrap-overlay",
                                                     "bwrap-dir")),
                         ("cycle", "strata", ("strata", "strata-from", "strata-base", "bwrap-copy", "bwrap-overlay"))):
    r = statistics.median(ms(phase, ref))
    for arm in arms:
        v = ms(phase, arm)
        if not v:
            continue
        print("| %s | %s | %.1f (%.1f-%.1f) | %.2f × %s |" % (phase, arm, statistics.median(v), min(v), max(v),
                                                        statistics.median(v) / r, ref))
# The targets, per round (the arms of a round ran interleaved): start-up
# strata / bwrap-overlay (at most 1.5), cycle bwrap-copy / strata (at least 10).
rounds = sorted({r["round"] for r in rows}, key=int)
def med(rnd, phase, arm):
    v = [float(r["ms"]) for r in rows if r["round"] == rnd and r["phase"] == phase and r["arm"] == arm]
    return statistics.median(v) if v else None
ratios = [("start: strata / bwrap-overlay", "start", "strata", "bwrap-overlay"),
          ("start: strata-base / bwrap-overlay", "start", "strata-base", "bwrap-overlay"),
          ("cycle: bwrap-copy / strata", "cycle", "bwrap-copy", "strata"),
          ("cycle: bwrap-copy / strata-from", "cycle", "bwrap-copy", "strata-from"),
          ("cycle: bwrap-copy / strata-base", "cycle", "bwrap-copy", "strata-base")]
print()
print("| ratio | " + " | ".join("round " + r for r in rounds) + " |")
print("|---|" + "---|" * len(rounds))
for label, phase, num, den in ratios:
    cells = []
    for rnd in rounds:
        a, b = med(rnd, phase, num), med(rnd, phase, den)
        cells.append("%.2f" % (a / b) if a and b else "")
    if any(cells):
        print("| %s | %s |" % (label, " | ".join(cells)))
PY
