#!/usr/bin/env bash
# Remote stores on a real S3 server (Ceph RGW, started by the ceph fixture):
# remote add and its errors; push and pull moving only what is missing; a push
# killed half-way leaves the remote branch alone and the next push completes
# it; two stores pushing at once: exactly one wins, the other pulls (its
# commits replayed), pushes, and nothing is lost; a pull whose replay
# conflicts changes nothing; a read-only mount from the remote fetches only
# what is read; two machines' workspaces commit to one remote branch; reads
# fail with EIO, not a hang, while the server is stopped, and work again after;
# a pull leaves no cache copy; two mounts share one cache bound; packs deleted
# from the bucket behind strata's back are sent again by the next push and no
# ref moves onto them; unmounting needs neither credentials nor the server; a
# location whose config.json was lost beside its packs is refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
use_mountpoint
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
RGW_PID=$(cat "$(dirname "$STRATA_CEPH_ENV")/pids/radosgw")
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; kill -CONT "$RGW_PID" 2>/dev/null || true
      for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

STORE_B="$WORK/store-b"
STORE_C="$WORK/store-c"
strata_b() { "$STRATA_BIN" --store "$STORE_B" "$@"; }
strata_c() { "$STRATA_BIN" --store "$STORE_C" "$@"; }
BUCKET="cli-remote-$$-$RANDOM"
URL="s3://$BUCKET/team/one"
EP="$STRATA_S3_ENDPOINT"
s3_delete_under() { local k; for k in $(s3_keys "$1" "$2"); do s3 DELETE "$1/$k" >/dev/null; done; }
mkdir -p "$WORK/src/docs" "$WORK/src/data"
for i in $(seq 20); do printf 'document %s\n' "$i" >"$WORK/src/docs/d$i.txt"; done
head -c 3000000 /dev/urandom >"$WORK/src/data/blob.bin"
ln -s docs/d1.txt "$WORK/src/link"

step "remote add: bad names, URLs, endpoints and keys are refused with a clear error"
expect_ok "$STRATA_BIN" init "$STORE"
expect_fail strata remote add 'bad/name' "$URL" --endpoint "$EP"
expect_stderr_matches "not a valid remote name"
expect_fail strata remote add origin "http://$BUCKET" --endpoint "$EP"
expect_stderr_matches "s3://"
expect_fail strata remote add origin "$URL" --endpoint "$EP"
expect_stderr_matches "bucket"
expect_fail strata remote add origin "$URL" --endpoint http://127.0.0.1:1 --timeout 2 --create-bucket
expect_stderr_matches "127.0.0.1:1"
AWS_SECRET_ACCESS_KEY=wrong expect_fail strata remote add origin "$URL" --endpoint "$EP" --create-bucket
expect_stderr_matches "SignatureDoesNotMatch|secret"
if grep -q "wrong" "$ERR"; then fail "the secret appears in the message"; fi
[[ ! -e "$STORE/remotes/origin" ]] || fail "a refused remote add left $STORE/remotes/origin"
expect_ok strata remote add origin "$URL" --endpoint "$EP" --create-bucket
expect_fail strata remote add origin "$URL" --endpoint "$EP"
expect_stderr_matches "exists"
expect_ok strata remote list --json
json_true 'd[0]["name"] == "origin" and d[0]["url"] == "'"$URL"'"'
if grep -rq "$AWS_SECRET_ACCESS_KEY" "$STORE/remotes"; then fail "the secret was written into the store"; fi

step "push copies the branch; a second push has nothing to send; pull copies it back"
c1=$(import_dir "$WORK/src" main first)
expect_ok strata push origin main --json
json_true 'd["commits"] == 1 and d["chunks"] > 0 and d["head"] == "'"$c1"'"'
expect_ok strata push origin main
expect_output_matches "up to date"
expect_ok "$STRATA_BIN" init "$STORE_B"
expect_ok strata_b remote add origin "$URL" --endpoint "$EP"
expect_ok strata_b pull origin main --json
json_true 'd["head"] == "'"$c1"'" and d["commits"] == 1'
expect_ok strata_b export main "$WORK/out-b"
assert_same_tree "$WORK/src" "$WORK/out-b"
expect_ok strata --remote origin log main
expect_output_matches "first"

step "a push killed half-way leaves the remote branch alone; the next push sends the rest"
head -c 150000000 /dev/urandom >"$WORK/src/data/large.bin"
c2=$(import_dir "$WORK/src" main second)
# The remote's local index gains a row as each pack is uploaded; once the
# first is there (chunks go first, over 5 packs), the push is killed.
remote_index_packs() {
  /usr/bin/python3 -c 'import sqlite3, sys
try:
    print(sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=5).execute("select count(*) from packs").fetchone()[0])
except sqlite3.Error:
    print(-1)' "$STORE/remotes/origin/store/index.db"
}
packs_before=$(remote_index_packs)
# The binary itself in the background (not the strata function, whose
# subshell would be what the kill hits).
"$STRATA_BIN" --store "$STORE" push origin main >"$WORK/push1.out" 2>&1 &
push_pid=$!
for _ in $(seq 1000); do
  (( $(remote_index_packs) > packs_before )) && break
  kill -0 "$push_pid" 2>/dev/null || break
  sleep 0.01
done
kill -9 "$push_pid" 2>/dev/null || true
wait "$push_pid" 2>/dev/null || true
if grep -q "^pushed" "$WORK/push1.out"; then
  # The kill came too late (a fast machine): nothing to resume; the push is whole.
  echo "(the push finished before it could be killed)" >&2
else
  expect_ok strata --remote origin log main --json
  json_true 'd[0]["id"] == "'"$c1"'"' # still the first commit, whatever the killed push sent
fi
expect_ok strata push origin main --json
json_true 'd["head"] == "'"$c2"'"'
echo "resumed push: $(json 'd["chunks_present"]') chunks were there already, $(json 'd["chunks"]') sent ($(json 'd["chunk_bytes"]') bytes), $(json 'd["commits"]') commits" >&2
# What the killed push had sent (at least its first pack of chunks) is not
# sent again: less than large.bin's 150 MB goes. Where the kill lands depends
# on timing; transfer_test fails copies at every point in turn.
json_true 'd["chunk_bytes"] < 150000000'
expect_ok strata_b pull origin main
# What the pull fetched is in store-b's packs now, not kept in its cache too.
cached=$(find "$STORE_B/remotes/origin/cache" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
echo "cache of store-b after pulling 150 MB: $cached bytes" >&2
(( cached == 0 )) || fail "the pull left $cached bytes in the block cache"
expect_ok strata_b export main "$WORK/out-b2"
assert_same_content "$WORK/src" "$WORK/out-b2"

step "two stores push at once: one wins, the other is told, pulls (replaying its commit) and pushes"
rm -f "$WORK/src/data/large.bin"
mkdir -p "$WORK/a-side" "$WORK/b-side"
cp -a "$WORK/src/." "$WORK/a-side/"
cp -a "$WORK/src/." "$WORK/b-side/"
printf 'from A\n' >"$WORK/a-side/docs/a.txt"
printf 'from B\n' >"$WORK/b-side/docs/b.txt"
expect_ok strata import "$WORK/a-side" --branch main -m "A"
expect_ok strata_b import "$WORK/b-side" --branch main -m "B"
"$STRATA_BIN" --store "$STORE" push origin main >"$WORK/pa.out" 2>&1 & pa=$!
"$STRATA_BIN" --store "$STORE_B" push origin main >"$WORK/pb.out" 2>&1 & pb=$!
ra=0; wait $pa || ra=$?
rb=0; wait $pb || rb=$?
echo "push A exit $ra, push B exit $rb" >&2
if [[ "$ra$rb" != "04" && "$ra$rb" != "40" ]]; then
  cat "$WORK/pa.out" "$WORK/pb.out" >&2
  fail "expected exactly one push to win (exit 0) and the other to be refused (exit 4)"
fi
if [[ $ra == 4 ]]; then loser=strata; loser_out=pa.out; else loser=strata_b; loser_out=pb.out; fi
grep -qi "pull" "$WORK/$loser_out" || fail "the refused push does not say to pull: $(cat "$WORK/$loser_out")"
expect_ok $loser pull origin main
expect_output_matches "replayed 1 local commit"
expect_ok $loser push origin main
expect_ok "$STRATA_BIN" init "$STORE_C"
expect_ok strata_c remote add origin "$URL" --endpoint "$EP" --timeout 3
expect_ok strata_c pull origin main
expect_ok strata_c export main "$WORK/out-c"
[[ -f "$WORK/out-c/docs/a.txt" && -f "$WORK/out-c/docs/b.txt" ]] || fail "a pushed change was lost"
expect_ok strata_c log main --json
json_true '[c["message"] for c in d][:3] in (["A", "B", "second"], ["B", "A", "second"])'

step "the server stops answering in the middle of a push: the push fails within its timeout; the next one completes it"
# A second remote on the same location, with a short timeout.
expect_ok strata remote add quick "$URL" --endpoint "$EP" --timeout 3
expect_ok strata pull origin main
expect_ok strata export main "$WORK/a-more"
head -c 60000000 /dev/urandom >"$WORK/a-more/data/more.bin"
expect_ok strata import "$WORK/a-more" --branch main -m "A more"
"$STRATA_BIN" --store "$STORE" push quick main >"$WORK/push-stopped.out" 2>&1 &
push_pid=$!
# Stopped once the copy is under way (a pack being written for upload).
for _ in $(seq 1000); do
  [[ -n "$(ls -A "$STORE/remotes/quick/store/tmp" 2>/dev/null)" ]] && break
  kill -0 "$push_pid" 2>/dev/null || break
  sleep 0.01
done
kill -STOP "$RGW_PID"
start=$(date +%s)
rc=0; wait "$push_pid" || rc=$?
took=$(( $(date +%s) - start ))
kill -CONT "$RGW_PID"
echo "push with the server stopped: exit $rc after ${took}s: $(tail -n 1 "$WORK/push-stopped.out")" >&2
if (( rc == 0 )); then
  echo "(the push finished before the server stopped; nothing to resume)" >&2
else
  (( took <= 30 )) || fail "the push took ${took}s to give up with --timeout 3"
  grep -qi "no answer" "$WORK/push-stopped.out" || fail "the failed push does not say the server did not answer"
fi
expect_ok strata push quick main
expect_ok strata_c pull origin main
expect_ok strata_c export main "$WORK/out-more"
cmp "$WORK/out-more/data/more.bin" "$WORK/a-more/data/more.bin" || fail "more.bin differs after the resumed push"

step "a pull whose replay conflicts lists the path and leaves the branch where it was"
printf 'A again\n' >"$WORK/a-side/docs/d2.txt"
expect_ok strata pull origin main
expect_ok strata import "$WORK/a-side" --branch main -m "A edits d2"
expect_ok strata push origin main
expect_ok strata_b export main "$WORK/b2"
printf 'B again\n' >"$WORK/b2/docs/d2.txt"
expect_ok strata_b import "$WORK/b2" --branch main -m "B edits d2"
expect_ok strata_b log main --json
b_head=$(json 'd[0]["id"]')
expect_exit 4 strata_b pull origin main
expect_output_matches "conflict: docs/d2.txt"
expect_ok strata_b log main --json
json_true 'd[0]["id"] == "'"$b_head"'"'

step "a read-only mount from the remote fetches only what is read"
rm -rf "$STORE_C"
expect_ok "$STRATA_BIN" init "$STORE_C"
expect_ok strata_c remote add origin "$URL" --endpoint "$EP" --timeout 3
expect_ok strata_c mount --read-only origin/main "$MP"
[[ $(cat "$MP/docs/d1.txt") == "document 1" ]] || fail "wrong content through the remote mount"
cached=$(du -sb "$STORE_C/remotes/origin/cache" | cut -f1)
# A 1 MiB block or two of the pack holding the small files, not the 150 MB
# of earlier commits or the 3 MB blob (pack footers are indexed uncached).
(( cached <= 2200000 )) || fail "reading a small file cached $cached bytes: not lazy"

step "while the server is stopped, a read fails with EIO within the timeout; then works again"
kill -STOP "$RGW_PID"
start=$(date +%s)
rc=0; timeout 60 cat "$MP/data/blob.bin" >/dev/null 2>"$WORK/cat.err" || rc=$?
took=$(( $(date +%s) - start ))
kill -CONT "$RGW_PID"
echo "read with the server stopped: exit $rc after ${took}s: $(cat "$WORK/cat.err")" >&2
(( rc != 0 && rc != 124 )) || fail "the read did not fail (exit $rc)"
grep -q "Input/output error" "$WORK/cat.err" || fail "expected EIO, got: $(cat "$WORK/cat.err")"
(( took <= 20 )) || fail "the read took ${took}s with --timeout 3"
cmp "$MP/data/blob.bin" "$WORK/src/data/blob.bin" || fail "blob.bin is not read right once the server is back"
expect_ok strata_c umount "$MP"

step "workspaces of two machines on one remote branch: one commit wins, the other rebases"
expect_ok strata mount --branch origin/main --name wa "$MP"
expect_ok strata_c mount --branch origin/main --name wc "$MP2"
printf 'ws A\n' >"$MP/docs/ws-a.txt"
printf 'ws C\n' >"$MP2/docs/ws-c.txt"
expect_ok strata commit "$MP" -m "ws A"
expect_exit 4 strata_c commit "$MP2" -m "ws C"
expect_stderr_matches "head moved"
expect_ok strata_c rebase "$MP2"
expect_ok strata_c commit "$MP2" -m "ws C"
[[ $(cat "$MP2/docs/ws-a.txt") == "ws A" ]] || fail "the rebased workspace lacks the other machine's file"
expect_ok strata_c pull origin main
expect_ok strata_c export main "$WORK/out-final"
[[ -f "$WORK/out-final/docs/ws-a.txt" && -f "$WORK/out-final/docs/ws-c.txt" ]] || fail "a workspace commit was lost"
expect_ok strata umount "$MP"
expect_ok strata_c umount "$MP2"

step "two mounts sharing one remote's cache stay within its bound together"
mkdir -p "$WORK/big"
head -c 60000000 /dev/urandom >"$WORK/big/big.bin"
expect_ok strata import "$WORK/big" --branch big -m big
expect_ok strata push origin big
expect_ok strata_c remote add tiny "$URL" --endpoint "$EP" --cache-mib 16
expect_ok strata_c mount --read-only tiny/big "$MP"
expect_ok strata_c mount --read-only tiny/big "$MP2"
dd if="$MP/big.bin" of=/dev/null bs=1M count=28 status=none &
r1=$!
dd if="$MP2/big.bin" of=/dev/null bs=1M skip=30 count=28 status=none &
r2=$!
wait "$r1" || fail "reading through the first mount failed"
wait "$r2" || fail "reading through the second mount failed"
cached=$(find "$STORE_C/remotes/tiny/cache" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
echo "two mounts that read 28 MiB each with --cache-mib 16: $cached bytes cached" >&2
# The bound plus what each process may add between two looks at the directory.
(( cached <= 16 * 1048576 + 2 * 1048576 )) || fail "two mounts cached $cached bytes with --cache-mib 16"
expect_ok strata_c umount "$MP"
expect_ok strata_c umount "$MP2"

step "packs deleted from the bucket: push sends their objects again instead of trusting its index"
URL2="s3://$BUCKET/vanish"
expect_ok strata remote add gone "$URL2" --endpoint "$EP"
expect_ok strata push gone main
(( $(s3_keys "$BUCKET" vanish/packs/ | wc -l) > 0 )) || fail "the push left no pack in the bucket"
s3_delete_under "$BUCKET" vanish/packs/
[[ -z "$(s3_keys "$BUCKET" vanish/packs/)" ]] || fail "the packs are still listed after deleting them"
# The same head again: the bucket lacks it, so it is not "up to date".
expect_ok strata push gone main --json
json_true 'd["commits"] >= 1 and d["chunks"] > 0'
s3_delete_under "$BUCKET" vanish/packs/
expect_ok strata export main "$WORK/vanish-src"
printf 'child\n' >"$WORK/vanish-src/docs/child.txt"
child=$(import_dir "$WORK/vanish-src" main child)
expect_ok strata push gone main --json
json_true 'd["head"] == "'"$child"'" and d["chunks"] > 0 and d["commits"] >= 2'
echo "push after the packs vanished: $(json 'd["commits"]') commits, $(json 'd["trees"]') trees, $(json 'd["chunks"]') chunks sent again" >&2
STORE_D="$WORK/store-d"
expect_ok "$STRATA_BIN" init "$STORE_D"
expect_ok "$STRATA_BIN" --store "$STORE_D" remote add gone "$URL2" --endpoint "$EP"
expect_ok "$STRATA_BIN" --store "$STORE_D" pull gone main
expect_ok "$STRATA_BIN" --store "$STORE_D" export main "$WORK/vanish-out"
assert_same_content "$WORK/vanish-src" "$WORK/vanish-out"
expect_ok strata --remote gone fsck

step "packs vanish under a mounted workspace: its commit does not move the branch"
expect_ok strata mount --branch gone/main --name wv "$MP"
ref_before=$(s3 GET "$BUCKET/vanish/refs/main")
s3_delete_under "$BUCKET" vanish/packs/
printf 'after the loss\n' >"$MP/docs/lost.txt"
# Either the base commit cannot be read any more (the command's own opening
# of the remote forgot the lost packs) or the ref update finds them gone.
expect_fail strata commit "$MP" -m "on lost packs"
expect_stderr_matches "no longer in|vanished|not in the store"
[[ $(s3 GET "$BUCKET/vanish/refs/main") == "$ref_before" ]] || fail "the branch moved onto objects the bucket lacks"
# Counting its changes needs the base's trees: the count is unknown, and
# asking for it leaves the daemon serving.
expect_ok strata --remote gone workspace list --json
json_true '[w["changed_paths"] for w in d if w["name"] == "wv"] == [None]'
expect_ok strata stats "$MP" --json
json_true 'd["changed_paths"] is None'
expect_ok strata stats "$MP"
expect_output_matches "^workspace wv at .*, \? changed paths$"
expect_fail strata commit "$MP" -m "on lost packs"
expect_stderr_matches "no longer in|vanished|not in the store"

step "unmounting a remote's workspace needs neither credentials nor the server"
kill -STOP "$RGW_PID"
start=$(date +%s)
AWS_SHARED_CREDENTIALS_FILE="$WORK/no-such-file" expect_ok timeout 60 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  "$STRATA_BIN" --store "$STORE" umount "$MP"
took=$(( $(date +%s) - start ))
kill -CONT "$RGW_PID"
! mountpoint -q "$MP" || fail "the mount is still there"
(( took <= 15 )) || fail "unmounting took ${took}s with the server stopped"
# The loss is repaired by pushing from a store that holds the history. That
# push rewrites an existing ref, so it probes If-Match, and removes the probe
# a process of this host left when it was killed mid-probe.
sleep 0 & dead_pid=$!
wait "$dead_pid" || true
dead_probe="vanish/.probe/if-match-$(hostname | tr -cd 'A-Za-z0-9.-')-$dead_pid-0123456789abcdef"
s3 PUT "$BUCKET/$dead_probe" --data-binary probe >/dev/null
expect_ok strata push gone main
[[ -z "$(s3_keys "$BUCKET" "$dead_probe")" ]] || fail "the probe of a dead process is still there"
expect_ok "$STRATA_BIN" --store "$STORE_D" pull gone main
expect_ok strata --remote gone fsck

step "remote add on a location that has packs but lost its config.json refuses to write a new one"
s3 DELETE "$BUCKET/vanish/config.json" >/dev/null
rm -rf "$STORE_C"
expect_ok "$STRATA_BIN" init "$STORE_C"
expect_fail strata_c remote add gone "$URL2" --endpoint "$EP"
expect_stderr_matches "config.json"
[[ -z "$(s3_keys "$BUCKET" vanish/config.json)" ]] || fail "remote add wrote a new config.json beside old packs"
[[ ! -e "$STORE_C/remotes/gone" ]] || fail "the refused remote add left remotes/gone"
