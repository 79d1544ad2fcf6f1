#!/usr/bin/env bash
# FUSE passthrough on the strata transport (docs/passthrough.md): files whose
# bytes are all local are read and written by the kernel straight from the
# workspace's data files. A file written that way (created, appended to,
# rewritten in place) reads back, stats and commits as exactly the bytes
# written, though no WRITE request reached the daemon; a commit asked for
# while a passthrough writer is open waits for it to close, so the writes
# made through it up to its close are in the commit; --passthrough off sends
# the writes to the daemon; stats say which.
source "$(dirname "$0")/lib.sh"
use_mountpoint
unset STRATA_FUSE_TRANSPORT

expect_ok "$STRATA_BIN" init "$STORE"

step "writes through passthrough are what the file holds and what a commit exports"
expect_ok strata mount --transport strata --new --name w "$MP"
expect_ok strata stats --json "$MP"
json_true 'd["passthrough"]["on"] is True'
head -c 5000000 /dev/urandom > "$WORK/big"
cp "$WORK/big" "$MP/big"
printf 'appended' >> "$MP/big"
printf 'XYZ' | dd of="$MP/big" bs=1 seek=1000 conv=notrunc status=none
{ head -c 1000 "$WORK/big"; printf 'XYZ'; tail -c +1004 "$WORK/big"; printf 'appended'; } > "$WORK/expected"
[[ $(stat -c %s "$MP/big") == $(stat -c %s "$WORK/expected") ]] || fail "size on the mount: $(stat -c %s "$MP/big")"
cmp -s "$WORK/expected" "$MP/big" || fail "the file reads back other bytes than were written"
expect_ok strata stats --json "$MP"
json_true 'd["passthrough"]["write_opens"] >= 3'
json_true 'd["operations"].get("write", {"count": 0})["count"] == 0'
expect_ok strata commit --branch main -m "written through passthrough" "$MP"
expect_ok strata export main "$WORK/out"
cmp -s "$WORK/expected" "$WORK/out/big" || fail "the commit holds other bytes than were written"

step "a commit waits for an open passthrough writer"
# The writer writes, a commit is asked for, the writer writes more after a
# pause (long enough for the commit to reach its cut unless it waits) and
# closes. Everything it wrote is in the commit. (`strata stats` cannot tell
# when the commit waits: its count of changed paths waits for the commit.)
python3 - "$STRATA_BIN" "$STORE" "$MP" <<'PY' || fail "the commit did not take the writer's bytes up to its close"
import os, subprocess, sys, time
strata, store, mp = sys.argv[1:4]
fd = os.open(mp + "/log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"before the commit\n")
commit = subprocess.Popen([strata, "--store", store, "commit", "-m", "cut", mp], stdout=subprocess.PIPE)
time.sleep(2)
assert commit.poll() is None, "the commit ended while a passthrough writer was open"
os.write(fd, b"written while the commit waited\n")
os.close(fd)
assert commit.wait() == 0, "the commit failed"
PY
expect_ok strata export main "$WORK/out2"
[[ $(cat "$WORK/out2/log") == $'before the commit\nwritten while the commit waited' ]] ||
  fail "the commit holds: $(cat "$WORK/out2/log")"
printf 'after the commit\n' >> "$MP/log"
[[ $(tail -n 1 "$MP/log") == "after the commit" ]] || fail "a write after the commit is lost"
expect_ok strata umount "$MP"

step "--passthrough off: writes reach the daemon"
expect_ok strata mount --transport strata --passthrough off --workspace w "$MP"
expect_ok strata stats --json "$MP"
json_true 'd["passthrough"]["on"] is False'
cmp -s "$WORK/expected" "$MP/big" || fail "the file reads differently after a remount"
printf 'more' >> "$MP/log"
expect_ok strata stats --json "$MP"
json_true 'd["operations"]["write"]["count"] > 0'
expect_ok strata stats "$MP"
expect_output_matches '^passthrough off$'
expect_ok strata umount "$MP"
