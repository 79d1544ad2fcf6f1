#!/usr/bin/env bash
# A commit on a full disk fails with a clean message: "No space left on
# device" as the cause, exit 1 (no damage), and not the
# "No space left on device: Input/output error" of an error wrapped twice.
# And the store open in the daemon stays whole: once there is room again,
# the next commit stores every object right (a pack cut short by the full
# disk was written on where it stopped, and sealed damaged).
source "$(dirname "$0")/lib.sh"
use_mountpoint
SMALL="$WORK/small"
mkdir -p "$SMALL"
mount -t tmpfs -o size=24m tmpfs "$SMALL" || { echo "SKIP: cannot mount a tmpfs" >&2; exit 77; }
trap 'rc=$?; set +e; fusermount3 -u -z "$MP" 2>/dev/null || true; umount -l "$SMALL" 2>/dev/null || true; (exit $rc); _cleanup' EXIT
STORE="$SMALL/store"

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ws "$MP"
step "fill the disk through the mount with data the commit must store"
head -c 9000000 /dev/urandom >"$MP/a.bin" || true
head -c 64000000 /dev/urandom >"$MP/b.bin" 2>/dev/null && fail "64 MB fitted on a 24 MiB disk"
step "the commit fails with a clean message"
expect_fail strata commit "$MP" -m "on a full disk" --branch main
[[ $RC == 1 ]] || { _show_last; fail "a commit on a full disk exited $RC, want 1"; }
expect_stderr_matches "no space left on device"
if grep -qi "input/output error" "$ERR"; then _show_last; fail "the message wraps ENOSPC in EIO"; fi
expect_ok strata umount "$MP"

step "a commit cut short halfway through its pack by a full disk"
umount -l "$SMALL"
mount -t tmpfs -o size=40m tmpfs "$SMALL"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ws "$MP"
head -c 9000000 /dev/urandom >"$MP/a.bin"
head -c 16000000 /dev/urandom >"$MP/b.bin"
expect_fail strata commit "$MP" -m "too big for the disk left" --branch main
expect_stderr_matches "no space left on device"
step "with room again, the same daemon's next commit is whole"
mount -o remount,size=300m "$SMALL"
expect_ok strata commit "$MP" -m "with room" --branch main
expect_ok strata fsck
for f in a.bin b.bin; do
  strata cat "main:$f" >"$WORK/$f.out" || fail "$f of the commit made after the full disk cannot be read"
  cmp -s "$WORK/$f.out" "$MP/$f" || fail "$f of the commit made after the full disk reads other bytes"
done
expect_ok strata umount "$MP"
