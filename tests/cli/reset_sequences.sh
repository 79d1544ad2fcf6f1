#!/usr/bin/env bash
# reset, rebase and commit in sequence on real mounts, starting from each way
# a mount begins: --new, --branch, --workspace (a mount again) and a read-only
# mount. After every step the mount holds exactly the commit it should (its
# tree equals an export of that commit), also after a mount again.
source "$(dirname "$0")/lib.sh"
use_mountpoint
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

# holds MOUNTPOINT REV: the mount shows exactly REV's tree.
holds() {
  rm -rf "$WORK/export"
  expect_ok strata export "$2" "$WORK/export"
  ls "$1" >/dev/null || fail "ls $1 fails"
  assert_same_tree "$1" "$WORK/export"
  expect_ok strata diff "$1"
  expect_stdout_empty
}
commit_id() {
  expect_ok strata commit "$@" --json
  json 'd["commit"]'
}

expect_ok "$STRATA_BIN" init "$STORE"

step "--new: commit, then reset --hard onto that commit (was EIO on every lookup, for good)"
expect_ok strata mount --new --name w "$MP"
echo a >"$MP/a"
m1=$(commit_id "$MP" -m m1 --branch mb)
expect_ok strata reset "$MP" --hard mb
holds "$MP" "$m1"
[[ $(cat "$MP/a") == a ]] || fail "a is not m1's after the reset"

step "--new, going on: a second commit, a hard reset back, a mixed reset forward"
mkdir "$MP/d"
echo b >"$MP/d/b"
m2=$(commit_id "$MP" -m m2)
expect_ok strata reset "$MP" --hard "$m1"
holds "$MP" "$m1"
[[ ! -e $MP/d ]] || fail "d survived a hard reset to m1"
expect_ok strata reset "$MP" "$m2"
expect_output_matches "differs"
m3=$(commit_id "$MP" -m "m1 again on m2")
expect_ok strata diff "$m1" "$m3"
expect_stdout_empty
holds "$MP" "$m3"

step "--workspace: the reset workspace mounts again and holds its commit"
expect_ok strata umount "$MP"
expect_ok strata mount --workspace w "$MP"
holds "$MP" "$m3"
expect_ok strata reset "$MP" --hard "$m2"
holds "$MP" "$m2"
expect_ok strata umount "$MP"
expect_ok strata mount --workspace w "$MP"
holds "$MP" "$m2"

step "--branch: a second workspace moves the branch; the first rebases onto it and commits"
expect_ok strata reset "$MP" --hard "$m3"   # the branch's head
expect_ok strata mount --branch mb --name other "$MP2"
holds "$MP2" "$m3"
echo theirs >"$MP2/theirs"
m4=$(commit_id "$MP2" -m theirs)
echo mine >"$MP/mine"
expect_exit 4 strata commit "$MP" -m mine
expect_ok strata rebase "$MP"
[[ $(cat "$MP/theirs") == theirs && $(cat "$MP/mine") == mine ]] || fail "the rebase lost a side"
m5=$(commit_id "$MP" -m mine)
holds "$MP" "$m5"
expect_ok strata show "$m5" --json
json_true 'd["parents"] == ["'"$m4"'"]'

step "--branch: reset --hard and rebase on the workspace that was mounted with --branch"
expect_ok strata reset "$MP2" --hard "$m1"
holds "$MP2" "$m1"
expect_ok strata rebase "$MP2"   # onto the head, m5: nothing of its own (its base is m1)
holds "$MP2" "$m5"
expect_ok strata umount "$MP2"
expect_ok strata mount --workspace other "$MP2"
holds "$MP2" "$m5"
expect_ok strata umount "$MP2"

step "--new that never committed: reset --hard onto a commit"
expect_ok strata mount --new --name fresh "$MP2"
echo fresh >"$MP2/fresh"
expect_ok strata reset "$MP2" --hard "$m5"
holds "$MP2" "$m5"
expect_ok strata umount "$MP2"

step "a read-only mount: reset, rebase and commit are refused and it still holds its commit"
expect_ok strata mount --read-only "$m2" "$MP2"
expect_fail strata reset "$MP2" --hard "$m1"
expect_stderr_matches "read-only"
expect_fail strata rebase "$MP2"
expect_stderr_matches "read-only"
expect_fail strata commit "$MP2" -m x
expect_stderr_matches "read-only"
rm -rf "$WORK/export" && strata export "$m2" "$WORK/export" >/dev/null
assert_same_tree "$MP2" "$WORK/export"
expect_ok strata umount "$MP2"
expect_ok strata fsck
expect_ok strata umount "$MP"
