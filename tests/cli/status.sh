#!/usr/bin/env bash
# strata status on real mounts, and commands that find their workspace and
# store as git finds its repository: from the mount's root or any directory
# below it, with no --store, no STRATA_STORE and no argument. status lists
# what diff lists (added, modified, deleted, mode and type changes), names the
# workspace, its base and branch, and says when the branch moved on because
# another workspace committed to it; --json parses. Outside every mount, and
# with no store given, the commands say so.
source "$(dirname "$0")/lib.sh"
use_mountpoint
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; cd /; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

# The binary with neither --store nor STRATA_STORE (lib.sh unset it, and the
# default location under XDG_DATA_HOME holds no store).
bare() { "$STRATA_BIN" "$@"; }

mkdir -p "$WORK/src/sub/deep" "$WORK/src/typed"
for f in keep edit gone mode; do printf '%s\n' "$f" >"$WORK/src/$f"; done
printf 'deep\n' >"$WORK/src/sub/deep/file"
printf 'was a file\n' >"$WORK/src/sub/typed"

step "a fresh workspace: nothing to commit, up to date, from the root and from a subdirectory"
expect_ok "$STRATA_BIN" init "$STORE"
base=$(import_dir "$WORK/src" main base)
expect_ok strata mount --branch main --name one "$MP"
cd "$MP"
expect_ok bare status
expect_output_matches "^workspace one, mounted at $MP\$"
expect_output_matches "^base $base\$"
expect_output_matches "up to date with branch main"
expect_output_matches "nothing to commit"
cd "$MP/sub/deep"
expect_ok bare status --json
json_true 'd["workspace"] == "one" and d["mounted_at"] == "'"$MP"'" and d["base"] == "'"$base"'"'
json_true 'd["branch"] == "main" and d["branch_head"] == "'"$base"'" and not d["branch_moved"]'
json_true 'd["behind"] == 0 and d["ahead"] == 0 and d["changes"] == []'

step "add, modify, delete, chmod and a type change show as diff shows them"
printf 'new\n' >"$MP/added"
printf 'edited\n' >>"$MP/edit"
rm "$MP/gone"
chmod 0700 "$MP/mode"
rm "$MP/sub/typed"
mkdir "$MP/sub/typed"
cd "$MP/sub"
expect_ok bare status --json
cp "$OUT" "$WORK/status.json"
# Files only: the directories above them change their mtimes too.
json_true '({(c["status"], c["path"]) for c in d["changes"] if not c["path"].endswith("/") and c["path"] != "."} ==
            {("A", "added"), ("M", "edit"), ("D", "gone"), ("M", "mode")})'
json_true '[c["changed"] for c in d["changes"] if c["path"] == "mode"] == [["mode"]]'
json_true '[c["changed"] for c in d["changes"] if c["path"] == "edit"][0][0] == "content"'
json_true '[(c["old_kind"], c["new_kind"]) for c in d["changes"] if c["path"] == "sub/typed/"] == [("file", "dir")]'
json_true 'd["behind"] == 0 and not d["branch_moved"]'
# diff from the same subdirectory, with no argument and no store, lists the same.
expect_ok bare diff --json
json_true 'd["changes"] == json.load(open("'"$WORK/status.json"'"))["changes"]'
expect_ok bare diff
expect_output_matches "^A[[:space:]]+added\$"
expect_output_matches "^D[[:space:]]+gone\$"
# With no side, the paths after -- still limit it.
expect_ok bare diff -- sub
expect_output_matches "^T[[:space:]]+sub/typed/\$"
if grep -q "added" "$OUT"; then fail "diff -- sub listed a path outside sub"; fi
# A path inside the mount names it too, from anywhere.
cd "$WORK"
expect_ok bare status "$MP/sub/deep" --json
json_true 'd["changes"] == json.load(open("'"$WORK/status.json"'"))["changes"]'
n=$(json 'len(d["changes"])')
cd "$MP"
expect_ok bare status
expect_output_matches "^$n changed paths against the base \(.*1 added.*1 deleted.*modified.*1 type changed\):"
expect_output_matches "^  A  added\$"
expect_output_matches "^  T  sub/typed/\$"
expect_ok bare status --short
expect_output_matches "^## one \(main\)\$"
expect_output_matches "^D gone\$"
# By name, with the store given: the same answer.
cd "$WORK"
expect_ok strata status one --json
json_true 'd["changes"] == json.load(open("'"$WORK/status.json"'"))["changes"]'

step "commands on the store alone find it from inside a mount too"
cd "$MP/sub/deep"
expect_ok bare log main --json
json_true '[c["id"] for c in d] == ["'"$base"'"]'
expect_ok bare workspace list --json
json_true '[w["name"] for w in d] == ["one"]'
# stats: no argument is the store; a path inside the mount is its daemon's counters.
expect_ok bare stats --json
json_true '"objects" in d and "operations" not in d'
expect_ok bare stats . --json
json_true '"operations" in d and "workspace" in d'
cd "$WORK"
expect_ok strata stats "$MP/sub" --json
json_true '"operations" in d and "workspace" in d'

step "outside every mount, with no store: the commands say so"
cd "$WORK"
expect_exit 1 bare log main
expect_stderr_matches "no store"
expect_exit 1 bare status
expect_stderr_matches "not inside a strata mount"
expect_exit 1 bare diff
expect_stderr_matches "not inside a strata mount"
expect_exit 1 bare commit -m "nowhere"
expect_stderr_matches "not inside a strata mount"

step "another workspace commits to the branch, from a subdirectory with no store: the first is told the branch moved on"
expect_ok strata mount --branch main --name two "$MP2"
printf 'from two\n' >"$MP2/sub/two.txt"
cd "$MP2/sub/deep"
expect_ok bare commit -m "two" --json
c2=$(json 'd["commit"]')
expect_ok bare status --json
json_true 'd["workspace"] == "two" and d["base"] == "'"$c2"'" and d["changes"] == [] and not d["branch_moved"]'
cd "$MP/sub"
expect_ok bare status --json
json_true 'd["base"] == "'"$base"'" and d["branch_head"] == "'"$c2"'" and d["branch_moved"]'
json_true 'd["behind"] == 1 and d["ahead"] == 0'
expect_ok bare status
expect_output_matches "branch main moved on: 1 commit new since the base"
expect_ok bare status --short
expect_output_matches "^## one \(main, behind 1\)\$"

step "commit from a subdirectory with no store: head moved; rebase and commit; then up to date"
expect_exit 4 bare commit -m "one"
expect_stderr_matches "head moved"
expect_ok bare rebase .
expect_ok bare commit -m "one" --json
c1=$(json 'd["commit"]')
expect_ok strata log main --json
json_true '[c["id"] for c in d][:3] == ["'"$c1"'", "'"$c2"'", "'"$base"'"]'
expect_ok bare status --json
json_true 'd["base"] == "'"$c1"'" and d["changes"] == [] and d["behind"] == 0 and not d["branch_moved"]'
[[ $(cat "$MP/sub/two.txt") == "from two" ]] || fail "the rebase did not bring the other workspace's file"
cd "$MP2"
expect_ok bare status --json
json_true 'd["behind"] == 1 and d["branch_head"] == "'"$c1"'"'
cd "$WORK"
expect_ok strata umount "$MP"
expect_ok strata umount "$MP2"
