#!/usr/bin/env bash
# Builds strata and runs its whole test suite:
#   1. a release build with warnings as errors, every CTest test (unit and command-level);
#   2. one clang build with AddressSanitizer + UndefinedBehaviorSanitizer (and
#      libFuzzer's coverage instrumentation) that serves twice: the unit tests run
#      in it, then every fuzz target (tests/fuzz) runs for a short bounded time
#      from its seed corpus and regression inputs (scripts/fuzz.sh; longer runs
#      are made by hand);
#   3. the concurrent unit tests (gc racing commits, the chunk cache's single
#      flight, read-ahead, commits and snapshots during writes, the thread pool,
#      the remote block cache and parallel transfers) under ThreadSanitizer.
# The sanitizer builds use -O1 with line tables only: enough for a report's
# stack, and it keeps the three builds within the time CI allows.
# Installs missing Debian packages first. Run as root: some tests create device
# nodes and files owned by other users.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

echo "== build (warnings are errors)"
"$root/scripts/build.sh" "$root/build" -DSTRATA_WERROR=ON
echo "== all tests"
ctest --test-dir "$root/build" --output-on-failure -j2

echo "== unit tests under ASan + UBSan (clang), in the build the fuzz targets use"
sanitizer_flags=(-DSTRATA_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
# Every unit-labelled test that is a program of this build (not a script), as
# CTest lists them: the sanitizer build must build each one, or ctest reports it
# "Not Run".
unit_targets=$(ctest --test-dir "$root/build" -L unit --show-only=json-v1 | python3 -c '
import json, os, sys
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or [""]
    if os.path.basename(cmd[0]) == t["name"] and cmd[0].startswith(sys.argv[1]):
        print(t["name"])' "$root/build/")
CC=clang CXX=clang++ STRATA_TARGETS="$(echo $unit_targets)" \
  "$root/scripts/build.sh" "$root/build-asan" -DSTRATA_FUZZ=ON -DSTRATA_TESTS=ON "${sanitizer_flags[@]}"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j2 -L unit

echo "== fuzz targets, ${STRATA_FUZZ_SECONDS:-15} s each"
"$root/scripts/fuzz.sh" --build "$root/build-asan" --seconds "${STRATA_FUZZ_SECONDS:-15}"

echo "== concurrent unit tests under ThreadSanitizer"
# The tests labelled "tsan" (strata_tsan_test in the CMakeLists), as CTest lists them.
tsan_tests=$(ctest --test-dir "$root/build" -L tsan --show-only=json-v1 | python3 -c '
import json, sys
print(" ".join(t["name"] for t in json.load(sys.stdin)["tests"]))')
# Without -Werror: GCC's flow warnings misfire on TSan-instrumented code.
STRATA_TARGETS="$tsan_tests" "$root/scripts/build.sh" "$root/build-tsan" -DSTRATA_TSAN=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir "$root/build-tsan" --output-on-failure -j2 -R "^($(echo $tsan_tests | tr ' ' '|'))\$"
