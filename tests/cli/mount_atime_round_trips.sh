#!/usr/bin/env bash
# Access times on a relatime mount, and what stat costs after reads, on each
# transport (on the strata transport as root, files made in the workspace are
# read through FUSE passthrough):
#  - the first read after a write moves atime, a second read does not (a
#    later write and read move it again, where the read reaches the daemon
#    or goes through passthrough: a read from the kernel's page cache moves
#    nothing, docs/guarantees.md);
#  - files read and stat'ed again and again cost no GETATTR once their first
#    read is seen: the kernel drops its cached atime after a READ it sends,
#    and after a passthrough read only when the data file's atime differs
#    from the one it holds (the daemon gives them the same).
source "$(dirname "$0")/lib.sh"
use_mountpoint

# count OPCODE: how many requests of OPCODE the mount has served.
count() {
  expect_ok strata stats "$MP" --json
  json "d['operations'].get('$1', {}).get('count', 0)"
}
atime() { stat -c %X -- "$1"; }

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name at --atime relatime "$MP"
expect_ok strata stats "$MP" --json
passthrough=$(json 'd["passthrough"]["on"]')
echo "passthrough: $passthrough" >&2

step "relatime seen through stat: the first read after a write moves atime, the second does not"
printf 'some bytes, less than a page\n' >"$MP/f"
written=$(stat -c %Y "$MP/f")
sleep 1.1
cat "$MP/f" >/dev/null
a1=$(atime "$MP/f")
((a1 > written)) || fail "the first read after a write left atime at $a1 (mtime $written)"
sleep 1.1
cat "$MP/f" >/dev/null
[[ $(atime "$MP/f") == "$a1" ]] || fail "a second read moved atime from $a1 to $(atime "$MP/f")"
if [[ $passthrough == true ]]; then
  sleep 1.1
  echo more >>"$MP/f"
  sleep 1.1
  cat "$MP/f" >/dev/null
  (($(atime "$MP/f") > a1)) || fail "a read after a second write left atime at $a1"
fi

step "reads and stats again and again: no GETATTR once the first reads are seen"
mkdir "$MP/d"
for i in $(seq 40); do printf 'file %s\n' "$i" >"$MP/d/f$i"; done
cat "$MP/d"/* >/dev/null
stat "$MP/d"/* >/dev/null
before=$(count getattr)
for round in 1 2 3 4 5; do
  cat "$MP/d"/* >/dev/null
  stat "$MP/d"/* >/dev/null
done
sent=$(($(count getattr) - before))
echo "200 reads and 200 stats sent $sent GETATTRs" >&2
((sent <= 4)) || fail "200 reads and 200 stats of 40 files sent $sent GETATTRs"

step "a read-only look changes nothing to commit"
expect_ok strata commit "$MP" -m files --branch main
cat "$MP/d"/* >/dev/null
stat "$MP/d"/* >/dev/null
expect_ok strata commit "$MP" -m only-read
expect_output_matches "nothing to commit"
expect_ok strata umount "$MP"
