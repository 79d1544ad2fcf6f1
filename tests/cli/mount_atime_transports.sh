#!/usr/bin/env bash
# Access times on a relatime mount, on each transport
# (on the strata transports as root, files made in the workspace are read
# through FUSE passthrough):
#  - the first read after a write moves atime, a second read does not (a
#    later write and read move it again where the read goes through
#    passthrough; a read from the kernel's page cache moves nothing,
#    docs/guarantees.md);
#  - reading and stat'ing files leaves nothing to commit.
source "$(dirname "$0")/lib.sh"
use_mountpoint

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

step "a read-only look changes nothing to commit"
mkdir "$MP/d"
for i in $(seq 40); do printf 'file %s\n' "$i" >"$MP/d/f$i"; done
expect_ok strata commit "$MP" -m files --branch main
cat "$MP/d"/* >/dev/null
stat "$MP/d"/* >/dev/null
expect_ok strata commit "$MP" -m only-read
expect_output_matches "nothing to commit"
expect_ok strata umount "$MP"
