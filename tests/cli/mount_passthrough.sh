#!/usr/bin/env bash
# FUSE passthrough on the strata transport (docs/passthrough.md): files whose
# bytes are all local are read and written by the kernel straight from the
# workspace's data files. A file written that way (created, appended to,
# rewritten in place) reads back, stats and commits as exactly the bytes
# written, though no WRITE request reached the daemon; a commit asked for
# while a passthrough writer is open and writing succeeds and holds the bytes
# written up to its cut; --passthrough off sends the writes to the daemon;
# stats say which. The strata transport by default; $STRATA_FUSE_TRANSPORT
# may name strata-uring.
source "$(dirname "$0")/lib.sh"
use_mountpoint
transport=${STRATA_FUSE_TRANSPORT:-strata}
unset STRATA_FUSE_TRANSPORT

expect_ok "$STRATA_BIN" init "$STORE"

step "writes through passthrough are what the file holds and what a commit exports"
expect_ok strata mount --transport "$transport" --new --name w "$MP"
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

step "a commit holds open passthrough writers off for its cut"
# Long-lived writers, as a database keeps them: one thread rewrites all of a
# 4 MiB file in place (generation g in every byte, one pwrite), then appends
# line g to a log, again and again, both files open before, during and after a
# commit. The commit succeeds with them open, and holds both files as they
# were at one moment: the log's lines whole and in order (all that returned
# before the commit was asked for, none begun after it answered), the big
# file one generation throughout, the one of the log's last line or the next.
# The writes after the cut are in the workspace and in the next commit.
python3 - "$STRATA_BIN" "$STORE" "$MP" "$WORK/log-marks" <<'PY' || fail "the commit did not cut the open writers' writes"
import os, subprocess, sys, threading, time
strata, store, mp, marks = sys.argv[1:5]
log = os.open(mp + "/log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
db = os.open(mp + "/db", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
state = {"n": 0, "stop": False}
def step():
    g = state["n"]
    os.pwrite(db, bytes([g % 251]) * (4 << 20), 0)
    os.write(log, b"line %06d\n" % g)
    state["n"] = g + 1
def writer():
    while not state["stop"]:
        step()
        time.sleep(0.01)
for _ in range(20): step()
t = threading.Thread(target=writer); t.start()
time.sleep(0.3)
before = state["n"]          # lines whose write returned before the commit was asked for
start = time.monotonic()
commit = subprocess.run([strata, "--store", store, "commit", "-m", "cut", mp], capture_output=True, text=True)
took = time.monotonic() - start
after = state["n"] + 1       # no line from here on began before the commit answered
time.sleep(0.3)
state["stop"] = True; t.join()
os.write(log, b"after the commit\n")
assert commit.returncode == 0, "the commit failed while writers were open: " + commit.stderr
assert state["n"] > after, "the writer wrote nothing after the commit"
with open(marks, "w") as f: f.write(f"{before} {after} {state['n']} {took:.3f}\n")
os.close(log); os.close(db)
PY
read -r before after total took < "$WORK/log-marks"
echo "commit with open writers took ${took} s; ${before} steps before it, ${total} in all"
expect_ok strata export main "$WORK/out2"
python3 - "$WORK/out2" "$before" "$after" <<'PY' || fail "the commit holds other bytes than the writers' at one moment"
import sys
out, before, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(out + "/log", "rb").read()
assert len(data) % 12 == 0, f"the commit holds a torn line ({len(data)} bytes)"
n = len(data) // 12
assert data == b"".join(b"line %06d\n" % i for i in range(n)), "the lines in the commit are not the first ones, whole, in order"
assert before <= n <= after, f"the commit holds {n} lines: fewer than the {before} written before it, or more than the {after} begun before it answered"
big = open(out + "/db", "rb").read()
assert len(big) == 4 << 20, f"the big file is {len(big)} bytes in the commit"
gens = set(big)
assert len(gens) == 1, f"the big file mixes generations {sorted(gens)[:8]} in the commit: a write went on during the capture"
assert gens == {(n - 1) % 251} or gens == {n % 251}, f"the big file holds generation {gens} with {n} log lines: not one moment"
PY
python3 - "$MP/log" "$total" <<'PY' || fail "the writer's lines after the cut are not all in the workspace"
import sys
data = open(sys.argv[1], "rb").read()
n = int(sys.argv[2])
assert data == b"".join(b"line %06d\n" % i for i in range(n)) + b"after the commit\n", "the workspace's file is not every line written"
PY
expect_ok strata commit -m "after the cut" "$MP"
expect_ok strata export main "$WORK/out3"
cmp -s "$WORK/out3/log" "$MP/log" && cmp -s "$WORK/out3/db" "$MP/db" ||
  fail "the next commit does not hold what was written after the first one's cut"
printf 'after the commit\n' >> "$MP/log"
[[ $(tail -n 1 "$MP/log") == "after the commit" ]] || fail "a write after the commit is lost"

if [[ $transport == strata ]]; then
  step "a commit holds more open writers than the daemon has request threads"
  # On the classic loop a held FSYNC is handed over and keeps no request
  # thread (8 by default), so twelve writers are all held: the commit
  # succeeds, and each file holds whole lines. (Over io_uring a held FSYNC
  # keeps its ring entry, so a cut holds fewer files there.)
  python3 - "$STRATA_BIN" "$STORE" "$MP" "$WORK/many" <<'PY' || fail "the commit did not hold twelve open writers"
import os, subprocess, sys, threading, time
strata, store, mp, out = sys.argv[1:5]
fds = [os.open(f"{mp}/w{i:02d}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644) for i in range(12)]
state = {"n": 0, "stop": False}
def writer():
    while not state["stop"]:
        for fd in fds: os.write(fd, b"line %06d\n" % state["n"])
        state["n"] += 1
        time.sleep(0.005)
for fd in fds: os.write(fd, b"first\n")
t = threading.Thread(target=writer); t.start()
time.sleep(0.2)
commit = subprocess.run([strata, "--store", store, "commit", "-m", "twelve writers", mp], capture_output=True, text=True)
time.sleep(0.1)
state["stop"] = True; t.join()
for fd in fds: os.close(fd)
assert commit.returncode == 0, "the commit failed with twelve writers open: " + commit.stderr
subprocess.run([strata, "--store", store, "export", "main", out], check=True)
for i in range(12):
    data = open(f"{out}/w{i:02d}", "rb").read()
    lines = data.split(b"\n")
    assert lines[0] == b"first" and lines[-1] == b"", f"w{i:02d} in the commit: not whole lines"
    assert lines[1:-1] == [b"line %06d" % k for k in range(len(lines) - 2)], f"w{i:02d} in the commit: lines missing"
    assert open(f"{mp}/w{i:02d}", "rb").read().startswith(data), f"w{i:02d}: the workspace lost lines"
PY
fi

step "a daemon killed while an O_SYNC writer is open keeps what it wrote"
# Each write of an O_SYNC open is durable when it returns, though through
# passthrough the daemon never sees it: the workspace noted the writer
# durably at its open, and the next mount takes the file from its data file.
python3 - "$STRATA_BIN" "$STORE" "$MP" "$(awk 'NR==1' "$STORE/workspaces/w/mounted")" <<'PY' || fail "the synced writer's test did not run"
import json, os, signal, subprocess, sys
strata, store, mp, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def write_opens():
    out = subprocess.run([strata, "--store", store, "stats", "--json", mp], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["passthrough"]["write_opens"]
before = write_opens()
fd = os.open(mp + "/synced", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_SYNC, 0o644)
# Asked before the writes: stats looks at every changed file, which takes
# the data file's size into the workspace (not durably), and would hide
# what this step is about.
assert write_opens() == before + 1, "the O_SYNC open did not pass through"
for i in range(100): os.write(fd, b"synced %04d\n" % i)
os.kill(pid, signal.SIGKILL)
PY
expect_ok strata mount --transport "$transport" --workspace w "$MP"
python3 - "$MP/synced" <<'PY' || fail "writes through an O_SYNC passthrough open were lost when the daemon was killed"
import sys
data = open(sys.argv[1], "rb").read()
assert data == b"".join(b"synced %04d\n" % i for i in range(100)), f"{len(data)} bytes after the restart"
PY
expect_ok strata umount "$MP"

step "--passthrough off: writes reach the daemon"
expect_ok strata mount --transport "$transport" --passthrough off --workspace w "$MP"
expect_ok strata stats --json "$MP"
json_true 'd["passthrough"]["on"] is False'
cmp -s "$WORK/expected" "$MP/big" || fail "the file reads differently after a remount"
printf 'more' >> "$MP/log"
expect_ok strata stats --json "$MP"
json_true 'd["operations"]["write"]["count"] > 0'
expect_ok strata stats "$MP"
expect_output_matches '^passthrough off$'
expect_ok strata umount "$MP"
