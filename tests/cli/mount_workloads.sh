#!/usr/bin/env bash
# Real programs on a mounted workspace: stress-ng filesystem stressors, git,
# and untar of a source tree compared with the same tree untarred on disk.
# On the transport $STRATA_FUSE_TRANSPORT names (libfuse when unset).
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v stress-ng >/dev/null || fail "stress-ng is not installed (scripts/install-deps.sh installs it)"
command -v git >/dev/null || fail "git is not installed (scripts/install-deps.sh installs it)"

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name work "$MP"
expect_transport "$MP"

for stressor in dir rename link hdd xattr mmap fallocate; do
  step "stress-ng --$stressor"
  mkdir "$MP/stress-$stressor"
  stress-ng "--$stressor" 2 --timeout 3s --temp-path "$MP/stress-$stressor" >"$WORK/stress.out" 2>&1 ||
    { tail -n 20 "$WORK/stress.out" >&2; fail "stress-ng --$stressor failed on the mount"; }
  grep -q "successful run completed" "$WORK/stress.out" || { cat "$WORK/stress.out" >&2; fail "stress-ng --$stressor did not complete"; }
done

step "git: init, add, commit, branch, checkout, status"
gitc() { git -C "$MP/repo" -c user.email=test@strata -c user.name=test "$@"; }
mkdir "$MP/repo"
gitc init -q -b main
cp -r /usr/include/linux/can "$MP/repo/"
gitc add .
gitc commit -qm first
gitc checkout -qb feature
echo "/* changed */" >>"$MP/repo/can/raw.h"
gitc commit -qam second
gitc checkout -q main
grep -q "changed" "$MP/repo/can/raw.h" && fail "checkout of main did not restore raw.h"
[[ -z $(gitc status --porcelain) ]] || fail "git status is not clean after checkout"
[[ $(gitc rev-list --all | wc -l) == 2 ]] || fail "git does not see both commits"
gitc fsck --no-progress >/dev/null 2>&1 || fail "git fsck found problems in a repository on the mount"

step "untar a source tree onto the mount and onto disk, and compare"
tar -C /usr/include -cf "$WORK/src.tar" linux
mkdir "$MP/untar" "$WORK/untar"
tar -C "$MP/untar" -xf "$WORK/src.tar"
tar -C "$WORK/untar" -xf "$WORK/src.tar"
diff -r --no-dereference "$WORK/untar" "$MP/untar" || fail "the tree untarred on the mount differs"
assert_same_metadata "$WORK/untar" "$MP/untar"

expect_ok strata umount "$MP"
