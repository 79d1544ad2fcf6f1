#!/usr/bin/env bash
# An xattr the export's target cannot hold (64 KiB values are accepted by the
# kernel and by strata; ext4 without ea_inode holds about one block of xattrs
# per file): export names the file, the attribute and its size, and leaves
# nothing behind: the destination it created is gone, an empty one it was
# given is empty again. The same commit exports whole to ext4 with ea_inode.
source "$(dirname "$0")/lib.sh"
use_mountpoint
IMG="$WORK/ext4.img" IMG2="$WORK/ext4-ea.img" EXT="$WORK/ext4" EXT2="$WORK/ext4-ea"
mkdir -p "$EXT" "$EXT2"
truncate -s 32M "$IMG" "$IMG2"
mkfs.ext4 -q -F -O ^ea_inode "$IMG" >/dev/null 2>&1 || { echo "SKIP: no mkfs.ext4" >&2; exit 77; }
mkfs.ext4 -q -F -O ea_inode "$IMG2" >/dev/null 2>&1 || { echo "SKIP: mkfs.ext4 without ea_inode" >&2; exit 77; }
mount -o loop "$IMG" "$EXT" || { echo "SKIP: cannot mount a loop ext4" >&2; exit 77; }
mount -o loop "$IMG2" "$EXT2" || { umount "$EXT"; echo "SKIP: cannot mount a loop ext4" >&2; exit 77; }
trap 'rc=$?; set +e; fusermount3 -u -z "$MP" 2>/dev/null || true; umount "$EXT" 2>/dev/null || true; umount "$EXT2" 2>/dev/null || true; (exit $rc); _cleanup' EXIT

setxattr() { python3 -c 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], b"v" * int(sys.argv[3]))' "$@"; }
removexattr() { python3 -c 'import os, sys; os.removexattr(sys.argv[1], sys.argv[2])' "$@"; }

step "a 64 KiB xattr value is accepted on a mount and committed"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name x "$MP"
mkdir -p "$MP/a/b"
for i in $(seq 20); do printf 'file %s\n' "$i" >"$MP/a/f$i"; done
printf 'the big one\n' >"$MP/a/b/big"
setxattr "$MP/a/b/big" user.big 65536
setxattr "$MP/a/f1" user.small 100
expect_ok strata commit "$MP" -m "big xattr on a file" --branch main --json
on_file=$(json 'd["commit"]')
removexattr "$MP/a/b/big" user.big
setxattr "$MP" user.big 65536
expect_ok strata commit "$MP" -m "big xattr on the top directory" --json
on_root=$(json 'd["commit"]')
expect_ok strata umount "$MP"

step "export to ext4 without ea_inode: the file and attribute are named, nothing is left"
expect_fail strata export "$on_file" "$EXT/new"
[[ $RC == 1 ]] || { _show_last; fail "export exited $RC, want 1"; }
expect_stderr_matches "xattr user\.big \(65536 bytes\) of $EXT/new/a/b/big"
expect_stderr_matches "no space left on device"
expect_stderr_matches "nothing was left in $EXT/new"
[[ ! -e $EXT/new ]] || fail "the failed export left $EXT/new behind: $(find "$EXT/new" | head)"
mkdir "$EXT/given"
expect_fail strata export "$on_file" "$EXT/given"
expect_stderr_matches "xattr user\.big \(65536 bytes\) of $EXT/given/a/b/big"
[[ -d $EXT/given && -z $(ls -A "$EXT/given") ]] || fail "the failed export left entries in $EXT/given"

step "a big xattr of the top directory: named, and nothing left either"
expect_fail strata export "$on_root" "$EXT/root"
expect_stderr_matches "xattr user\.big \(65536 bytes\) of $EXT/root"
[[ ! -e $EXT/root ]] || fail "the failed export left $EXT/root behind"

step "ext4 with ea_inode holds it: the export is whole"
expect_ok strata export "$on_file" "$EXT2/out"
[[ $(python3 -c 'import os, sys; print(len(os.getxattr(sys.argv[1], "user.big")))' "$EXT2/out/a/b/big") == 65536 ]] ||
  fail "the exported file lacks its 64 KiB xattr"
expect_ok strata export "$on_root" "$EXT2/root"
[[ $(python3 -c 'import os, sys; print(len(os.getxattr(sys.argv[1], "user.big")))' "$EXT2/root") == 65536 ]] ||
  fail "the exported top directory lacks its 64 KiB xattr"
