#!/usr/bin/env bash
# What a user commonly gets wrong is refused with a message that says what to
# do, and changes nothing: a mount over a directory that holds files (unless
# --nonempty), on a directory that does not exist, a new workspace whose name
# is taken, a second init of a store, a commit id prefix too short to look up.
# And a remote can be removed again.
source "$(dirname "$0")/lib.sh"
use_mountpoint

mkdir -p "$WORK/src"
printf 'hello\n' >"$WORK/src/a.txt"

step "a second init of a store says it is one, and leaves it as it is"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
BASE=$(commit_of_output)
expect_fail "$STRATA_BIN" init "$STORE"
expect_stderr_matches "is already a strata store; it was left as it is"
expect_ok strata log main
expect_output_matches "base"

step "a mount over a directory that holds files is refused unless --nonempty"
printf 'mine\n' >"$MP/kept.txt"
expect_fail strata mount --branch main --name ws1 "$MP"
expect_stderr_matches "is not empty: a mount would hide its files until unmounted \(use --nonempty"
! grep -q " $MP fuse" /proc/mounts || fail "mounted over a non-empty directory"
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] == "ws1"] == []'
expect_ok strata mount --branch main --name ws1 --nonempty "$MP"
[[ $(cat "$MP/a.txt") == hello ]] || fail "the workspace is not what the mount shows"
[[ ! -e "$MP/kept.txt" ]] || fail "the directory's own file shows through the mount"
expect_ok strata umount "$MP"
[[ $(cat "$MP/kept.txt") == mine ]] || fail "the directory's own file was lost"
rm "$MP/kept.txt"

step "a mount on a directory that does not exist says so and how to make it"
expect_fail strata mount --branch main --name ws2 "$WORK/no/such/dir"
expect_stderr_matches "mountpoint $WORK/no/such/dir does not exist \(create the directory first: mkdir -p "
[[ ! -e "$WORK/no" ]] || fail "the refused mount created the directory"

step "a new workspace whose name is taken: mount it, or choose another name"
expect_fail strata mount --branch main --name ws1 "$MP"
expect_stderr_matches "a workspace named 'ws1' exists already: mount it with --workspace ws1, or give the new one another name with --name"
! grep -q "choose another with --name): workspace" "$ERR" || fail "the old doubled message is back"
! grep -q " $MP fuse" /proc/mounts || fail "mounted although the name was taken"

step "a commit id prefix that is too short says how long one must be"
expect_fail strata show "${BASE:0:3}"
expect_stderr_matches "not a branch, and a commit id prefix needs 4 hex digits at least"
expect_ok strata show "${BASE:0:4}"

step "remote remove forgets a remote here, and nothing else"
start_fake_s3 "$WORK/fake"
expect_ok strata remote add origin s3://bkt/p --endpoint "$EP" --create-bucket
expect_ok strata remote list
expect_output_matches '^origin'
expect_fail strata remote remove nosuch
expect_stderr_matches "no remote named nosuch"
expect_ok strata remote remove origin
expect_ok strata remote list
[[ ! -s "$OUT" ]] || fail "the removed remote is still listed: $(cat "$OUT")"
[[ ! -e "$STORE/remotes/origin" ]] || fail "the remote's local side is left"
expect_ok strata log main
expect_fail strata push origin main
expect_stderr_matches "no remote named origin"
# Its name is free again (the bucket kept its settings).
expect_ok strata remote add origin s3://bkt/p --endpoint "$EP"
