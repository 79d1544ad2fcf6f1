#!/usr/bin/env bash
# strata forget: a retention policy over two weeks of daily imports with known
# dates (import --date). The kept set is the policy's, a workspace's base is
# never forgotten, --dry-run changes nothing, --prune frees exactly the
# forgotten commits' own data; afterwards every kept commit exports
# byte-identical, fsck and verify are clean, log marks the forgotten commits,
# and reading one (export, mount, fork, show, ls, cat, diff) says it was forgotten;
# push and pull copy forgotten commits as forgotten, without their trees.
source "$(dirname "$0")/lib.sh"
use_mountpoint

# Day d (1..14) of January 2024: a file only that day has, and one every day shares.
head -c 300000 /dev/urandom >"$WORK/common.bin"
make_day() {
  local d=$1 dir="$WORK/src/day$1"
  mkdir -p "$dir"
  head -c 100000 /dev/urandom >"$dir/today.bin"
  cp "$WORK/common.bin" "$dir/common.bin"
}

step "fourteen daily imports, a workspace on day 3"
expect_ok "$STRATA_BIN" init "$STORE"
declare -A commit
for d in $(seq 14); do
  make_day "$d"
  expect_ok strata import "$WORK/src/day$d" --branch main -m "day $d" --date "$(printf '2024-01-%02dT12:00:00Z' "$d")"
  commit[$d]=$(commit_of_output)
  if (( d == 3 )); then
    expect_ok strata mount --branch main --name ws3 "$MP"
    expect_ok strata umount "$MP"
  fi
done
expect_ok strata log --json
json_true 'len(d) == 14 and not any(c["forgotten"] for c in d)'
json_true 'd[0]["time"] == 1705233600 * 10**9'  # 2024-01-14 12:00:00 UTC

step "bad requests: a clear error, nothing forgotten"
expect_fail strata forget --branch main
expect_stderr_matches 'no retention rule'
expect_fail strata forget --keep-daily 3
expect_stderr_matches '--branch B .*or --all'
expect_fail strata forget --branch main --all --keep-daily 3
expect_fail strata forget --branch nope --keep-daily 3
expect_stderr_matches "no branch 'nope'"
expect_fail strata forget --branch main --keep-within 3w
expect_stderr_matches 'invalid duration'
expect_fail strata forget --branch main --keep-daily -2
expect_fail strata --remote somewhere forget --branch main --keep-daily 3
expect_stderr_matches 'no remote named somewhere'
expect_fail strata import "$WORK/src/day1" --branch main --date yesterday
expect_stderr_matches 'invalid --date'
expect_ok strata log --json
json_true 'len(d) == 14 and not any(c["forgotten"] for c in d)'

# Days 14, 13, 12 (daily); ISO week 2 ends on Sunday the 14th, so weekly adds
# the 7th (week 1); the workspace keeps day 3.
want_kept="14 13 12 7 3"
kept_ids() { for d in $want_kept; do printf '%s\n' "${commit[$d]}"; done | sort; }

step "dry run: the policy's kept set, with reasons; nothing changes"
expect_ok strata forget --branch main --keep-daily 3 --keep-weekly 2 --utc --dry-run --json
json_true 'd["dry_run"] and d["commits_forgotten"] == 9 and d["policy"] == "--keep-daily 3 --keep-weekly 2"'
kept=$(json '"\n".join(sorted(c["id"] for c in d["branches"][0]["kept"]))')
[[ $kept == "$(kept_ids)" ]] || fail "kept set: got $kept, want $(kept_ids)"
json_true 'd["branches"][0]["kept"][0]["reasons"] == ["head", "daily", "weekly"]'
json_true '[c["reasons"] for c in d["branches"][0]["kept"]][-1] == ["base of workspace ws3"]'
json_true 'len(d["branches"][0]["forgotten"]) == 9'
expect_ok strata forget --branch main --keep-daily 3 --keep-weekly 2 --utc --dry-run
expect_output_matches 'would forget 9 commits on 1 branch \(dry run'
expect_output_matches "keep +${commit[7]:0:12} +2024-01-07 12:00:00 \+0000 +weekly"
expect_ok strata log --json
json_true 'not any(c["forgotten"] for c in d)'

# What --prune would free, before anything is forgotten: the same 18 objects.
expect_ok strata forget --branch main --keep-daily 3 --keep-weekly 2 --utc --dry-run --prune --json
json_true 'd["dry_run"] and d["gc"]["dry_run"] and d["gc"]["objects_deleted"] == 18'
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'

step "forget --prune: the forgotten commits' own data goes, nothing else"
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'
expect_ok strata forget --branch main --keep-daily 3 --keep-weekly 2 --utc --prune --json
json_true 'not d["dry_run"] and d["commits_forgotten"] == 9'
# Each forgotten day had two objects of its own: its top tree and today.bin's chunk.
json_true 'd["gc"]["objects_deleted"] == 18 and d["gc"]["pack_bytes_after"] < d["gc"]["pack_bytes_before"]'
expect_ok strata log --json
forgotten=$(json '"\n".join(sorted(c["id"] for c in d if c["forgotten"]))')
json_true 'len(d) == 14 and sum(c["forgotten"] for c in d) == 9'
for d in $want_kept; do
  [[ $forgotten != *"${commit[$d]}"* ]] || fail "day $d is kept but log says forgotten"
done
expect_ok strata log
expect_output_matches "commit ${commit[5]} \[forgotten by strata forget"
expect_ok strata fsck --json
json_true 'd["ok"] and d["missing"] == [] and d["unreachable"] == 0'
expect_ok strata verify

step "kept commits export byte-identical; forgotten ones say why they cannot"
mkdir -p "$WORK/out"
for d in $want_kept; do
  expect_ok strata export "${commit[$d]}" "$WORK/out/day$d"
  assert_same_content "$WORK/src/day$d" "$WORK/out/day$d"
done
expect_fail strata export "${commit[5]}" "$WORK/out/day5"
expect_stderr_matches 'was forgotten by strata forget'
expect_fail strata export main~8 "$WORK/out/day6"   # day 6, through the line that stays
expect_stderr_matches "commit ${commit[6]:0:12} was forgotten by strata forget"
expect_fail strata mount --read-only "${commit[4]}" "$MP"
expect_stderr_matches 'was forgotten by strata forget'
expect_fail strata fork old --from "${commit[4]}"
expect_stderr_matches 'was forgotten by strata forget'
for cmd in "ls ${commit[5]}" "cat ${commit[5]}:today.bin" "diff ${commit[5]} ${commit[14]}" \
           "branch create old ${commit[5]}"; do
  # shellcheck disable=SC2086 # the words of each command
  expect_fail strata $cmd
  expect_stderr_matches 'was forgotten by strata forget'
done
expect_fail strata show "${commit[7]}"   # kept, but its parent (day 6) is gone
expect_stderr_matches 'parent.*was forgotten by strata forget'
expect_ok strata ls "${commit[3]}"        # the workspace's base
expect_ok strata mount --workspace ws3 "$MP"
assert_same_content "$WORK/src/day3" "$MP"
expect_ok strata umount "$MP"

step "again: nothing new to forget; after the workspace ends its base may go"
expect_ok strata forget --branch main --keep-daily 3 --keep-weekly 2 --utc --json
json_true 'd["commits_forgotten"] == 0 and d["branches"][0]["forgotten_before"] == 9'
expect_ok strata workspace end ws3
expect_ok strata forget --all --keep-daily 3 --keep-weekly 2 --utc --prune --json
json_true 'd["commits_forgotten"] == 1 and d["branches"][0]["forgotten"][0]["id"] == "'"${commit[3]}"'"'
json_true 'd["gc"]["objects_deleted"] == 2'
expect_ok strata fsck --json
json_true 'd["ok"] and d["unreachable"] == 0'
for d in 14 13 12 7; do
  rm -rf "$WORK/out/day$d"
  expect_ok strata export "${commit[$d]}" "$WORK/out/day$d"
  assert_same_content "$WORK/src/day$d" "$WORK/out/day$d"
done
step "forgotten commits travel as forgotten: a push and a pull copy them without their trees"
start_fake_s3 "$WORK/fake"
expect_ok strata remote add r s3://bkt1/forget --endpoint "$EP" --create-bucket
expect_ok strata push r main
expect_ok strata --remote r log main --json
json_true 'len(d) == 14 and sum(c["forgotten"] for c in d) == 10'
expect_fail strata --remote r export "${commit[5]}" "$WORK/out/r5"
expect_stderr_matches 'was forgotten by strata forget'
expect_ok strata --remote r fsck --json
json_true 'd["ok"] and d["missing"] == []'
STORE2="$WORK/store2"
expect_ok "$STRATA_BIN" init "$STORE2"
expect_ok "$STRATA_BIN" --store "$STORE2" remote add r s3://bkt1/forget --endpoint "$EP"
expect_ok "$STRATA_BIN" --store "$STORE2" pull r main
expect_ok "$STRATA_BIN" --store "$STORE2" log main --json
json_true 'len(d) == 14 and sum(c["forgotten"] for c in d) == 10'
expect_fail "$STRATA_BIN" --store "$STORE2" export "${commit[6]}" "$WORK/out/p6"
expect_stderr_matches 'was forgotten by strata forget'
for d in 14 7; do
  expect_ok "$STRATA_BIN" --store "$STORE2" export "${commit[$d]}" "$WORK/out/p$d"
  assert_same_content "$WORK/src/day$d" "$WORK/out/p$d"
done
expect_ok "$STRATA_BIN" --store "$STORE2" fsck --json
json_true 'd["ok"] and d["missing"] == [] and d["unreachable"] == 0'
# On a remote, gc is 'gc --remote' (with its grace): --prune is refused.
expect_exit 2 strata --remote r forget --all --keep-last 1 --prune
expect_stderr_matches 'gc --remote r'
echo "PASS"
