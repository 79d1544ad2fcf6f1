#!/usr/bin/env bash
# Builds strata and runs its whole test suite:
#   1. a release build with warnings as errors, every CTest test (unit and command-level);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build of the unit tests;
#   3. every fuzz target (tests/fuzz) for a short bounded time from its seed corpus
#      and its regression inputs (scripts/fuzz.sh; longer runs are made by hand).
# Installs missing Debian packages first. Run as root: some tests create device
# nodes and files owned by other users.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

echo "== build (warnings are errors)"
"$root/scripts/build.sh" "$root/build" -DSTRATA_WERROR=ON
echo "== all tests"
ctest --test-dir "$root/build" --output-on-failure -j2

echo "== unit tests under ASan + UBSan"
STRATA_TARGETS="util_test store_test gc_test tree_diff_test history_graph_test workspace_test data_range_test rechunk_test commit_test snapshot_test chunk_cache_test read_ahead_test" \
  "$root/scripts/build.sh" "$root/build-asan" -DSTRATA_WERROR=ON -DSTRATA_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j2 -L unit

echo "== fuzz targets, ${STRATA_FUZZ_SECONDS:-15} s each"
"$root/scripts/fuzz.sh" --seconds "${STRATA_FUZZ_SECONDS:-15}"
