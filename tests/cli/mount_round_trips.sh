#!/usr/bin/env bash
# Round trips a mount saves, and what must stay right while it saves them:
#  - a directory's listing is kept by the kernel between opens (a second
#    listing sends no READDIR), yet every change shows in the next listing,
#    whether made through the mount, through a bind mount of the directory
#    (another path to the same inode), or behind the kernel by a reset; the
#    past versions' .strata/branches/, which follows the store, is listed
#    afresh;
#  - with FUSE_HANDLE_KILLPRIV_V2 the kernel stops asking for
#    security.capability before each write (a file written in many pieces
#    costs a GETXATTR or two, not one per write), and the daemon clears the
#    set-id bits itself: a write, a truncation and a chown by a user clear
#    setuid, root's write keeps it, chown clears it even for root;
#  - a commit, which makes the kernel write back and drop the pages of the
#    files it may hold dirty, leaves the cached pages of a file that was only
#    read (its next read sends no READ); tests/cli/mmap_commit.sh checks that
#    what is written through a mapping still reaches the commit. Only where
#    the kernel asks before it opens (the strata transports): on libfuse 3.14
#    it opens without asking, so every file it holds may be dirty.
source "$(dirname "$0")/lib.sh"
use_mountpoint
chmod 0755 "$WORK"
command -v setpriv >/dev/null || { echo "SKIP: no setpriv" >&2; exit 77; }

# count OPCODE: how many requests of OPCODE the mount has served.
count() {
  expect_ok strata stats "$MP" --json
  json "d['operations'].get('$1', {}).get('count', 0)"
}
listings() { echo $(($(count readdir) + $(count readdirplus))); }
# same DIR EXPECTED...: ls of DIR is exactly the names given.
same() {
  local dir=$1 got want=
  shift
  got=$(ls -A "$dir" | LC_ALL=C sort | tr '\n' ' ')
  (($#)) && want=$(printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' ' ')
  [[ $got == "$want" ]] || fail "ls $dir: '$got', expected '$want'"
}
as_user() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
mode_of() { stat -c %a "$1"; }

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name rt "$MP"

step "a listing is kept between opens"
mkdir "$MP/d" "$MP/e"
touch "$MP/d/a" "$MP/d/b"
same "$MP/d" a b
before=$(listings)
same "$MP/d" a b
same "$MP/d" a b
[[ $(listings) == "$before" ]] || fail "a second listing of an unchanged directory sent $(($(listings) - before)) READDIRs"

step "changes through the mount show in the next listing"
touch "$MP/d/c"; same "$MP/d" a b c
rm "$MP/d/a"; same "$MP/d" b c
mv "$MP/d/b" "$MP/e/b"; same "$MP/d" c; same "$MP/e" b
mv "$MP/e/b" "$MP/d/b2"; same "$MP/d" b2 c; same "$MP/e"
ln "$MP/d/c" "$MP/e/c-link"; same "$MP/e" c-link
mkdir "$MP/d/sub"; ln -s c "$MP/d/sym"; same "$MP/d" b2 c sub sym
rmdir "$MP/d/sub"; same "$MP/d" b2 c sym

step "through another path to the same directory (a bind mount)"
mkdir "$WORK/alias"
mount --bind "$MP/d" "$WORK/alias"
same "$WORK/alias" b2 c sym
touch "$WORK/alias/through-alias"
rm "$WORK/alias/c"
same "$MP/d" b2 sym through-alias
umount "$WORK/alias"

step "behind the kernel: a reset replaces what a kept directory holds"
expect_ok strata commit "$MP" -m listed --branch main
touch "$MP/d/after-commit"
rm "$MP/d/b2"
same "$MP/d" sym through-alias after-commit
expect_ok strata reset "$MP" --hard main
same "$MP/d" b2 sym through-alias

step "the past versions' own directories follow the store"
same "$MP/.strata/branches" main
same "$MP/.strata/branches" main
expect_ok strata branch create second main  # through the store, not the mount
same "$MP/.strata/branches" main second

step "few GETXATTRs for a file written in many pieces (KILLPRIV_V2)"
before=$(count getxattr)
dd if=/dev/zero of="$MP/pieces" bs=4096 count=64 status=none
asked=$(($(count getxattr) - before))
((asked <= 2)) || fail "64 writes to one file sent $asked GETXATTRs"

step "set-id bits: cleared by a user's write, truncation and chown, kept by root's write"
reset_file() { rm -f "$MP/s"; printf x >"$MP/s"; chmod 06777 "$MP/s"; }
reset_file
printf y >>"$MP/s"
[[ $(mode_of "$MP/s") == 6777 ]] || fail "root's write changed the mode to $(mode_of "$MP/s")"
as_user sh -c "printf y >>'$MP/s'"
[[ $(mode_of "$MP/s") == 777 ]] || fail "a user's write left mode $(mode_of "$MP/s")"
reset_file
as_user truncate -s 0 "$MP/s"
[[ $(mode_of "$MP/s") == 777 ]] || fail "a user's truncation left mode $(mode_of "$MP/s")"
reset_file
chmod 04755 "$MP/s"
chown 65534 "$MP/s"
[[ $(mode_of "$MP/s") == 755 ]] || fail "root's chown left mode $(mode_of "$MP/s")"

if [[ ${STRATA_FUSE_TRANSPORT:-libfuse} != libfuse ]]; then
  step "a commit keeps the cached pages of a file only read"
  head -c 262144 /dev/urandom >"$MP/d/kept"
  expect_ok strata commit "$MP" -m kept --branch main
  expect_ok strata umount "$MP"
  expect_ok strata mount --workspace rt "$MP"  # the kernel knows the file afresh: never opened for writing
  cp "$MP/d/kept" "$WORK/kept"
  reads=$(count read)
  ((reads > 0)) || fail "reading a committed file sent no READ"
  printf w >"$MP/d/written"  # a file the commit must flush
  expect_ok strata commit "$MP" -m again
  cmp "$MP/d/kept" "$WORK/kept" || fail "the file read back differs"
  [[ $(count read) == "$reads" ]] || fail "a read after a commit sent $(($(count read) - reads)) READs: the commit dropped the pages of a file only read"
fi
expect_ok strata umount "$MP"
