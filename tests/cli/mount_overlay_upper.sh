#!/usr/bin/env bash
# Kernel overlayfs with its upper and work directories on a workspace mount
# (how a container engine would keep its layers in a workspace): the overlay
# mounts (overlayfs demands RENAME_WHITEOUT, xattrs and d_type of an upper
# layer on FUSE), writes go to the upper directory, a deleted lower file
# leaves a whiteout there (a character device 0:0) and stays deleted when the
# overlay is mounted again, and the workspace commits the upper layer.
source "$(dirname "$0")/lib.sh"
use_mountpoint
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
grep -qw overlay /proc/filesystems || { echo "SKIP: no overlayfs" >&2; exit 77; }
OV="$WORK/merged"
LOWER="$WORK/lower"
mkdir -p "$OV" "$LOWER/sub"
echo "lower a" >"$LOWER/a"
echo "lower b" >"$LOWER/sub/b"
trap 'rc=$?; set +e; umount "$OV" 2>/dev/null || true; fusermount3 -u -z "$MP" 2>/dev/null || true; (exit $rc); _cleanup' EXIT
mount_overlay() {
  mount -t overlay overlay -o "lowerdir=$LOWER,upperdir=$MP/upper,workdir=$MP/work" "$OV" 2>"$WORK/ovl.err" ||
    fail "the overlay does not mount: $(cat "$WORK/ovl.err"); $(dmesg 2>/dev/null | grep overlayfs | tail -n 3)"
}

step "overlayfs mounts with its upper layer in a workspace"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ovl "$MP"
mkdir "$MP/upper" "$MP/work"
mount_overlay
echo "new" >"$OV/new"
echo "changed" >"$OV/a"
rm "$OV/sub/b"
[[ $(cat "$OV/a") == changed && ! -e "$OV/sub/b" && $(cat "$OV/new") == new ]] || fail "the overlay's view"
umount "$OV"

step "the upper layer holds the changes and a whiteout"
[[ $(cat "$MP/upper/a") == changed && $(cat "$MP/upper/new") == new ]] || fail "the upper layer's files"
[[ $(stat -c '%F %t:%T' "$MP/upper/sub/b") == "character special file 0:0" ]] ||
  fail "no whiteout for sub/b: $(stat -c '%F %t:%T' "$MP/upper/sub/b" 2>&1)"
[[ $(cat "$LOWER/sub/b") == "lower b" ]] || fail "the lower layer changed"

step "committed and mounted again, the overlay shows the same tree"
expect_ok strata commit "$MP" -m layer --branch main
expect_ok strata umount "$MP"
expect_ok strata mount --workspace ovl "$MP"
mount_overlay
[[ $(cat "$OV/a") == changed && ! -e "$OV/sub/b" && $(cat "$OV/new") == new ]] || fail "the overlay after a remount"
umount "$OV"
expect_ok strata umount "$MP"
