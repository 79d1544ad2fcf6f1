#!/usr/bin/env bash
# bench/workload/run.sh — a real workload: untar a source tree, then `git status` on it.
#
# Usage: bench/workload/run.sh [--quick] [--rounds N] [--out DIR] [--arms LIST] [--tree DIR]
#
#   --quick       the tree /usr/include/c++ (~13 MB, ~800 files) and 1 round
#   --rounds N    rounds (default 3, quick 1); arms interleaved, their order rotated each round
#   --out DIR     results folder (default bench/results/workload-<timestamp>)
#   --arms LIST   comma-separated subset of native,overlayfs,passthrough_ll,passthrough_ll-60s,
#                 passthrough_ll-60s-perm,fuse-overlayfs,strata (default all)
#   --tree DIR    the source tree (default /usr/include, ~130 MB, ~9 000 files)
#
# Environment: STRATA_BIN, or STRATA_BUILD (default <repo>/build): the strata binary.
#
# Made once, not timed: a copy of the tree made a git repository (one commit of
# every file) and packed with its .git into tree.tar. Then, for each arm, on a
# fresh, empty filesystem of that arm (bench/lib.sh: bench_arm_up):
#   untar              tar -xf tree.tar, then sync -f on the target (durable), seconds
#   git-status-first   git status --porcelain right after: the index's stat data do not
#                      match the new files, so git re-reads and re-hashes every one
#   git-status-warm    the same again (index refreshed, caches warm)
#   git-status-cold    the same after sync; echo 3 > /proc/sys/vm/drop_caches
# Every git status must print nothing (the tree came out whole); otherwise the
# measurement fails. Lower is better for every phase.
#
# Output: raw.tsv (round, position, arm, phase, seconds), meta.tsv, table.md
# (printed), logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

readonly PHASES=(untar git-status-first git-status-warm git-status-cold)

usage() { bench_usage 2 13; }

ARMS_CSV=${BENCH_WRITABLE_ARMS}
TREE=
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
    --tree) TREE=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  ROUNDS=${ROUNDS:-1} TREE=${TREE:-/usr/include/c++}
else
  ROUNDS=${ROUNDS:-3} TREE=${TREE:-/usr/include}
fi
bench_check_int --rounds "${ROUNDS}"
[[ -d "${TREE}" ]] || bench_die "--tree ${TREE} is not a directory"
bench_parse_arms "${BENCH_WRITABLE_ARMS}" "${ARMS_CSV}"

require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the FUSE arms cannot run"
bench_install git:git tar:tar
if has_arm fuse-overlayfs; then bench_install fuse-overlayfs:fuse-overlayfs fusermount3:fuse3; fi
if has_arm strata; then bench_find_bin STRATA_BIN src/cli/strata strata; fi

cleanup_install_trap
bench_results_dir workload
bench_scratch workload
RAW=${OUT}/raw.tsv
printf 'round\tposition\tarm\tphase\tseconds\tcache\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"
if has_arm passthrough_ll || has_arm passthrough_ll-60s || has_arm passthrough_ll-60s-perm; then
  BENCH_PT_BIN=${SCRATCH}/passthrough_ll
  bench_build_passthrough "${BENCH_PT_BIN}" "${OUT}/logs/passthrough_ll-build.log"
fi

# git with no user or system configuration, never a background gc.
export HOME=${SCRATCH}/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "${HOME}"
git_q() { git -c gc.auto=0 -c core.fsmonitor=false -c user.name=bench -c user.email=bench@localhost "$@"; }

# --- the tarball ----------------------------------------------------------------
bench_log "making the tarball of ${TREE} as a git repository (not timed)"
mkdir -p "${SCRATCH}/src"
cp -a -- "${TREE}" "${SCRATCH}/src/tree"
(
  cd "${SCRATCH}/src/tree"
  git_q init -q
  git_q add -A
  git_q commit -q -m "${TREE}"
) >"${OUT}/logs/tarball.log" 2>&1 || bench_die "could not make the git repository; see ${OUT}/logs/tarball.log"
TARBALL=${SCRATCH}/tree.tar
tar -cf "${TARBALL}" -C "${SCRATCH}/src" tree
rm -rf -- "${SCRATCH}/src"
read -r tree_files tree_bytes < <(tar -tvf "${TARBALL}" | awk '$1 ~ /^-/ { n++; s += $3 } END { print n + 0, s + 0 }')

bench_meta_env
meta arms "${ARMS_CSV}"
meta tree "${TREE}"
meta tarball "${tree_files} regular files (with .git), ${tree_bytes} bytes, $(stat -c %s "${TARBALL}") bytes of tar"
meta git_version "$(git --version)"
meta tar_version "$(tar --version | head -n 1)"
bench_meta_writable_arms
meta cmd_untar "tar -xf tree.tar -C TARGET && sync -f TARGET (timed together)"
meta cmd_git_status "git -C TARGET/tree status --porcelain (output must be empty)"
meta cache_state "untar: the tarball read warm (cat before); git-status-first and -warm: warm; git-status-cold: sync; echo 3 > /proc/sys/vm/drop_caches just before (Cached kB in raw.tsv)"

# --- measurements -----------------------------------------------------------------
FAILED=0
# timed_step ROUND POSITION ARM PHASE CACHE LOG CMD...: runs CMD, appends its wall time to raw.tsv.
timed_step() {
  local round=$1 pos=$2 arm=$3 phase=$4 cache=$5 log=$6 secs
  shift 6
  printf '\n=== %s: %s\n' "${phase}" "$*" >>"${log}"
  if ! secs=$(timeit "$@" 2>>"${log}"); then
    bench_log "FAILED: round ${round} ${arm} ${phase}; see ${log}"
    FAILED=1
    return 1
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${round}" "${pos}" "${arm}" "${phase}" "${secs}" "${cache}" >>"${RAW}"
  bench_log "round ${round} ${arm} ${phase}: ${secs} s"
}

untar() { tar -xf "${TARBALL}" -C "$1" && sync -f "$1"; }

# git_status_clean DIR: git status, failing when it reports any change.
git_status_clean() {
  local changes
  changes=$(git_q -C "$1" status --porcelain) || return 1
  if [[ -n "${changes}" ]]; then
    printf 'git status is not clean:\n%s\n' "$(head -n 20 <<<"${changes}")" >&2
    return 1
  fi
}

measure() {
  local round=$1 pos=$2 arm=$3
  local log=${OUT}/logs/r${round}-${arm}.log
  bench_arm_up "${arm}" "${SCRATCH}/r${round}-${arm}" "${log}"
  local t=${BENCH_TARGET}
  cat "${TARBALL}" >/dev/null
  if timed_step "${round}" "${pos}" "${arm}" untar warm "${log}" untar "${t}"; then
    if timed_step "${round}" "${pos}" "${arm}" git-status-first warm "${log}" git_status_clean "${t}/tree" &&
      timed_step "${round}" "${pos}" "${arm}" git-status-warm warm "${log}" git_status_clean "${t}/tree"; then
      drop_caches
      timed_step "${round}" "${pos}" "${arm}" git-status-cold "cold (Cached ${BENCH_CACHED_KB} kB after drop)" \
        "${log}" git_status_clean "${t}/tree" || true
    fi
  fi
  bench_strata_stats "${OUT}/logs/r${round}-${arm}-stats.json"
  bench_arm_down "${log}"
}

bench_log "results: ${OUT}; arms: ${ARMS[*]}; rounds: ${ROUNDS}; tree ${TREE}: ${tree_files} files, ${tree_bytes} bytes"
for ((round = 1; round <= ROUNDS; round++)); do
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  meta "order_r${round}" "${order[*]}"
  for ((i = 0; i < ${#order[@]}; i++)); do
    measure "${round}" "$((i + 1))" "${order[i]}"
  done
done
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"

# A short table: seconds, median (min–max) over rounds, per phase and arm.
python3 - "${RAW}" "${PHASES[@]}" <<'PY' | tee "${OUT}/table.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
arms = list(dict.fromkeys(r["arm"] for r in rows))
print("| phase (seconds) | " + " | ".join(arms) + " |")
print("|---" * (len(arms) + 1) + "|")
for phase in sys.argv[2:]:
    cells = []
    for a in arms:
        v = [float(r["seconds"]) for r in rows if r["arm"] == a and r["phase"] == phase]
        cells.append("–" if not v else f"{statistics.median(v):.2f}" + (f" ({min(v):.2f}–{max(v):.2f})" if len(v) > 1 else ""))
    print(f"| {phase} | " + " | ".join(cells) + " |")
PY
((FAILED == 0)) || bench_die "some measurements failed (see the logs in ${OUT}/logs)"
