#!/usr/bin/env bash
# File handles through a mount (name_to_handle_at, open_by_handle_at: the NFS
# export and fanotify path): a handle of a file or of a nested directory opens
# the same file, also after the mount is cycled (the kernel holds none of the
# inodes then and asks the daemon for "." and ".." by number); a handle of a
# file deleted since is ESTALE; a renamed file keeps its handle.
source "$(dirname "$0")/lib.sh"
use_mountpoint
[[ -n "${FILE_HANDLE_BIN:-}" && -x "$FILE_HANDLE_BIN" ]] || fail "FILE_HANDLE_BIN is not set"
fh() { "$FILE_HANDLE_BIN" "$@"; }

step "handles of files and directories open them"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name fh "$MP"
mkdir -p "$MP/a/b/c"
echo "the file" >"$MP/a/b/file"
echo "to delete" >"$MP/a/gone"
echo "to rename" >"$MP/a/moved"
touch "$MP/a/b/c/inside"
h_file=$(fh encode "$MP/a/b/file")
h_dir=$(fh encode "$MP/a/b/c")
h_gone=$(fh encode "$MP/a/gone")
h_moved=$(fh encode "$MP/a/moved")
ino_file=$(stat -c %i "$MP/a/b/file")
ino_dir=$(stat -c %i "$MP/a/b/c")
check_open() {  # check_open WHAT HANDLE INO EXPECTED_CONTENT
  run fh open "$MP" "$2"
  [[ $RC == 0 ]] || fail "$1: open_by_handle_at failed: $(cat "$OUT" "$ERR")"
  [[ $(head -n1 "$OUT") == "ino $3" ]] || fail "$1: opened $(head -n1 "$OUT"), expected ino $3"
  [[ $(tail -n +2 "$OUT") == "$4" ]] || fail "$1: read '$(tail -n +2 "$OUT")', expected '$4'"
}
check_open "file" "$h_file" "$ino_file" "the file"
check_open "directory" "$h_dir" "$ino_dir" "inside"

step "after a remount (nothing cached in the kernel) the handles still open"
rm "$MP/a/gone"
mv "$MP/a/moved" "$MP/a/b/c/moved"
ino_moved=$(stat -c %i "$MP/a/b/c/moved")
expect_ok strata umount "$MP"
expect_ok strata mount --workspace fh "$MP"
check_open "directory after a remount" "$h_dir" "$ino_dir" "$(printf 'inside\nmoved')"
check_open "file after a remount" "$h_file" "$ino_file" "the file"
check_open "renamed file after a remount" "$h_moved" "$ino_moved" "to rename"
run fh open "$MP" "$h_gone"
[[ $RC != 0 && $(cat "$OUT") == ESTALE ]] || fail "a deleted file's handle: $(cat "$OUT" "$ERR"), expected ESTALE"
# A path the kernel reaches through the directory opened by handle is the one
# it names (its ".." chain was looked up by the daemon).
[[ $(cat "$MP/a/b/file") == "the file" ]] || fail "the path after opening by handle"
expect_ok strata umount "$MP"
