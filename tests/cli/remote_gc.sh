#!/usr/bin/env bash
# gc of a remote store (Ceph RGW, started by the ceph fixture) while other
# machines push: garbage of a deleted branch goes and everything reachable
# stays (every branch exports intact, fsck of the remote is clean); a push
# that announced itself before gc's list is waited for and what it relied on
# kept; a push after the list stores the condemned objects it needs again; a
# loop of pushes of new branches while gc runs loses nothing; gc killed with
# SIGKILL at several points leaves a usable remote and a later gc removes the
# garbage; forget --remote lets gc free what only the forgotten commits held;
# --dry-run changes nothing; usage errors exit 2. (Repacking, which gc does
# too, is remote_repack.sh's: the steps here that name packs turn it off.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
STORE_B="$WORK/store-b"
strata_b() { "$STRATA_BIN" --store "$STORE_B" "$@"; }
BUCKET="cli-remote-gc-$$-$RANDOM"
URL="s3://$BUCKET/team"
EP="$STRATA_S3_ENDPOINT"
# The cluster keeps objects in memory: this test's go when it ends.
trap 'rc=$?; set +e; for k in $(s3_keys "$BUCKET" "" 2>/dev/null); do s3 DELETE "$BUCKET/$k" >/dev/null 2>&1; done
      (exit $rc); _cleanup' EXIT
# make_tree NAME [SHARED]: a tree of its own (a unique file, small files) and,
# when SHARED is given, a copy of the tree $WORK/trees/SHARED's data.
make_tree() {
  local d="$WORK/trees/$1" i
  mkdir -p "$d/docs"
  head -c 400000 /dev/urandom >"$d/own.bin"
  for i in 1 2 3; do printf '%s doc %s\n' "$1" "$i" >"$d/docs/d$i.txt"; done
  if [[ -n ${2:-} ]]; then cp "$WORK/trees/$2/own.bin" "$d/shared.bin"; fi
}
mkdir -p "$WORK/trees"

step "usage errors: --grace without --remote, a negative grace"
expect_ok "$STRATA_BIN" init "$STORE"
expect_exit 2 strata gc --grace 1
expect_stderr_matches "--remote"
expect_ok strata remote add origin "$URL" --endpoint "$EP" --create-bucket
expect_exit 2 strata gc --remote origin --grace -1

step "gc removes the garbage of a deleted branch and keeps every branch whole"
make_tree main
make_tree keep main
import_dir "$WORK/trees/main" main >/dev/null
import_dir "$WORK/trees/keep" keep >/dev/null
expect_ok strata push origin main
expect_ok strata push origin keep
packs_live=$(keys packs/)
make_tree junk
import_dir "$WORK/trees/junk" junk >/dev/null
expect_ok strata push origin junk
junk_packs=$(comm -13 <(echo "$packs_live") <(keys packs/))
[[ -n $junk_packs ]] || fail "pushing junk added no pack"
expect_ok strata --remote origin branch delete junk
expect_ok strata gc --remote origin --grace 1 --max-repack-mib 0 --dry-run --json
json_true 'd["dry_run"] and d["packs_deleted"] >= 1 and d["objects_deleted"] > 0'
[[ $(count_keys packs/) -eq $(( $(echo "$packs_live" | grep -c .) + $(echo "$junk_packs" | grep -c .) )) ]] ||
  fail "the dry run changed packs/"
[[ -z $(keys gc/condemned/) ]] || fail "the dry run wrote a list"
expect_ok strata gc --remote origin --grace 1 --max-repack-mib 0 --json
json_true 'not d["dry_run"] and d["packs_deleted"] == '"$(echo "$junk_packs" | grep -c .)"' and d["bytes_deleted"] > 400000'
json_true 'd["leases_waited"] == 0'
for p in $junk_packs; do keys packs/ | grep -qx "$p" && fail "garbage pack $p is still in the bucket"; done
[[ $(keys packs/) == "$packs_live" ]] || fail "gc deleted a pack a branch reaches"
[[ -z $(keys leases/) ]] || fail "commands left leases behind: $(keys leases/)"
check_remote main keep
expect_ok strata gc --remote origin --grace 0 --max-repack-mib 0 --json
json_true 'd["packs_deleted"] == 0 and d["objects_condemned"] == 0'
expect_ok strata gc --remote origin --grace 0 --max-repack-mib 0
expect_output_matches "deleted 0 of"

# garbage SEED: a branch pushed by store A and deleted, whose file a store B
# that has indexed its pack will push again (so B's index says it is there).
garbage() {
  make_tree "$1"
  import_dir "$WORK/trees/$1" "$1" >/dev/null
  expect_ok strata push origin "$1"
  expect_ok strata_b --remote origin log "$1"  # B indexes the pack now
  expect_ok strata --remote origin branch delete "$1"
}
expect_ok "$STRATA_BIN" init "$STORE_B"
expect_ok strata_b remote add origin "$URL" --endpoint "$EP"

step "a push that announced itself before gc's list is waited for; what it relied on stays"
garbage g1
make_tree early g1
# Large enough that the push is still sending when it is stopped.
head -c 150000000 /dev/urandom >"$WORK/trees/early/large.bin"
expect_ok strata_b import "$WORK/trees/early" --branch early -m early
mark_keys leases/
"$STRATA_BIN" --store "$STORE_B" push origin early >"$WORK/early.out" 2>&1 &
push_pid=$!
BG_PIDS+=("$push_pid")
wait_for_key leases/ "$push_pid"
kill -STOP "$push_pid" || fail "the push ended before it could be stopped: $(cat "$WORK/early.out")"
mark_keys gc/condemned/
"$STRATA_BIN" --store "$STORE" gc --remote origin --grace 1 --max-repack-mib 0 --json >"$WORK/gc1.json" 2>"$WORK/gc1.err" &
gc_pid=$!
BG_PIDS+=("$gc_pid")
wait_for_key gc/condemned/ "$gc_pid"
sleep 2  # past the grace: gc holds off only for the stopped push
kill -0 "$gc_pid" 2>/dev/null || fail "gc did not wait for the push that began before its list: $(cat "$WORK/gc1.err")"
kill -CONT "$push_pid"
wait "$push_pid" || fail "the early push failed: $(cat "$WORK/early.out")"
wait "$gc_pid" || fail "gc failed: $(cat "$WORK/gc1.err")"
# g1's file is early's too: the pack holding it stays (g1's other objects in it beside).
json_true 'd["leases_waited"] == 1 and d["packs_kept_partly_live"] >= 1' "$WORK/gc1.json"
check_remote main keep early

step "a push after gc's list stores the condemned objects it needs again"
garbage g2
make_tree late g2
expect_ok strata_b import "$WORK/trees/late" --branch late -m late
mark_keys gc/condemned/
"$STRATA_BIN" --store "$STORE" gc --remote origin --grace 3 --json >"$WORK/gc2.json" 2>"$WORK/gc2.err" &
gc_pid=$!
BG_PIDS+=("$gc_pid")
wait_for_key gc/condemned/ "$gc_pid"
expect_ok strata_b push origin late --json
json_true 'd["chunks_present"] == 0'  # the chunks it shares with g2 were sent again
wait "$gc_pid" || fail "gc failed: $(cat "$WORK/gc2.err")"
json_true 'd["packs_deleted"] >= 1' "$WORK/gc2.json"
check_remote main keep early late
# B's own index found the object's new place when the old pack went.
rm -rf "$WORK/out"
expect_ok strata_b --remote origin export late "$WORK/out"
assert_same_content "$WORK/trees/late" "$WORK/out"

step "a loop of pushes of new branches while gc runs loses nothing"
garbage g3
pushed=()
for i in $(seq 8); do
  make_tree "loop$i" g3
  expect_ok strata_b import "$WORK/trees/loop$i" --branch "loop$i" -m "loop $i"
done
"$STRATA_BIN" --store "$STORE" gc --remote origin --grace 2 --json >"$WORK/gc3.json" 2>"$WORK/gc3.err" &
gc_pid=$!
BG_PIDS+=("$gc_pid")
for i in $(seq 8); do
  expect_ok strata_b push origin "loop$i"
  pushed+=("loop$i")
  sleep 0.3
done
wait "$gc_pid" || fail "gc failed: $(cat "$WORK/gc3.err")"
check_remote main keep early late "${pushed[@]}"

step "gc killed with SIGKILL at several points leaves a usable remote; a later gc removes the garbage"
for point in start list delete; do
  before=$(keys packs/)
  garbage "k$point"
  kpacks=$(comm -13 <(echo "$before") <(keys packs/))
  mark_keys gc/condemned/
  "$STRATA_BIN" --store "$STORE" gc --remote origin --grace 2 >"$WORK/gck.out" 2>&1 &
  gc_pid=$!
  BG_PIDS+=("$gc_pid")
  case $point in
    start) sleep 0.2 ;;
    list) wait_for_key gc/condemned/ "$gc_pid" ;;
    delete)
      # Killed as soon as the first pack has gone.
      for _ in $(seq 600); do
        [[ $(keys packs/ | grep -c -F -x -f <(echo "$kpacks") || true) -lt $(echo "$kpacks" | grep -c .) ]] && break
        kill -0 "$gc_pid" 2>/dev/null || break
        sleep 0.02
      done ;;
  esac
  kill -9 "$gc_pid" 2>/dev/null || true
  wait "$gc_pid" 2>/dev/null || true
  check_remote main keep early late "${pushed[@]}"
  # Writers still work while the killed gc's list stays behind.
  make_tree "after$point" "k$point"
  expect_ok strata_b import "$WORK/trees/after$point" --branch "after$point" -m after
  expect_ok strata_b push origin "after$point"
  pushed+=("after$point")
done
expect_ok strata gc --remote origin --grace 1 --json
check_remote main keep early late "${pushed[@]}"
# Nothing but reachable objects is left in whole-garbage packs: a last dry run finds none.
expect_ok strata gc --remote origin --grace 0 --max-repack-mib 0 --dry-run --json
json_true 'd["packs_deleted"] == 0'

step "forget --remote records what it lets go of in the bucket; gc --remote then frees what only those commits held"
for v in hist_v1 hist_v2 hist; do
  make_tree "$v"
  expect_ok strata import "$WORK/trees/$v" --branch hist -m "$v"
  expect_ok strata push origin hist
done
expect_ok strata --remote origin forget --branch hist --keep-last 1 --dry-run --json
json_true 'd["commits_forgotten"] == 2'
[[ -z $(keys forgotten/) ]] || fail "the dry run recorded forgotten commits"
expect_ok strata --remote origin forget --branch hist --keep-last 1 --json
json_true 'd["commits_forgotten"] == 2 and len(d["branches"][0]["kept"]) == 1'
[[ $(count_keys forgotten/) -eq 2 ]] || fail "the bucket does not hold the 2 forgotten commits: $(keys forgotten/)"
expect_ok strata gc --remote origin --grace 1 --json
# Each older version's own data and trees were in packs of their own pushes.
json_true 'd["packs_deleted"] >= 2 and d["bytes_deleted"] > 800000'
check_remote main keep early late hist "${pushed[@]}"
expect_ok strata --remote origin log hist --json
json_true 'len(d) == 3'  # the commits stay; their trees went
