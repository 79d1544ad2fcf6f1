#!/usr/bin/env bash
# Configures and builds strata.
# Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]; STRATA_TARGETS limits what is built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# shellcheck disable=SC2086 # a list of target names
cmake --build "$build" -j"$(nproc)" ${STRATA_TARGETS:+--target $STRATA_TARGETS}
