#!/usr/bin/env bash
# Repacking a remote store (Ceph RGW, started by the ceph fixture) in its gc:
# the packs of many tiny pushes are merged and a mostly-dead pack rewritten,
# so the pack count drops; every branch exports intact and fsck of the remote
# is clean; a mount of another machine opened before the repack reads files it
# had not read yet (their packs went), and a workspace of that machine commits
# after it; --max-repack-mib bounds the work; a repack killed with SIGKILL once
# its new packs are uploaded, and once it is deleting, then run again, loses
# nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
use_two_mountpoints
STORE_B="$WORK/store-b"
strata_b() { "$STRATA_BIN" --store "$STORE_B" "$@"; }
BUCKET="cli-remote-repack-$$-$RANDOM"
URL="s3://$BUCKET/team"
EP="$STRATA_S3_ENDPOINT"
trap 'rc=$?; set +e; cd /; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done
      for k in $(s3_keys "$BUCKET" "" 2>/dev/null); do s3 DELETE "$BUCKET/$k" >/dev/null 2>&1; done
      (exit $rc); _cleanup' EXIT
count_packs() { count_keys packs/; }
# tiny_pushes BRANCH N: N commits of one small change each, each pushed.
tiny_pushes() {
  local d="$WORK/trees/$1" i
  mkdir -p "$d"
  for i in $(seq "$2"); do
    printf '%s change %s\n' "$1" "$i" >"$d/f$((i % 7)).txt"
    head -c 3000 /dev/urandom >"$d/own$i.bin"
    expect_ok strata import "$d" --branch "$1" -m "$1 $i"
    expect_ok strata push origin "$1"
  done
}
mkdir -p "$WORK/trees"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata remote add origin "$URL" --endpoint "$EP" --create-bucket
expect_ok "$STRATA_BIN" init "$STORE_B"
expect_ok strata_b remote add origin "$URL" --endpoint "$EP"

step "usage: --max-repack-mib is for a remote, and a number"
expect_exit 2 strata gc --max-repack-mib 10
expect_stderr_matches "--remote"
expect_exit 2 strata gc --remote origin --max-repack-mib -1

step "many tiny pushes and a mostly-dead pack"
tiny_pushes main 24
mkdir -p "$WORK/trees/junk" "$WORK/trees/side"
head -c 3000000 /dev/urandom >"$WORK/trees/junk/big.bin"
head -c 20000 /dev/urandom >"$WORK/trees/side/shared.bin"
cp "$WORK/trees/side/shared.bin" "$WORK/trees/junk/"
import_dir "$WORK/trees/junk" junk >/dev/null
expect_ok strata push origin junk
import_dir "$WORK/trees/side" side >/dev/null
expect_ok strata push origin side
expect_ok strata --remote origin branch delete junk
before=$(count_packs)
((before >= 48)) || fail "only $before packs after 26 pushes"

step "another machine's mount and workspace, opened before the repack"
expect_ok strata_b mount --read-only origin/main "$MP"
[[ $(cat "$MP/f1.txt") == "$(cat "$WORK/trees/main/f1.txt")" ]] || fail "the mount shows another f1.txt"
expect_ok strata_b mount --branch origin/side --name ws "$MP2"
[[ -e $MP2/shared.bin ]] || fail "the workspace lacks shared.bin"

step "a dry run says what would be rewritten and changes nothing"
expect_ok strata gc --remote origin --grace 1 --dry-run --json
json_true 'd["dry_run"] and d["packs_rewritten"] >= 40 and d["packs_written"] == 0'
[[ $(count_packs) -eq $before ]] || fail "the dry run changed packs/"

step "a bounded run rewrites only that much"
expect_ok strata gc --remote origin --grace 1 --max-repack-mib 0 --json
json_true 'd["packs_rewritten"] == 0 and d["packs_written"] == 0'
expect_ok strata gc --remote origin --grace 1 --max-repack-mib 1 --json
# The small packs fit in 1 MiB; the 3 MB mostly-dead pack does not, and stays.
json_true 'd["packs_rewritten"] >= 10 and d["repack_bytes_read"] <= 1048576 and d["packs_written"] >= 1'
json_true 'd["bytes_deleted"] < 3000000 and d["packs_kept_partly_live"] == 1'
bounded=$(count_packs)
((bounded < before)) || fail "a bounded repack left $bounded of $before packs"

step "the next run rewrites the mostly-dead pack"
expect_ok strata gc --remote origin --grace 1 --json
json_true 'd["packs_rewritten"] >= 1 and d["packs_kept_partly_live"] == 0 and d["bytes_deleted"] > 3000000'
after=$(count_packs)
((after <= 3)) || fail "$after packs left of $before after the repack"
echo "packs: $before -> $bounded -> $after" >&2
check_remote main side

step "the other machine's mount reads what it had not read; its workspace commits"
for f in "$WORK"/trees/main/*; do
  cmp "$f" "$MP/${f##*/}" || fail "the mount reads ${f##*/} wrong after the repack"
done
echo more >"$MP2/more.txt"
expect_ok strata_b commit "$MP2" -m "after the repack"
cp "$MP2/more.txt" "$WORK/trees/side/more.txt"
expect_ok strata_b umount "$MP2"
expect_ok strata_b umount "$MP"
check_remote side

step "a repack killed with SIGKILL, then run again, loses nothing"
for point in uploaded deleting; do
  tiny_pushes "k$point" 8
  start=$(count_packs)
  mark_keys gc/condemned/
  "$STRATA_BIN" --store "$STORE" gc --remote origin --grace 2 >"$WORK/gck.out" 2>&1 &
  gc_pid=$!
  BG_PIDS+=("$gc_pid")
  if [[ $point == uploaded ]]; then
    # The list is written once the new packs are uploaded and indexed.
    wait_for_key gc/condemned/ "$gc_pid"
  else
    keys packs/ >"$WORK/packs-before"
    for _ in $(seq 600); do
      [[ -n $(comm -23 "$WORK/packs-before" <(keys packs/)) ]] && break
      kill -0 "$gc_pid" 2>/dev/null || break
      sleep 0.02
    done
  fi
  kill -9 "$gc_pid" 2>/dev/null || true
  wait "$gc_pid" 2>/dev/null || true
  check_remote main side "k$point"
  expect_ok strata gc --remote origin --grace 1 --json
  json_true 'd["packs_kept_partly_live"] == 0'
  ((start > $(count_packs))) || fail "the gc after the killed one left $(count_packs) of $start packs"
  check_remote main side kuploaded "k$point"
done
