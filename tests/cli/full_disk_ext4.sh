#!/usr/bin/env bash
# A full disk as a user meets it: the store on a 200 MiB ext4 loop
# filesystem, filled through a mount with 1 MiB files, each fsynced, until
# ENOSPC. ext4 keeps blocks that not even root may allocate (2 % of the disk,
# here 4 MiB) while statvfs counts them as free for root, which the
# workspace's space reserve once took for room and so never released: every
# batch was then rolled back with "database or disk is full", deletions that
# had returned success came back within seconds and after a remount, and no
# space ever came back.
# Here: a commit fails on the full disk; deleting files then succeeds, gives
# the space back, and the deletions stay, also after a kill -9 of the daemon
# and a remount; every fsynced file that was not deleted is intact; the
# workspace commits once there is room.
source "$(dirname "$0")/lib.sh"
use_mountpoint
require_root
command -v mkfs.ext4 >/dev/null || { echo "SKIP: no mkfs.ext4" >&2; exit 77; }
SMALL="$WORK/small"
mkdir -p "$SMALL"
truncate -s 200M "$WORK/disk.img"
mkfs.ext4 -q -F "$WORK/disk.img" >/dev/null
mount -o loop "$WORK/disk.img" "$SMALL" || { echo "SKIP: cannot mount a loop filesystem" >&2; exit 77; }
# set +e: under errexit, the (exit $rc) that hands a failure's status on to
# _cleanup would end the trap there and leave the scratch directory behind.
trap 'rc=$?; set +e; fusermount3 -u -z "$MP" 2>/dev/null; umount "$SMALL" 2>/dev/null || umount -l "$SMALL"; (exit $rc); _cleanup' EXIT
STORE="$SMALL/store"

free_bytes() { echo $(( $(stat -f -c '%a * %S' "$SMALL") )); }
daemon_pid() { awk 'NR==1' "$STORE/workspaces/ws/mounted"; }

# check_files FIRST LAST: files fFIRST..fLAST hold their bytes (random, so
# that a commit cannot compress them into the little room left).
check_files() {
  python3 - "$MP" "$1" "$2" <<'PY'
import random, sys
mp, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(first, last + 1):
    want = random.Random(i).randbytes(1 << 20)
    got = open(f"{mp}/f{i}", "rb").read()
    if got != want:
        sys.exit(f"FAIL: f{i} reads otherwise ({len(got)} bytes)")
PY
}

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ws "$MP"

step "fill the disk with 1 MiB files, each fsynced, until ENOSPC"
written=$(python3 - "$MP" <<'PY'
import errno, os, random, sys
mp = sys.argv[1]
for i in range(400):
    data = random.Random(i).randbytes(1 << 20)
    try:
        fd = os.open(f"{mp}/f{i}", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            sys.exit(f"FAIL: f{i}: {e} (a full disk must give ENOSPC)")
        os.unlink(f"{mp}/f{i}")
        print(i)
        break
else:
    sys.exit("FAIL: 400 MiB fitted on a 200 MiB disk")
PY
)
(( written > 100 )) || fail "only $written files fitted"
echo "$written files of 1 MiB written; $(free_bytes) bytes free" >&2
check_files 0 $(( written - 1 ))

step "a commit fails on the full disk"
expect_fail strata commit "$MP" -m "on a full disk" --branch full
expect_stderr_matches "[Nn]o space left"

step "deleting 20 files succeeds and gives their space back"
before=$(free_bytes)
for i in $(seq 0 19); do rm "$MP/f$i" || fail "rm f$i failed on the full disk"; done
for _ in $(seq 100); do
  (( $(free_bytes) >= before + 15 * 1048576 )) && break
  sleep 0.1
done
(( $(free_bytes) >= before + 15 * 1048576 )) ||
  fail "deleting 20 MiB freed $(( $(free_bytes) - before )) bytes in 10 s; data files left: $(ls "$STORE/workspaces/ws/data" | wc -l), being deleted: $(ls "$STORE/workspaces/ws/data/released" | wc -l), reserve: $(stat -c %s "$STORE/workspaces/ws/reserve" 2>&1); log: $(tail -n 5 "$STORE/workspaces/ws/daemon.log")"
sleep 2  # a batch rolled back brought the files back within this
for i in $(seq 0 19); do [[ ! -e $MP/f$i ]] || fail "f$i, deleted, is back"; done

step "the deletions stay after kill -9 of the daemon and a remount"
kill -9 "$(daemon_pid)"
for _ in $(seq 50); do
  "$STRATA_BIN" --store "$STORE" mount --workspace ws "$MP" 2>"$ERR" && break
  sleep 0.1
done
mountpoint -q "$MP" || fail "the workspace does not mount again: $(cat "$ERR")"
for i in $(seq 0 19); do [[ ! -e $MP/f$i ]] || fail "f$i, deleted, is back after the remount"; done
check_files 20 $(( written - 1 ))

step "the workspace commits once there is room"
keep=$(( written - 10 ))
for i in $(seq 20 $(( keep - 1 ))); do rm "$MP/f$i"; done
expect_ok strata commit "$MP" -m "after the disk was full" --branch after
expect_ok strata umount "$MP"
expect_ok strata ls after --json
json_true 'sorted(e["name"] for e in d) == sorted("f%d" % i for i in range('"$keep"', '"$written"'))'
expect_ok strata cat "after:f$keep"
cmp -s "$OUT" <(python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(int(sys.argv[1])).randbytes(1 << 20))' "$keep") ||
  fail "the commit holds other bytes for f$keep"
expect_ok strata fsck
