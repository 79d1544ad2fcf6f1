#!/usr/bin/env bash
# strata rebase --ours/--theirs/--both on real mounts: two workspaces change
# the same files; the loser's rebase lists the conflicts; choices that leave
# one unsettled, name a path not in conflict or are malformed change nothing;
# a choice for each settles them, and every change of either side that was
# not in conflict is kept. Then the same for a workspace that is not mounted.
source "$(dirname "$0")/lib.sh"
use_two_mountpoints

mkdir -p "$WORK/src/a" "$WORK/src/b"
for i in $(seq 6); do printf 'a file %s\n' "$i" >"$WORK/src/a/f$i"; done
printf 'b file\n' >"$WORK/src/b/f5"

step "two workspaces on one branch change the same files, and others"
expect_ok "$STRATA_BIN" init "$STORE"
import_dir "$WORK/src" main base >/dev/null
expect_ok strata mount --branch main --name one "$MP"
expect_ok strata mount --branch main --name two "$MP2"
for f in f1 f2 f3; do printf 'one %s\n' "$f" >"$MP/a/$f"; done
rm "$MP/a/f4"
printf 'only one\n' >"$MP/a/one.txt"
printf 'one changed f6\n' >"$MP/a/f6"
expect_ok strata commit "$MP" -m "one"
for f in f1 f2 f3 f4; do printf 'two %s\n' "$f" >"$MP2/a/$f"; done
printf 'two changed b\n' >"$MP2/b/f5"
printf 'only two\n' >"$MP2/two.txt"

step "without choices: the conflicts are listed and nothing changes"
cp -a "$MP2" "$WORK/before"
expect_exit 4 strata rebase "$MP2"
for f in f1 f2 f3 f4; do expect_output_matches "^conflict: a/$f "; done
expect_stderr_matches "settle each with --ours PATH, --theirs PATH or --both PATH"
assert_same_tree "$MP2" "$WORK/before"

step "a conflict left without a choice: the others are listed, nothing changes"
expect_exit 4 strata rebase "$MP2" --ours a/f1 --theirs a/f2 --both a/f3
expect_output_matches "^conflict: a/f4 "
grep -q "conflict: a/f1" "$OUT" && fail "a settled conflict was listed again"
expect_stderr_matches "not settled; nothing was changed"
assert_same_tree "$MP2" "$WORK/before"

step "a choice for a path not in conflict, or malformed: an error, nothing changes"
expect_exit 1 strata rebase "$MP2" --ours a/f1 --theirs a/f2 --both a/f3 --theirs a/f4 --ours a/f6
expect_stderr_matches "'a/f6' is not in conflict; nothing was changed"
assert_same_tree "$MP2" "$WORK/before"
expect_exit 2 strata rebase "$MP2" --ours a/f1 --theirs a/f1
expect_stderr_matches "more than one of --ours, --theirs and --both"
expect_exit 2 strata rebase "$MP2" --ours /a/f1
expect_stderr_matches "from the workspace's top"
expect_exit 2 strata rebase "$MP2" --ours a/../a/f1
assert_same_tree "$MP2" "$WORK/before"

step "a choice for each: ours, theirs, both; everything else of both sides is kept"
expect_ok strata rebase "$MP2" --ours ./a/f1 --theirs a/f2 --both a/f3 --theirs a/f4
expect_output_matches "^settled: a/f3 .*a/f3\.theirs"
[[ $(cat "$MP2/a/f1") == "two f1" ]] || fail "--ours did not keep the workspace's version"
[[ $(cat "$MP2/a/f2") == "one f2" ]] || fail "--theirs did not take the other side's version"
[[ $(cat "$MP2/a/f3") == "two f3" ]] || fail "--both did not keep the workspace's version at the path"
[[ $(cat "$MP2/a/f3.theirs") == "one f3" ]] || fail "--both did not write the other side's version beside it"
[[ ! -e $MP2/a/f4 ]] || fail "--theirs did not take the other side's deletion"
[[ $(cat "$MP2/a/one.txt") == "only one" ]] || fail "the other side's new file was dropped"
[[ $(cat "$MP2/a/f6") == "one changed f6" ]] || fail "the other side's change of a/f6 was dropped"
[[ $(cat "$MP2/b/f5") == "two changed b" ]] || fail "the workspace's own change of b/f5 was dropped"
[[ $(cat "$MP2/two.txt") == "only two" ]] || fail "the workspace's new file was dropped"
[[ $(cat "$MP2/a/f5") == "a file 5" ]] || fail "an unchanged file changed"

step "the settled workspace commits on top of the other: linear, as the mount shows"
expect_ok strata log main --json
c1=$(json 'd[0]["id"]')
expect_ok strata commit "$MP2" -m "two, settled" --json
c2=$(json 'd["commit"]')
expect_ok strata log main --json
json_true '[c["id"] for c in d][:2] == ["'"$c2"'", "'"$c1"'"] and d[0]["parents"] == ["'"$c1"'"]'
expect_ok strata export "$c2" "$WORK/head"
assert_same_tree "$MP2" "$WORK/head"

step "a workspace that is not mounted is settled by its name; --both where the other side deleted"
printf 'one again\n' >"$MP/a/f5"
rm "$MP/a/f6"
expect_ok strata rebase "$MP"
expect_ok strata commit "$MP" -m "one again"
printf 'two again\n' >"$MP2/a/f5"
printf 'two edits f6\n' >"$MP2/a/f6"
expect_ok strata umount "$MP2"
expect_exit 4 strata rebase two --json
json_true 'sorted(c["path"] for c in d["conflicts"]) == ["a/f5", "a/f6"]'
expect_ok strata rebase two --both a/f5 --both a/f6
expect_ok strata mount --workspace two "$MP2"
[[ $(cat "$MP2/a/f5") == "two again" && $(cat "$MP2/a/f5.theirs") == "one again" ]] ||
  fail "--both on an unmounted workspace did not keep both versions"
[[ $(cat "$MP2/a/f6") == "two edits f6" && ! -e $MP2/a/f6.theirs ]] ||
  fail "--both where the other side deleted should keep the workspace's version alone"
expect_exit 1 strata rebase "$MP2" --ours a/f5
expect_stderr_matches "already up to date: nothing is in conflict"
