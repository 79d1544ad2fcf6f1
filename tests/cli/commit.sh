#!/usr/bin/env bash
# strata commit on real mounts: what a commit holds is what the mount showed at
# the cut, byte for byte; a commit while a writer appends holds an exact prefix;
# shared mmap writes reach the commit; nothing to commit; two workspaces on one
# branch (the second is told "head moved"); committing a workspace that is not
# mounted, by its name.
source "$(dirname "$0")/lib.sh"
use_mountpoint
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

mkdir -p "$WORK/src/a/deep" "$WORK/src/b"
for i in $(seq 20); do printf 'file %s\n' "$i" >"$WORK/src/a/f$i"; done
head -c 5000000 /dev/urandom >"$WORK/src/b/big.bin"
printf 'deep\n' >"$WORK/src/a/deep/x"

step "a workspace on an imported branch; change it; commit"
expect_ok "$STRATA_BIN" init "$STORE"
base=$(import_dir "$WORK/src" main base)
expect_ok strata mount --branch main --name ws1 "$MP"
printf 'new\n' >"$MP/a/new.txt"
rm "$MP/a/f3"
mv "$MP/a/f4" "$MP/b/moved"
mkdir "$MP/c"
ln -s ../a/f1 "$MP/c/link"
printf 'PATCH' | dd of="$MP/b/big.bin" bs=1 seek=2500000 conv=notrunc status=none
setfattr -n user.note -v hello "$MP/a/f1"
expect_ok strata commit "$MP" -m "first change" --json
c1=$(json 'd["commit"]')
json_true 'd["branch"] == "main" and d["stats"]["files_captured"] >= 2'
json_true 'd["stats"]["bytes_hashed"] < 5000000'  # big.bin is re-chunked around the patch only
expect_ok strata log main --json
json_true 'd[0]["id"] == "'"$c1"'"'

step "the commit holds exactly what the mount shows"
expect_ok strata export "$c1" "$WORK/exported"
assert_same_tree "$MP" "$WORK/exported"
expect_ok strata commit "$MP" -m "again"
expect_output_matches "nothing to commit"
expect_ok strata workspace list --json
json_true 'd[0]["changed_paths"] == 0'

step "a commit while a writer appends records holds an exact prefix of them"
python3 - "$MP/log" "$WORK/stop" <<'PY' &
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
i = 0
while not os.path.exists(sys.argv[2]):
    os.write(fd, b"record %08d\n" % i)
    i += 1
PY
writer=$!
BG_PIDS+=("$writer")
for _ in $(seq 300); do [[ $(stat -c %s "$MP/log" 2>/dev/null || echo 0) -ge 16000 ]] && break; sleep 0.1; done
expect_ok strata commit "$MP" -m "during writes" --json
c2=$(json 'd["commit"]')
touch "$WORK/stop"
wait "$writer"
[[ $c2 =~ ^[0-9a-f]{64}$ ]] || fail "no commit was made while the writer ran"
expect_ok strata cat "$c2:log"
python3 - "$OUT" <<'PY' || fail "the committed log is not an exact prefix of the records"
import sys
data = open(sys.argv[1], "rb").read()
assert len(data) % 16 == 0 and len(data) > 0, len(data)
for i in range(len(data) // 16):
    assert data[i * 16:(i + 1) * 16] == b"record %08d\n" % i, i
PY

step "writes through a shared mapping reach the commit (syncfs before the cut)"
python3 - "$MP/mapped" "$STRATA_BIN" "$STORE" <<'PY' || fail "the commit during the mapping failed"
import mmap, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 8192)
m = mmap.mmap(fd, 8192, mmap.MAP_SHARED)
m[100:114] = b"through a mmap"
# no msync, no close before the commit: the kernel holds the dirty page
subprocess.run([sys.argv[2], "--store", sys.argv[3], "commit", os.path.dirname(sys.argv[1]), "-m", "mmap"],
               check=True, stdout=subprocess.DEVNULL)
PY
expect_ok strata cat "main:mapped"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); assert d[100:114] == b"through a mmap", d[90:120]' "$OUT" ||
  fail "the shared mapping's write is not in the commit"

step "two workspaces on one branch: the second to commit is told head moved"
expect_ok strata mount --branch main --name ws2 "$MP2"
printf 'one\n' >"$MP/from-one"
printf 'two\n' >"$MP2/from-two"
expect_ok strata commit "$MP" -m "one wins"
expect_exit 4 strata commit "$MP2" -m "two loses"
expect_stderr_matches "head moved"
[[ -e $MP2/from-two ]] || fail "a refused commit lost the workspace's change"
expect_ok strata umount "$MP2"
expect_ok strata workspace end ws2 --discard

step "a workspace that is not mounted is committed by name"
expect_ok strata mount --new --name fresh "$MP2"
printf 'fresh\n' >"$MP2/f"
expect_ok strata umount "$MP2"
expect_fail strata commit fresh -m "no branch yet"
expect_stderr_matches "tracks no branch"
expect_ok strata commit fresh -m "fresh start" --branch other
expect_ok strata cat other:f
[[ $(cat "$OUT") == fresh ]] || fail "the committed file of an unmounted workspace is wrong"
expect_fail strata commit nosuch -m x
expect_fail strata commit "$MP" -m ""

step "kill -9 of the daemon in the middle of a commit: the workspace and the store stay whole"
head -c 150000000 /dev/urandom >"$WORK/big-new.bin"
cp "$WORK/big-new.bin" "$MP/big-new.bin"
printf 'small\n' >"$MP/small-new"
strata commit "$MP" -m "interrupted" >"$WORK/interrupted.out" 2>&1 &
committer=$!
sleep 0.7
pid=$(awk 'NR==1' "$STORE/workspaces/ws1/mounted")
kill -9 "$pid"
wait "$committer" && echo "note: the commit finished before the kill" >&2
expect_ok strata mount --workspace ws1 "$MP"
cmp "$WORK/big-new.bin" "$MP/big-new.bin" || fail "the file being committed was damaged by the crash"
[[ $(cat "$MP/small-new") == small ]] || fail "a change was lost by the crash"
expect_ok strata verify
expect_ok strata commit "$MP" -m "after the crash" --json
after=$(json 'd["commit"] or ""')
expect_ok strata log main --json
head_now=$(json 'd[0]["id"]')
[[ -z $after || $after == "$head_now" ]] || fail "the branch is not at the commit made after the crash"
expect_ok strata cat "main:big-new.bin"
cmp "$WORK/big-new.bin" "$OUT" || fail "the committed file differs from what was written"
expect_ok strata umount "$MP"
