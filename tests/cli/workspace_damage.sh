#!/usr/bin/env bash
# A workspace's data file (STORE/workspaces/NAME/data/<ino>) damaged or
# replaced while the workspace is not mounted: cut short, deleted, or turned
# into a symlink to a root-only file elsewhere. `strata fsck` reports the file
# (exit 3); through a mount, reads of the bytes it lacks get EIO (the kernel
# reads ahead in large requests, so reads near them fail too) and the
# daemon's log names the file; a commit refuses it, naming the path; a symlink
# is never followed (reads and writes get EIO, the file it points at is
# untouched).
source "$(dirname "$0")/lib.sh"
use_mountpoint
require_root
LOG="$STORE/workspaces/ws/daemon.log"

# write_synced SRC DEST: copies SRC to DEST and fsyncs it.
write_synced() {
  python3 - "$1" "$2" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
os.write(fd, data)
os.fsync(fd)
os.close(fd)
PY
}

# reads_fail_with_eio FILE: reading all of FILE fails with an I/O error.
reads_fail_with_eio() {
  if cat "$1" >/dev/null 2>"$WORK/cat.err"; then fail "reading $1 succeeded: its data file is damaged"; fi
  grep -qi "input/output error" "$WORK/cat.err" || fail "reading $1 failed otherwise than EIO: $(cat "$WORK/cat.err")"
}

expect_ok "$STRATA_BIN" init "$STORE"
head -c 100000 /dev/urandom >"$WORK/f.bin"
head -c 20000 /dev/urandom >"$WORK/g.bin"
expect_ok strata mount --new --name ws "$MP"
mkdir "$MP/dir"
write_synced "$WORK/f.bin" "$MP/dir/f"
write_synced "$WORK/g.bin" "$MP/g"
ino=$(stat -c %i "$MP/dir/f")
expect_ok strata umount "$MP"
DATA="$STORE/workspaces/ws/data/$ino"
[[ -f $DATA && $(stat -c %s "$DATA") == 100000 ]] || fail "no data file of 100000 bytes at $DATA"
expect_ok strata fsck

step "a data file cut short: fsck reports it, reads past the cut get EIO, commit refuses it"
truncate -s 50000 "$DATA"
expect_exit 3 strata fsck
expect_output_matches "damaged: workspace 'ws': data file .*/data/$ino holds 50000 bytes"
expect_ok strata mount --workspace ws "$MP"
reads_fail_with_eio "$MP/dir/f"
grep -q "data/$ino" "$LOG" || fail "the daemon's log does not name the damaged data file"
cmp -s "$MP/g" "$WORK/g.bin" || fail "an undamaged file reads otherwise"
expect_fail strata commit "$MP" -m "over a damaged file" --branch b
expect_stderr_matches "dir/f.*data/$ino|data/$ino.*dir/f"
expect_ok strata umount "$MP"

step "a data file deleted: the same"
rm "$DATA"
expect_exit 3 strata fsck
expect_output_matches "data/$ino is missing"
expect_ok strata mount --workspace ws "$MP"
reads_fail_with_eio "$MP/dir/f"
expect_fail strata commit "$MP" -m "over a missing file" --branch b
expect_ok strata umount "$MP"

step "a data file replaced by a symlink to a root-only file: never read, never written"
printf 'root only\n' >"$WORK/secret"
chmod 600 "$WORK/secret"
cp -p "$WORK/secret" "$WORK/secret.orig"
ln -s "$WORK/secret" "$DATA"
expect_exit 3 strata fsck
expect_ok strata mount --workspace ws "$MP"
reads_fail_with_eio "$MP/dir/f"
if printf 'overwritten' | dd of="$MP/dir/f" conv=notrunc status=none 2>"$WORK/dd.err"; then
  fail "a write through a symlinked data file succeeded"
fi
grep -qi "input/output error" "$WORK/dd.err" || fail "the write failed otherwise than EIO: $(cat "$WORK/dd.err")"
expect_ok strata umount "$MP"
cmp -s "$WORK/secret" "$WORK/secret.orig" || fail "the file the symlink points at changed"
[[ -L $DATA ]] || fail "the symlink itself was replaced"
