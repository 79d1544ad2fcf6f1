#!/usr/bin/env bash
# A short, real demonstration of strata's workspace loop, as root on a fresh
# Debian 12: mount a workspace; change it with ordinary tools while a program
# keeps writing into it; commit; change and commit again; diff and log; mount
# the older commit read-only beside it; fork a branch from it; stats.
# Installs the packages and builds first (into build/), unless STRATA_BIN names
# a strata binary to use. Everything happens under a temporary directory and is
# unmounted and removed at the end, also on failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STRATA_BIN:-}" ]; then
  "$root/scripts/install-deps.sh"
  "$root/scripts/build.sh" "$root/build"
  STRATA_BIN="$root/build/src/cli/strata"
fi
# The commands below are shown as a user types them.
strata() { "$STRATA_BIN" "$@"; }

work=$(mktemp -d /tmp/strata-demo.XXXXXX)
ticker=""
cleanup() {
  [ -n "$ticker" ] && kill "$ticker" 2>/dev/null && wait "$ticker" 2>/dev/null
  for mp in "$work/old" "$work/ws"; do mountpoint -q "$mp" && strata umount "$mp"; done
  rm -rf "$work"
}
trap cleanup EXIT
export STRATA_STORE="$work/store"
ws="$work/ws" old="$work/old"
mkdir "$ws" "$old"

say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
# Prints a command as it would be typed (quoting only words that need it), then runs it.
step() {
  local shown="" a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./~:=,+-]+$ ]]; then shown+=" $a"; else shown+=" ${a@Q}"; fi
  done
  printf '\033[1m$%s\033[0m\n' "$shown"
  "$@"
}

say "A store, and a new workspace mounted on an ordinary directory"
step strata init
step strata mount --new --name demo "$ws"

say "Ordinary tools change it while a program keeps writing a log into it"
( while :; do date +%T.%N >> "$ws/ticker.log"; sleep 0.1; done ) &
ticker=$!
step cp -a /usr/include/linux "$ws/include"
step mkdir "$ws/notes"
echo "first notes" > "$ws/notes/todo.txt"
sleep 0.5

say "Commit: a point-in-time cut; the program keeps running"
step strata commit "$ws" --branch main -m "kernel headers and notes"

say "Change it again (an edit, a new file, a removal) and commit again"
step sed -i 's/first/second/' "$ws/notes/todo.txt"
step cp /etc/os-release "$ws/notes/"
step rm "$ws/include/kd.h"
sleep 0.3
step strata commit "$ws" -m "edit the notes, add os-release, drop kd.h"

say "What changed between the two commits, and the history"
step strata diff main~1 main
step strata log --graph

say "The older commit mounted read-only beside the workspace"
step strata mount --read-only main~1 "$old"
step cat "$old/notes/todo.txt" "$ws/notes/todo.txt"
echo "ticker.log: $(wc -l < "$old/ticker.log") lines in the old commit, $(wc -l < "$ws/ticker.log") now"
if touch "$old/x" 2>/dev/null; then echo "the read-only mount took a write" >&2; exit 1; fi
echo "a write to the read-only mount fails: EROFS"

say "Fork: a new branch at the older commit (copies nothing)"
step strata fork experiment --from main~1
step strata log --graph

say "Stats: the store (dedup, compression), then the workspace's daemon"
step strata stats
step strata stats "$ws" | sed -n 1,12p
kill "$ticker"
wait "$ticker" 2>/dev/null || true
ticker=""
step strata umount "$old"
step strata umount "$ws"
echo
echo "demonstration done: two commits made while a program wrote, compared, mounted side by side, forked"
