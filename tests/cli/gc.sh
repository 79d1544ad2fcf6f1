#!/usr/bin/env bash
# strata gc and fsck on a store in use: gc deletes what no branch or workspace
# reaches and nothing else, also while a mounted workspace commits again and
# again content that the deleted branch held (dedup hits on garbage); a
# read-only mount keeps its commit alive; kill -9 in the middle of gc leaves a
# store that fsck passes and that exports every branch as before; fsck reports
# a missing object with the path through which it is reached.
source "$(dirname "$0")/lib.sh"
use_mountpoint
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

# export_all DIR: every branch exported under DIR/<branch>.
export_all() {
  mkdir -p "$1"
  local b
  for b in $(strata branch list --json | python3 -c 'import json,sys; print(" ".join(x["name"] for x in json.load(sys.stdin)))'); do
    expect_ok strata export "$b" "$1/$b"
  done
}

mkdir -p "$WORK/keep" "$WORK/blobs"
for i in $(seq 30); do printf 'kept %s\n' "$i" >"$WORK/keep/k$i"; done
for i in $(seq 8); do head -c 1500000 /dev/urandom >"$WORK/blobs/b$i"; done

step "a branch deleted; gc removes exactly what only it reached"
expect_ok "$STRATA_BIN" init "$STORE"
import_dir "$WORK/keep" main >/dev/null
import_dir "$WORK/blobs" scratch >/dev/null
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'
expect_ok strata branch delete scratch
expect_ok strata gc --dry-run --json
json_true 'd["objects_deleted"] > 8 and d["dry_run"]'
would=$(json 'd["objects_deleted"]')
expect_ok strata fsck --json
json_true 'd["unreachable"] == '"$would"  # the dry run deleted nothing
expect_ok strata gc --json
json_true 'd["objects_deleted"] == '"$would"' and d["pack_bytes_after"] < d["pack_bytes_before"]'
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'
export_all "$WORK/e1"
assert_same_content "$WORK/keep" "$WORK/e1/main"

step "gc while a mounted workspace commits the deleted branch's content again"
import_dir "$WORK/blobs" scratch >/dev/null
expect_ok strata mount --branch main --name ws "$MP"
expect_ok strata branch delete scratch  # its chunks are garbage now, and about to be reused
(
  for i in $(seq 8); do
    cp "$WORK/blobs/b$i" "$MP/b$i"
    printf 'round %s\n' "$i" >"$MP/round"
    "$STRATA_BIN" --store "$STORE" commit "$MP" -m "round $i" >/dev/null
  done
) &
committer=$!
BG_PIDS+=("$committer")
gcs=0
while kill -0 "$committer" 2>/dev/null; do
  expect_ok strata gc
  gcs=$((gcs + 1))
done
wait "$committer" || fail "a commit failed while gc ran"
expect_ok strata gc
(( gcs >= 2 )) || fail "gc ran only $gcs time(s) during the commits"
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'
# Every commit of the race holds what was committed, byte for byte.
expect_ok strata log main --json
mapfile -t commits < <(json '"\n".join(c["id"] for c in d)')
for round in $(seq 8); do
  c=${commits[$((8 - round))]}
  rm -rf "$WORK/round"
  expect_ok strata export "$c" "$WORK/round"
  [[ $(cat "$WORK/round/round") == "round $round" ]] || fail "commit of round $round holds $(cat "$WORK/round/round")"
  for i in $(seq "$round"); do cmp -s "$WORK/blobs/b$i" "$WORK/round/b$i" || fail "round $round: b$i differs"; done
done
expect_ok strata umount "$MP"

step "a read-only mount keeps its commit alive through gc"
mkdir -p "$WORK/ro"
printf 'only here\n' >"$WORK/ro/only"
ro=$(import_dir "$WORK/ro" ro)
expect_ok strata mount --read-only "$ro" "$MP2"
expect_ok strata branch delete ro
expect_ok strata gc
[[ $(cat "$MP2/only") == "only here" ]] || fail "the read-only mount lost its file to gc"
expect_ok strata umount "$MP2"
expect_ok strata gc --json
json_true 'd["objects_deleted"] >= 3'  # commit, tree, chunk
expect_fail strata show "$ro"

step "gc keeps what a workspace still reads after its base moved away (reset)"
mkdir -p "$WORK/old/sub" "$WORK/new"
printf 'old data\n' >"$WORK/old/sub/file"
printf 'new data\n' >"$WORK/new/other"
import_dir "$WORK/old" old >/dev/null
new=$(import_dir "$WORK/new" new)
expect_ok strata mount --branch old --name keeper "$MP"
expect_ok strata reset "$MP" "$new"  # the base moves; the content (sub/, never loaded) stays
expect_ok strata branch delete old
expect_ok strata gc
[[ $(cat "$MP/sub/file") == "old data" ]] || fail "gc deleted a tree the workspace still reads"
expect_ok strata branch create old "$new"  # the workspace's branch, now at its base
expect_ok strata commit "$MP" -m "old content on the new base"
expect_ok strata umount "$MP"
expect_ok strata gc
expect_ok strata fsck --json
json_true 'd["ok"]'
expect_ok strata cat old:sub/file
[[ $(cat "$OUT") == "old data" ]] || fail "the commit lost the old content"
expect_ok strata workspace end keeper

step "kill -9 in the middle of gc leaves a valid store"
export_all "$WORK/before"
for round in 1 2 3; do
  import_dir "$WORK/blobs" "junk$round" >/dev/null
  expect_ok strata branch delete "junk$round"
  "$STRATA_BIN" --store "$STORE" gc --repack-threshold 1 >/dev/null 2>&1 &
  victim=$!
  sleep "0.0$((round * 3))"
  kill -9 "$victim" 2>/dev/null || true
  wait "$victim" 2>/dev/null || true
  expect_ok strata fsck
  rm -rf "$WORK/after"
  export_all "$WORK/after"
  assert_same_tree "$WORK/before" "$WORK/after"
done
expect_ok strata gc --repack-threshold 1 --json
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'
assert_store_tmp_empty

step "fsck names what is missing and where; gc refuses to work on a damaged graph"
tree=$(strata show main --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["root"])')
python3 - "$STORE/index.db" "$tree" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM objects WHERE oid = ?", (bytes.fromhex(sys.argv[2]),))
db.commit()
PY
expect_exit 3 strata fsck
expect_output_matches "missing: $tree at commit [0-9a-f]{12} \((branch main|workspace ws)\)"
expect_fail strata gc
expect_stderr_matches "gc stopped before deleting anything"
