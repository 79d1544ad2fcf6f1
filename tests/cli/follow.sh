#!/usr/bin/env bash
# A read-only mount that follows a branch: a commit on the branch reaches it
# within a few poll intervals; a file opened before the move keeps its old
# bytes; a deleted file goes, a new one comes, a listing is fresh; a branch
# deleted keeps the commit shown.
source "$(dirname "$0")/lib.sh"
use_two_mountpoints

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name writer "$MP"
mkdir "$MP/d"
echo old >"$MP/kept"
echo gone >"$MP/d/gone"
expect_ok strata commit "$MP" -m one --branch main

step "usage: --follow needs --read-only BRANCH, and a branch"
expect_fail strata mount --follow "$MP2"
expect_fail strata mount --read-only main~0 --follow "$MP2"

step "a follow mount shows the head, and says so in its status"
expect_ok strata mount --read-only main --follow --poll-interval 200ms "$MP2"
[[ $(cat "$MP2/kept") == old ]] || fail "kept is not the first commit's"
[[ -e $MP2/d/gone ]] || fail "d/gone is missing"
exec 3<"$MP2/kept"

step "a new commit on the branch reaches the mount"
echo new >"$MP/kept"
rm "$MP/d/gone"
echo hello >"$MP/d/fresh"
expect_ok strata commit "$MP" -m two --json
second=$(json 'd["commit"]')
head_now() { [[ -e $MP2/d/fresh ]]; }
until_true 30 head_now
[[ $(cat "$MP2/d/fresh") == hello ]] || fail "d/fresh has the wrong bytes"
[[ ! -e $MP2/d/gone ]] || fail "d/gone is still there"
[[ $(ls "$MP2/d") == fresh ]] || fail "the listing of d is stale: $(ls "$MP2/d")"
[[ $(cat "$MP2/kept") == new ]] || fail "a new open of kept reads the old bytes"
expect_ok strata stats "$MP2" --json
[[ $(json 'd["base"]') == "$second" ]] || fail "stats shows another commit than $second"
[[ $(cat <&3) == old ]] || fail "the file opened before the move lost its old bytes"
exec 3<&-
expect_fail touch "$MP2/x"

step "the branch deleted: the mount keeps its commit"
expect_ok strata branch delete main
follower_failed() { cat "$STORE"/workspaces/*/daemon.log 2>/dev/null | grep -q "not followed"; }
until_true 30 follower_failed
[[ $(cat "$MP2/kept") == new ]] || fail "the mount lost its commit when the branch went"
expect_ok strata umount "$MP2"
expect_ok strata umount "$MP"
