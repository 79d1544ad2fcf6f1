#!/usr/bin/env bash
# Runs the conformance binary ($1, further arguments passed on) against a fresh
# directory under ${CONFORMANCE_BASE:-/var/tmp}, removed afterwards. The
# directory is made searchable (0755) so the permission tests' uid 65534 child
# can reach it.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: $0 CONFORMANCE_TEST_BINARY [gtest args...]" >&2
  exit 2
fi
bin=$1
shift
dir=$(mktemp -d "${CONFORMANCE_BASE:-/var/tmp}/strata-conformance.XXXXXX")
trap 'rm -rf -- "$dir"' EXIT
chmod 0755 "$dir"
rc=0
CONFORMANCE_DIR=$dir "$bin" "$@" || rc=$?
exit "$rc"
