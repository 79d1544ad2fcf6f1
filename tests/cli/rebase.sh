#!/usr/bin/env bash
# strata rebase on real mounts: two workspaces commit to one branch; the loser
# is told "head moved" (exit 4), rebases and commits; the history is linear and
# the head holds both changes, as the mounts show them. Then both change the
# same file: the rebase lists it (exit 4) and the workspace stays byte for byte
# as it was, mounted or not.
source "$(dirname "$0")/lib.sh"
use_mountpoint
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

mkdir -p "$WORK/src/a" "$WORK/src/b"
for i in $(seq 5); do printf 'a file %s\n' "$i" >"$WORK/src/a/f$i"; done
for i in $(seq 5); do printf 'b file %s\n' "$i" >"$WORK/src/b/f$i"; done
head -c 3000000 /dev/urandom >"$WORK/src/b/big.bin"

step "two workspaces on one branch change different files"
expect_ok "$STRATA_BIN" init "$STORE"
base=$(import_dir "$WORK/src" main base)
expect_ok strata mount --branch main --name one "$MP"
expect_ok strata mount --branch main --name two "$MP2"
printf 'changed by one\n' >"$MP/a/f1"
printf 'new from one\n' >"$MP/a/one.txt"
printf 'changed by two\n' >"$MP2/b/f2"
mkdir "$MP2/c"
printf 'new from two\n' >"$MP2/c/two.txt"
rm "$MP2/a/f3"
printf 'PATCH' | dd of="$MP2/b/big.bin" bs=1 seek=1000000 conv=notrunc status=none

step "the first commit wins; the second is told head moved"
expect_ok strata commit "$MP" -m "one" --json
c1=$(json 'd["commit"]')
expect_exit 4 strata commit "$MP2" -m "two"
expect_stderr_matches "head moved"

step "rebase replays the second workspace's changes on the new head"
expect_ok strata rebase "$MP2"
expect_output_matches "rebased onto ${c1:0:12}"
[[ $(cat "$MP2/a/f1") == "changed by one" ]] || fail "the rebased mount lacks the other workspace's change"
[[ -e $MP2/a/one.txt ]] || fail "the rebased mount lacks the other workspace's new file"
[[ $(cat "$MP2/b/f2") == "changed by two" ]] || fail "the rebase lost the workspace's own change"
[[ $(cat "$MP2/c/two.txt") == "new from two" ]] || fail "the rebase lost the workspace's new directory"
[[ ! -e $MP2/a/f3 ]] || fail "the rebase brought back a file the workspace deleted"
expect_ok strata workspace list --json
json_true '[w["base"] for w in d if w["name"] == "two"] == ["'"$c1"'"]'

step "the rebased workspace commits on top: a linear history holding both changes"
expect_ok strata commit "$MP2" -m "two" --json
c2=$(json 'd["commit"]')
expect_ok strata log main --json
json_true '[c["id"] for c in d] == ["'"$c2"'", "'"$c1"'", "'"$base"'"]'
json_true 'd[0]["parents"] == ["'"$c1"'"] and d[1]["parents"] == ["'"$base"'"]'
expect_ok strata export "$c2" "$WORK/head"
assert_same_tree "$MP2" "$WORK/head"
[[ $(cat "$WORK/head/a/f1") == "changed by one" && $(cat "$WORK/head/b/f2") == "changed by two" ]] ||
  fail "the head does not hold both changes"
cmp -s "$WORK/head/b/big.bin" "$MP2/b/big.bin" || fail "the patched big file differs"
expect_ok strata diff "$c1" "$c2" --name-status
expect_output_matches "^D[[:space:]]+a/f3"

step "the first workspace, now behind, rebases with nothing of its own to commit"
expect_ok strata rebase "$MP"
expect_output_matches "nothing to commit"
assert_same_tree "$MP" "$WORK/head"
expect_ok strata rebase "$MP"
expect_output_matches "already up to date"

step "both change the same file: the rebase lists it and changes nothing"
printf 'one again\n' >"$MP/a/f1"
expect_ok strata commit "$MP" -m "one again"
printf 'two again\n' >"$MP2/a/f1"
printf 'unrelated\n' >"$MP2/b/f5"
cp -a "$MP2" "$WORK/before"
expect_exit 4 strata rebase "$MP2"
expect_output_matches "conflict: a/f1"
expect_stderr_matches "nothing was changed"
assert_same_tree "$MP2" "$WORK/before"
expect_exit 4 strata rebase "$MP2" --json
json_true '[c["path"] for c in d["conflicts"]] == ["a/f1"] and d["root"] is None'
expect_exit 4 strata commit "$MP2" -m "still behind"
expect_stderr_matches "head moved"
assert_same_tree "$MP2" "$WORK/before"

step "a workspace that is not mounted is rebased by its name, with the same result"
expect_ok strata umount "$MP2"
expect_exit 4 strata rebase two
expect_output_matches "conflict: a/f1"
expect_ok strata mount --workspace two "$MP2"
assert_same_tree "$MP2" "$WORK/before"
