#!/usr/bin/env bash
# kill -9 of the daemon while writers fsync: after remounting, every file whose
# fsync returned is intact.
source "$(dirname "$0")/lib.sh"
use_mountpoint


expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name crashme "$MP"

# Each writer creates files, writes a known pattern, fsyncs, then appends the
# name to its log only after fsync returned: the log lists what must survive.
writer() {
  local id=$1
  python3 - "$MP" "$id" "$WORK/acked-$id" <<'PY'
import os, sys
mp, wid, log = sys.argv[1], sys.argv[2], sys.argv[3]
with open(log, "a") as acked:
    for i in range(100000):
        name = f"w{wid}-{i}"
        data = (name * 2000).encode()[:65536]
        try:
            fd = os.open(os.path.join(mp, name), os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
        except OSError:
            break  # the daemon is gone
        acked.write(name + "\n")
        acked.flush()
PY
}
writer 1 & w1=$!
writer 2 & w2=$!
BG_PIDS+=("$w1" "$w2")
# Kill once the writers are well under way (however slow the machine is).
for _ in $(seq 600); do
  (($(cat "$WORK"/acked-* 2>/dev/null | wc -l) >= 40)) && break
  sleep 0.1
done
pid=$(awk 'NR==1' "$STORE/workspaces/crashme/mounted")
kill -9 "$pid"
wait "$w1" "$w2" 2>/dev/null || true
acked=$(cat "$WORK"/acked-* | wc -l)
(( acked > 10 )) || fail "only $acked files were acknowledged before the kill; the test proves nothing"

step "remount after the crash ($acked fsynced files to check); the dead mount is detached by itself"
expect_ok strata mount --workspace crashme "$MP"
bad=$(cat "$WORK"/acked-* | python3 -c '
import hashlib, os, sys
mp, bad = sys.argv[1], 0
for name in sys.stdin.read().split():
    want = (name * 2000).encode()[:65536]
    try:
        got = open(os.path.join(mp, name), "rb").read()
    except OSError as e:
        got = None
    if got != want:
        print("damaged or missing:", name, file=sys.stderr)
        bad += 1
print(bad)' "$MP")
(( bad == 0 )) || fail "$bad of $acked fsynced files were lost or damaged"
expect_ok strata umount "$MP"

step "kill -9 and mount again at once, ten times: the dead mount is detached every time"
for i in $(seq 10); do
  expect_ok strata mount --workspace crashme "$MP"
  python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, sys.argv[2].encode()); os.fsync(fd); os.close(fd)' "$MP/round-$i" "round $i"
  kill -9 "$(awk 'NR==1' "$STORE/workspaces/crashme/mounted")"
  expect_ok strata mount --workspace crashme "$MP"
  [[ $(cat "$MP/round-$i") == "round $i" ]] || fail "round $i: the file fsynced before the kill is not there"
  kill -9 "$(awk 'NR==1' "$STORE/workspaces/crashme/mounted")"
done
expect_ok strata mount --workspace crashme "$MP"
expect_ok strata umount "$MP"

# The race itself, made certain: the daemon is stopped (SIGSTOP), so that the
# new mount's statfs waits for an answer, and is killed only then; the kernel
# aborts the waiting request (ECONNABORTED), as it does for a statfs that
# reaches a killed daemon still exiting. That is a dead daemon, not a live one.
step "a mount whose statfs waited on the daemon while it was killed detaches it, five times"
expect_ok strata mount --workspace crashme "$MP"
for i in $(seq 5); do
  pid=$(awk 'NR==1' "$STORE/workspaces/crashme/mounted")
  kill -STOP "$pid"
  "$STRATA_BIN" --store "$STORE" mount --workspace crashme "$MP" >"$WORK/race.out" 2>"$WORK/race.err" &
  mounter=$!
  waited=""
  for _ in $(seq 500); do
    waited=$(cat "/proc/$mounter/wchan" 2>/dev/null || true)
    [[ $waited == request_wait_answer || $waited == *fuse* ]] && break
    sleep 0.01
  done
  [[ $waited == request_wait_answer || $waited == *fuse* ]] ||
    fail "round $i: the new mount never waited on the stopped daemon (wchan '$waited')"
  kill -9 "$pid"
  rc=0
  wait "$mounter" || rc=$?
  (( rc == 0 )) || fail "round $i: mounting while the old daemon was being killed exited $rc: $(cat "$WORK/race.err")"
  [[ $(cat "$MP/round-10") == "round 10" ]] || fail "round $i: a file fsynced before is not there"
done
expect_ok strata umount "$MP"
