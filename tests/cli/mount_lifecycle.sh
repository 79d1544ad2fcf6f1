#!/usr/bin/env bash
# A workspace on a branch: mount, see the base tree, change it, unmount, mount
# again and find every change; list; end (refused with changes unless --discard).
# On any transport ($STRATA_FUSE_TRANSPORT); the request loop's counters are
# checked only on libfuse's, whose loop they count.
source "$(dirname "$0")/lib.sh"
use_mountpoint
on_libfuse() { [[ ${STRATA_FUSE_TRANSPORT:-libfuse} == libfuse ]]; }

mkdir -p "$WORK/src/dir"
printf 'hello\n' >"$WORK/src/a.txt"
head -c 3000000 /dev/urandom >"$WORK/src/dir/big.bin"
ln -s a.txt "$WORK/src/link"

step "import a base and mount a workspace on it"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
expect_ok strata mount --branch main --name ws1 "$MP"
expect_output_matches "ws1"
grep -q " $MP fuse" /proc/mounts || fail "no FUSE mount at $MP in /proc/mounts"

step "the base tree is visible, byte for byte"
cmp "$WORK/src/a.txt" "$MP/a.txt" || fail "a.txt differs"
cmp "$WORK/src/dir/big.bin" "$MP/dir/big.bin" || fail "big.bin differs"
[[ $(readlink "$MP/link") == a.txt ]] || fail "symlink target differs"

step "change the workspace"
printf 'new file\n' >"$MP/new.txt"
mkdir "$MP/newdir"
mv "$MP/a.txt" "$MP/newdir/moved.txt"
printf 'PATCH' | dd of="$MP/dir/big.bin" bs=1 seek=1000000 conv=notrunc status=none
rm "$MP/link"

step "the daemon counts what it did, per operation"
rmdir "$MP/dir" 2>/dev/null && fail "rmdir of a non-empty directory succeeded"
expect_ok strata stats "$MP" --json
json_true 'd["workspace"] == "ws1" and d["changed_paths"] > 0'
json_true 'd["operations"]["write"]["count"] >= 2 and d["operations"]["lookup"]["count"] >= 3'
json_true 'd["operations"]["rmdir"]["errors"] >= 1 and d["operations"]["rename"]["count"] >= 1'
json_true 'sum(d["operations"]["write"]["latency_us"].values()) == d["operations"]["write"]["count"]'
# The workspace's own counters: what it wrote and read, how it committed.
# With FUSE passthrough (strata transports) the new file's 9 bytes go from
# the kernel to its data file and never reach the daemon; the patch of a
# base file always does.
json_true 'd["workspace_counters"]["bytes_read"] >= 3000000'
json_true '(d["passthrough"]["write_opens"] >= 1 and d["workspace_counters"]["bytes_written"] >= 5) if d["passthrough"]["on"] else d["workspace_counters"]["bytes_written"] >= 9 + 5'
json_true 'd["workspace_counters"]["directories_loaded"] >= 2 and d["workspace_counters"]["chunk_cache"]["misses"] >= 1'
json_true 'isinstance(d["workspace_counters"]["data_files_to_delete"], int)'
# The request loop answered the namespace requests and the writes (no commit
# was running) itself, and gave its workers exactly the requests that may wait
# on I/O: reads, syncs, fallocate, lseek, copy_file_range.
if on_libfuse; then
  json_true 'd["request_loop"]["inline_requests"] >= d["operations"]["lookup"]["count"] + d["operations"]["write"]["count"]'
  json_true 'd["operations"]["read"]["count"] >= 1 and d["request_loop"]["worker_requests"] == sum(d["operations"].get(k, {}).get("count", 0) for k in ("read", "fsync", "fsyncdir", "fallocate", "lseek", "copy_file_range"))'
fi
# Files open and close without asking the daemon (FUSE_CAP_NO_OPEN_SUPPORT):
# 50 opens of one file send at most the one OPEN that says so, and no RELEASE.
# With passthrough OPEN cannot be skipped (it hands out the backing file), so
# there each of the 50 opens is one the kernel then serves itself.
counts_before=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["operations"].get("open", {}).get("count", 0), d["passthrough"]["opens"])' "$OUT")
read -r opens_before passthrough_before <<<"$counts_before"
for _ in $(seq 50); do cat "$MP/new.txt" >/dev/null; done
expect_ok strata stats "$MP" --json
json_true "d['passthrough']['opens'] - $passthrough_before >= 50 if d['passthrough']['on'] else d['operations'].get('open', {}).get('count', 0) - $opens_before <= 1"
json_true "d['passthrough']['on'] or d['operations'].get('release', {}).get('count', 0) < 50"
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$MP/new.txt"
expect_ok strata stats "$MP" --json
json_true 'd["workspace_counters"]["syncs"] >= 1 and d["workspace_counters"]["batches_committed"] >= 1'
json_true 'd["workspace_counters"]["operations_committed"] >= 5'
expect_ok strata stats "$MP"
expect_output_matches "write"

step "umount of a busy mount is refused, says why, and leaves the mount working"
(cd "$MP/newdir" && exec sleep 60) &
busy_pid=$!
BG_PIDS+=("$busy_pid")
for _ in $(seq 50); do [[ $(readlink "/proc/$busy_pid/cwd" 2>/dev/null) == "$MP/newdir" ]] && break; sleep 0.1; done
expect_fail strata umount "$MP"
expect_stderr_matches "cannot unmount $MP .*busy"
grep -q " $MP fuse" /proc/mounts || fail "a refused umount unmounted"
cmp "$MP/new.txt" <(printf 'new file\n') || fail "the mount stopped working after a refused umount"
kill "$busy_pid" && wait "$busy_pid" 2>/dev/null || true

step "unmount, mount again: every change is still there"
expect_ok strata umount "$MP"
grep -q " $MP fuse" /proc/mounts && fail "still mounted after umount"
expect_ok strata workspace list --json
json_true 'len(d) == 1 and d[0]["name"] == "ws1" and d[0]["branch"] == "main" and d[0]["mounted_at"] == "" and d[0]["changed_paths"] > 0'
expect_ok strata mount --workspace ws1 "$MP"
[[ $(cat "$MP/new.txt") == "new file" ]] || fail "new.txt lost"
[[ $(cat "$MP/newdir/moved.txt") == hello ]] || fail "rename lost"
[[ ! -e "$MP/a.txt" && ! -L "$MP/link" ]] || fail "removed entries came back"
expected=$(python3 -c 'import sys; d=bytearray(open(sys.argv[1],"rb").read()); d[1000000:1000005]=b"PATCH"; sys.stdout.buffer.write(d)' "$WORK/src/dir/big.bin" | sha256sum)
[[ $(sha256sum <"$MP/dir/big.bin") == "$expected" ]] || fail "patched big.bin is wrong after remount"

step "a second mount of the same workspace is refused"
mkdir -p "$WORK/mnt2"
expect_fail strata mount --workspace ws1 "$WORK/mnt2"
expect_stderr_matches "already mounted"

step "workspace end refuses to drop changes, then ends with --discard"
expect_fail strata workspace end ws1
expect_stderr_matches "uncommitted"
grep -q " $MP fuse" /proc/mounts || fail "a refused end unmounted the workspace"
expect_ok strata workspace end "$MP" --discard
grep -q " $MP fuse" /proc/mounts && fail "end did not unmount"
expect_ok strata workspace list --json
json_true 'd == []'

step "bad input: no such workspace, mountpoint that is a file, two modes"
expect_fail strata mount --workspace nosuch "$MP"
expect_fail strata mount --new "$WORK/src/a.txt"
expect_fail strata mount --new --branch main "$MP"
expect_fail strata umount "$MP"

step "a workspace name with '/' (like a branch) mounts, reports and unmounts"
expect_ok strata mount --new --name team/ws2 "$MP"
touch "$MP/x"
expect_ok strata stats "$MP" --json
json_true 'd["workspace"] == "team/ws2" and d["operations"]["create"]["count"] >= 1'
expect_ok strata workspace list --json
json_true 'd[0]["name"] == "team/ws2" and d[0]["mounted_at"] != ""'
expect_ok strata umount "$MP"
expect_ok strata workspace end team/ws2 --discard

step "a mount that fails leaves no new workspace behind, and says why"
# In a private mount namespace /dev/fuse is replaced by /dev/null, so the
# kernel refuses the FUSE mount itself.
for mode in "" --foreground; do
  expect_fail unshare -m sh -c 'mount --bind /dev/null /dev/fuse && exec "$@"' sh \
    "$STRATA_BIN" --store "$STORE" mount $mode --new --name doomed "$MP"
  expect_stderr_matches "cannot mount on $MP"
  expect_ok strata workspace list --json
  json_true 'all(w["name"] != "doomed" for w in d)'
done

step "--foreground serves in the calling process until unmounted"
"$STRATA_BIN" --store "$STORE" mount --foreground --new --name fg "$MP" >"$WORK/fg.out" 2>&1 &
fg_pid=$!
BG_PIDS+=("$fg_pid")
for _ in $(seq 100); do grep -q " $MP fuse" /proc/mounts && break; sleep 0.1; done
grep -q " $MP fuse" /proc/mounts || fail "the foreground mount never appeared: $(cat "$WORK/fg.out")"
printf 'served\n' >"$MP/f"
expect_ok strata umount "$MP"
wait "$fg_pid" || fail "the foreground daemon exited with $?: $(cat "$WORK/fg.out")"
expect_ok strata mount --workspace fg "$MP"
[[ $(cat "$MP/f") == served ]] || fail "a file written to the foreground mount was lost"
expect_ok strata workspace end fg --discard

step "a store deeper than a socket address holds: stats and commit still reach the daemon"
# A Unix socket address holds 107 bytes of path; the control socket of this
# store lies well past that, so the daemon and the CLI reach it through its
# directory.
deep="$WORK/$(printf 'a-rather-long-folder-name-%02d/' $(seq 1 4))store"
(( ${#deep} > 140 )) || fail "the deep store path is too short to test this: ${#deep}"
mkdir -p "$(dirname "$deep")"
"$STRATA_BIN" --store "$deep" init >/dev/null || fail "init of the deep store failed"
expect_ok "$STRATA_BIN" --store "$deep" mount --new --name deep "$MP"
printf 'deep\n' >"$MP/f"
expect_ok "$STRATA_BIN" --store "$deep" stats "$MP" --json
json_true 'd["workspace"] == "deep" and d["changed_paths"] >= 1'
expect_ok "$STRATA_BIN" --store "$deep" commit "$MP" -m deep --branch deep
expect_ok "$STRATA_BIN" --store "$deep" umount "$MP"
expect_ok "$STRATA_BIN" --store "$deep" export deep "$WORK/deep-out"
[[ $(cat "$WORK/deep-out/f") == deep ]] || fail "the commit of the deep store's mount lost f"

step "commands given only the mountpoint find its store; a second mount on top is refused"
# The mount's source names its store, so umount, stats, commit and diff of a
# mountpoint reach the workspace whatever --store or STRATA_STORE say. A store
# path with a space and a comma checks the escaping on the way to the kernel
# and back out of /proc/mounts.
away="$WORK/another store, elsewhere"
"$STRATA_BIN" --store "$away" init >/dev/null || fail "init of the second store failed"
expect_ok "$STRATA_BIN" --store "$away" mount --new --name away "$MP"
grep -q "^strata:away:$WORK/another\\\\040store,\\\\040elsewhere $MP fuse.strata " /proc/mounts ||
  fail "the mount's source does not name its store: $(grep " $MP " /proc/mounts)"
printf 'away\n' >"$MP/f"
expect_ok "$STRATA_BIN" stats "$MP" --json  # no --store, and no store at the default place
json_true 'd["workspace"] == "away" and d["changed_paths"] >= 1'
expect_ok strata stats "$MP" --json  # --store names another store: the mount's own wins
json_true 'd["workspace"] == "away"'
expect_ok env STRATA_STORE="$STORE" "$STRATA_BIN" diff "$MP" --name-status
expect_output_matches "A[[:space:]]+f"
expect_ok env STRATA_STORE="$STORE" "$STRATA_BIN" commit "$MP" -m away --branch away
expect_fail "$STRATA_BIN" --store "$away" mount --new --name over "$MP"
expect_stderr_matches "already a strata mount \(workspace 'away'\)"
[[ $(grep -c " $MP fuse.strata " /proc/mounts) == 1 ]] || fail "a second mount went on top of the first"
expect_ok "$STRATA_BIN" umount "$MP"
grep -q " $MP fuse" /proc/mounts && fail "still mounted after umount by mountpoint alone"
expect_ok "$STRATA_BIN" --store "$away" export away "$WORK/away-out"
[[ $(cat "$WORK/away-out/f") == away ]] || fail "the commit made by mountpoint alone lost f"
expect_ok "$STRATA_BIN" --store "$away" workspace list --json
json_true 'len(d) == 1 and d[0]["name"] == "away" and d[0]["mounted_at"] == ""'

on_libfuse || exit 0
step "--poll-us 0: the dispatcher never polls; by default it catches requests while polling"
expect_ok strata mount --new --name nopoll --poll-us 0 "$MP"
for i in $(seq 100); do printf '%s\n' "$i" >"$MP/n$i"; done
rm "$MP"/n*
expect_ok strata stats "$MP" --json
# With no polling window nothing can be caught while polling. How often the
# dispatcher sleeps depends on the machine's load (a request sent while it is
# descheduled after an answer is found queued), so only "at least once" holds
# for certain: it sleeps while the shell starts rm.
json_true 'd["request_loop"]["caught_polling"] == 0'
json_true 'd["request_loop"]["sleeps"] >= 1'
expect_ok strata umount "$MP"
expect_ok strata mount --new --name polls "$MP"
for i in $(seq 100); do printf '%s\n' "$i" >"$MP/n$i"; done
rm "$MP"/n*
expect_ok strata stats "$MP" --json
json_true 'd["request_loop"]["caught_polling"] > 0'
expect_ok strata umount "$MP"
