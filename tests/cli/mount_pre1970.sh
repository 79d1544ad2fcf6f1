#!/usr/bin/env bash
# Times before 1970 with a fractional second, set through a mount: stat shows
# them as set (seconds rounded down, nanoseconds in [0, 1e9)), a commit of the
# workspace keeps them, including the top directory's, and the commit can be
# read back and mounted again.
source "$(dirname "$0")/lib.sh"
use_mountpoint

mkdir -p "$WORK/src"
printf 'x\n' >"$WORK/src/old.txt"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
expect_ok strata mount --branch main --name w "$MP"

# Half a second before the epoch, and a time in 1960.
step "set pre-1970 fractional times on a file, a directory and the top directory"
mkdir "$MP/dir"
touch -m -d '@-0.5' "$MP/old.txt"
touch -m -d '1960-06-15 12:00:00.25 UTC' "$MP/dir"
touch -m -d '1969-12-31 23:59:58.75 UTC' "$MP"

step "stat through the mount shows them as set"
[[ $(stat -c %y "$MP/old.txt") == '1969-12-31 23:59:59.500000000 +0000' ]] ||
  fail "old.txt: mtime $(stat -c %y "$MP/old.txt")"
[[ $(stat -c %Y "$MP/old.txt") == -1 ]] || fail "old.txt: mtime seconds $(stat -c %Y "$MP/old.txt"), not -1"
[[ $(stat -c %y "$MP/dir") == '1960-06-15 12:00:00.250000000 +0000' ]] || fail "dir: mtime $(stat -c %y "$MP/dir")"
[[ $(stat -c %y "$MP") == '1969-12-31 23:59:58.750000000 +0000' ]] || fail "top: mtime $(stat -c %y "$MP")"

step "a commit keeps them and can be read back"
expect_ok strata commit "$MP" -m 'old times'
expect_ok strata umount "$MP"
expect_ok strata log main --json
json_true 'd[0]["message"] == "old times"'
expect_ok strata mount --read-only main "$MP"
[[ $(stat -c %y "$MP/old.txt") == '1969-12-31 23:59:59.500000000 +0000' ]] ||
  fail "committed old.txt: mtime $(stat -c %y "$MP/old.txt")"
[[ $(stat -c %y "$MP/dir") == '1960-06-15 12:00:00.250000000 +0000' ]] ||
  fail "committed dir: mtime $(stat -c %y "$MP/dir")"
[[ $(stat -c %y "$MP") == '1969-12-31 23:59:58.750000000 +0000' ]] ||
  fail "committed top: mtime $(stat -c %y "$MP")"
expect_ok strata umount "$MP"
expect_ok strata verify
