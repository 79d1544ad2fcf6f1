#!/usr/bin/env bash
# A full disk: the store (and the workspaces in it) on a 24 MiB tmpfs. An
# import that does not fit fails with a clear "no space" error and leaves the
# store as it was (verify and fsck clean, branches unchanged, no temp packs);
# writes through a mount fail with ENOSPC while files already written stay
# intact; deleting a file through the mount gives its space back, as often as
# the disk fills; the workspace then commits what it holds.
source "$(dirname "$0")/lib.sh"
use_mountpoint
SMALL="$WORK/small"
mkdir -p "$SMALL"
mount -t tmpfs -o size=24m tmpfs "$SMALL" || { echo "SKIP: cannot mount a tmpfs" >&2; exit 77; }
# set +e: under errexit, the (exit $rc) that hands a failure's status on to
# _cleanup would end the trap there and leave the scratch directory behind.
trap 'rc=$?; set +e; fusermount3 -u -z "$MP" 2>/dev/null; umount -l "$SMALL" 2>/dev/null; (exit $rc); _cleanup' EXIT
STORE="$SMALL/store"

mkdir -p "$WORK/small-src" "$WORK/big-src"
for i in $(seq 20); do printf 'small %s\n' "$i" >"$WORK/small-src/f$i"; done
head -c 40000000 /dev/urandom >"$WORK/big-src/big.bin"

step "an import larger than the disk fails cleanly and changes nothing"
expect_ok "$STRATA_BIN" init "$STORE"
first=$(import_dir "$WORK/small-src" main)
expect_fail strata import "$WORK/big-src" --branch main -m "too big"
expect_stderr_matches "no space left"
expect_ok strata verify
expect_ok strata fsck
expect_ok strata log main --json
json_true 'len(d) == 1 and d[0]["id"] == "'"$first"'"'
assert_store_tmp_empty

step "after a failed import there is room again for what fits"
mkdir -p "$WORK/more-src"
head -c 3000000 /dev/urandom >"$WORK/more-src/three-mb"
import_dir "$WORK/more-src" other >/dev/null
expect_ok strata export other "$WORK/more-out"
assert_same_content "$WORK/more-src" "$WORK/more-out"

# free_bytes: what the small disk has free, in bytes.
free_bytes() { echo $(( $(stat -f -c '%f * %S' "$SMALL") )); }

# fill_mount NAME: writes NAME on the mount until the disk is full; the write
# must fail with ENOSPC (never another error, such as ENOENT).
fill_mount() {
  if dd if=/dev/zero of="$MP/$1" bs=1M count=64 conv=fsync status=none 2>"$WORK/dd.err"; then
    fail "writing 64 MiB onto a 24 MiB disk succeeded"
  fi
  grep -qi "no space left" "$WORK/dd.err" || fail "dd failed with something else than ENOSPC: $(cat "$WORK/dd.err")"
}

# delete_frees NAME: deleting NAME (at least 6 MiB) through the mount gives
# its size back to the disk within 5 s, but for the 4 MiB the workspace takes
# again as its reserve once there is room (docs/format/workspace.md) and 1 MiB
# of slack.
delete_frees() {
  local size before want i
  size=$(stat -c %s "$MP/$1")
  (( size >= 6 * 1048576 )) || fail "$1 holds only $size bytes: the disk filled before it"
  before=$(free_bytes)
  want=$(( before + size - 5 * 1048576 ))
  rm "$MP/$1"
  for i in $(seq 50); do
    (( $(free_bytes) >= want )) && return 0
    sleep 0.1
  done
  fail "deleting $1 ($size bytes) on a full disk freed $(( $(free_bytes) - before )) bytes in 5 s"
}

step "writes through a mount fail with ENOSPC; what was written stays"
expect_ok strata mount --branch main --name ws "$MP"
head -c 2000000 /dev/urandom >"$WORK/keep.bin"
cp "$WORK/keep.bin" "$MP/keep.bin"
sync -f "$MP/keep.bin"
fill_mount fill
cmp -s "$WORK/keep.bin" "$MP/keep.bin" || fail "a file written before the disk filled changed"
[[ $(cat "$MP/f3") == "small 3" ]] || fail "a base file is unreadable on a full disk"

step "deleting a file through the mount gives its space back, again and again"
delete_frees fill
head -c 1000000 /dev/urandom >"$WORK/after.bin"
cp "$WORK/after.bin" "$MP/after.bin"
sync -f "$MP/after.bin"
cmp -s "$WORK/after.bin" "$MP/after.bin" || fail "a file written after the deletion reads back other bytes"
for round in 2 3; do
  fill_mount "fill$round"
  delete_frees "fill$round"
done
cmp -s "$WORK/keep.bin" "$MP/keep.bin" || fail "a file written before the disk filled changed"

step "the workspace commits what it holds once deletions made room"
expect_ok strata commit "$MP" -m "after the disk was full"
expect_ok strata umount "$MP"
expect_ok strata cat main:keep.bin
cmp -s "$OUT" "$WORK/keep.bin" || fail "the commit after a full disk holds other bytes for keep.bin"
expect_ok strata cat main:after.bin
cmp -s "$OUT" "$WORK/after.bin" || fail "the commit after a full disk holds other bytes for after.bin"
expect_ok strata ls main
! grep -q fill "$OUT" || fail "a file deleted on the full disk is in the commit"
expect_ok strata fsck
