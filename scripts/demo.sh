#!/usr/bin/env bash
# A short, real demonstration of strata on a local store: init, import two
# versions of a tree, log, stats, export, and a check that the export is
# identical to the source. Everything happens under a temporary directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build"
strata="$root/build/src/cli/strata"

work=$(mktemp -d /tmp/strata-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
export STRATA_STORE="$work/store"
src="$work/src"
cp -a /usr/include "$src"   # a real tree: ~8 000 files, ~110 MiB

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step "$strata" init
step "$strata" import "$src" --branch main -m "first version of /usr/include"
# A second version: a few files edited, one added, one removed.
for f in stdio.h stdlib.h string.h; do echo "/* edited for the demo */" >> "$src/$f"; done
echo "new file" > "$src/demo-added.txt"
rm -f "$src/zlib.h"
step "$strata" import "$src" --branch main -m "second version: 3 edits, 1 add, 1 delete"
step "$strata" log
step "$strata" ls main~1:linux/can
step "$strata" ls main:stdio.h
echo "last line of main:stdio.h: $("$strata" cat main:stdio.h | tail -n 1)"
step "$strata" stats
step "$strata" verify
step "$strata" export main "$work/out"
diff -r --no-dereference "$src" "$work/out"
echo
echo "export of main is identical to the source tree"
