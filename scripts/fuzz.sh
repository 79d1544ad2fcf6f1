#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) and runs
# each from its seed corpus for a bounded time. A crash, a sanitizer report or
# a broken round-trip property fails the run; the input that did it is left in
# the output directory (and should become a file in tests/fuzz/regressions/).
# Being CI's clang build of every library, it is also where the thread-safety
# annotations are checked (-Wthread-safety, an error under -Werror).
#
# Usage: scripts/fuzz.sh [--seconds N] [--out DIR] [--build DIR] [--seeds] [TARGET...]
#   --seconds N  time per target (default 30; CI runs a short bounded mode)
#   --out DIR    where crashing inputs and the grown corpora go (default: a temp dir)
#   --build DIR  the instrumented build (default build-fuzz; another one lets
#                two runs at once not rebuild each other's objects)
#   --seeds      rewrite tests/fuzz/corpus from the project's encoders, then stop
#   TARGET       tree commit pack config chunk_list index_row workspace_row posix_acl control
#                remote key_file master_key_file fuse_request sealed (default: all)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=30 out="" build="$root/build-fuzz" seeds=0 targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --build) build=${2:?--build needs a directory}; shift ;;
    --seeds) seeds=1 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds wants a positive number" >&2; exit 2; }
((${#targets[@]})) || targets=(tree commit pack config chunk_list index_row workspace_row posix_acl control remote key_file master_key_file fuse_request sealed)

"$root/scripts/install-deps.sh"
names=$(printf 'fuzz_%s ' "${targets[@]}")
# A new build directory gets no tests; one that has them (scripts/test.sh runs
# the unit tests under ASan in the same instrumented build) keeps them.
tests_off=()
[[ -f $build/CMakeCache.txt ]] || tests_off=(-DSTRATA_TESTS=OFF)
CC=clang CXX=clang++ STRATA_TARGETS="$names fuzz_make_seeds" \
  "$root/scripts/build.sh" "$build" -DSTRATA_FUZZ=ON "${tests_off[@]}" -DSTRATA_WERROR=ON

corpus="$root/tests/fuzz/corpus"
if ((seeds)); then
  rm -rf "$corpus"
  "$build/tests/fuzz/fuzz_make_seeds" "$corpus"
  echo "seed corpus written to $corpus"
  exit 0
fi

if [[ -z $out ]]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/strata-fuzz.XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi
failed=()
for t in "${targets[@]}"; do
  work="$out/$t"
  mkdir -p "$work/corpus" "$work/crashes"
  cp -r "$corpus/$t/." "$work/corpus/"
  dirs=("$work/corpus")
  [[ -d "$root/tests/fuzz/regressions/$t" ]] && dirs+=("$root/tests/fuzz/regressions/$t")
  echo "== fuzz_$t for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$work/crashes/" "${dirs[@]}" >"$work/log" 2>&1; then
    tail -n 40 "$work/log" >&2
    failed+=("$t")
    trap - EXIT  # keep the crashing input
    echo "fuzz_$t FAILED; crashing input in $work/crashes" >&2
  else
    grep -E '^stat::number_of_executed_units|^Done' "$work/log" | tr '\n' ' '
    echo
  fi
done
if ((${#failed[@]})); then
  echo "fuzzing failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, no failures"
