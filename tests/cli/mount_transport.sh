#!/usr/bin/env bash
# `strata mount --transport`: a workspace served through strata's own codec
# of the FUSE protocol works like one served through libfuse (files, a
# listing, a rename, xattrs, a commit and a read-only mount of it), and stats,
# JSON and text, name the transport each mount uses. strata-uring falls back
# to the classic loop when the kernel does not offer FUSE over io_uring, and
# stats say so. An unknown transport, given or in $STRATA_FUSE_TRANSPORT, is
# refused before anything is mounted.
source "$(dirname "$0")/lib.sh"
use_mountpoint
unset STRATA_FUSE_TRANSPORT

expect_ok "$STRATA_BIN" init "$STORE"

step "an unknown transport is refused"
expect_fail strata mount --transport carrier-pigeon --new --name w "$MP"
STRATA_FUSE_TRANSPORT=carrier-pigeon expect_fail strata mount --new --name w "$MP"
expect_stderr_matches "must be libfuse, strata or strata-uring, not 'carrier-pigeon'"
grep -q " $MP " /proc/mounts && fail "a refused mount left something mounted"

step "a workspace on the strata transport"
expect_ok strata mount --transport strata --new --name w "$MP"
grep -q " $MP fuse.strata " /proc/mounts || fail "not mounted as fuse.strata: $(grep " $MP " /proc/mounts)"
grep " $MP " /proc/mounts | grep -q noatime || fail "the default noatime did not reach the mount options"
expect_ok strata stats --json "$MP"
json_true 'd["transport"] == "strata"'
expect_ok strata stats "$MP"
expect_output_matches '^transport +strata$'

mkdir -p "$MP/d/e"
printf 'hello\n' > "$MP/d/a.txt"
head -c 3000000 /dev/urandom > "$WORK/big"
cp "$WORK/big" "$MP/d/e/big"
ln -s a.txt "$MP/d/link"
mv "$MP/d/a.txt" "$MP/d/b.txt"
setfattr -n user.colour -v blue "$MP/d/b.txt"
[[ $(cat "$MP/d/link" 2>/dev/null || true) == "" ]] || fail "a dangling symlink resolved"
[[ $(cat "$MP/d/b.txt") == hello ]] || fail "read back wrong bytes through the strata transport"
cmp -s "$WORK/big" "$MP/d/e/big" || fail "a 3 MB file read back differently"
[[ $(getfattr --only-values -n user.colour "$MP/d/b.txt") == blue ]] || fail "the xattr did not survive"
[[ $(ls "$MP/d" | tr '\n' ' ') == "b.txt e link " ]] || fail "listing: $(ls "$MP/d")"
expect_ok strata stats --json "$MP"
# Writes of files with local bytes only go straight to the data files (passthrough).
json_true 'd["operations"].get("write", {"count": 0})["count"] + d["passthrough"]["write_opens"] > 0 and d["operations"]["readdirplus"]["count"] + d["operations"].get("readdir", {"count": 0})["count"] > 0'
# The classic loop read every request from /dev/fuse; none came over a ring.
json_true 'd["fuse_requests"]["over_io_uring"] == 0 and d["fuse_requests"]["read_from_dev_fuse"] > 10'
expect_ok strata stats "$MP"
expect_output_matches '^requests +0 over io_uring, [0-9]+ read from /dev/fuse$'
expect_ok strata commit --branch main -m "through the strata transport" "$MP"
expect_ok strata umount "$MP"
grep -q " $MP " /proc/mounts && fail "still mounted after umount"

step "the default is libfuse; the environment selects strata"
expect_ok strata mount --workspace w "$MP"
expect_ok strata stats --json "$MP"
json_true 'd["transport"] == "libfuse"'
json_true 'd["fuse_requests"] == {"over_io_uring": 0, "read_from_dev_fuse": 0}'
cmp -s "$WORK/big" "$MP/d/e/big" || fail "the file written through the strata transport reads differently through libfuse"
expect_ok strata umount "$MP"
STRATA_FUSE_TRANSPORT=strata expect_ok strata mount --read-only main "$MP"
expect_ok strata stats --json "$MP"
json_true 'd["transport"] == "strata"'
grep " $MP " /proc/mounts | grep -q '[ ,]ro[ ,]' || fail "the read-only mount is not ro: $(grep " $MP " /proc/mounts)"
cmp -s "$WORK/big" "$MP/d/e/big" || fail "the committed file reads differently on the read-only mount"
touch "$MP/new" 2>/dev/null && fail "a read-only mount on the strata transport took a new file"
expect_ok strata umount "$MP"

step "strata-uring: over io_uring where the kernel offers it, else the classic loop"
switch=/sys/module/fuse/parameters/enable_uring
expected="strata (classic; io_uring not offered)"
[[ -f $switch && $(cat "$switch") == Y ]] && expected="strata (io_uring)"
expect_ok strata mount --transport strata-uring --workspace w "$MP"
expect_ok strata stats --json "$MP"
json_true "d['transport'] == '$expected'"
expect_ok strata stats "$MP"
expect_output_matches "^transport +${expected//[()]/.}\$"
cmp -s "$WORK/big" "$MP/d/e/big" || fail "the file reads differently on strata-uring"
printf 'again\n' > "$MP/d/c.txt"
[[ $(cat "$MP/d/c.txt") == again ]] || fail "read back wrong bytes on strata-uring"
expect_ok strata stats --json "$MP"
if [[ $expected == "strata (io_uring)" ]]; then
  # Over the ring: the lookups, reads and the write above; /dev/fuse carried
  # only what never goes over it (INIT, and perhaps FORGET or INTERRUPT).
  json_true 'd["fuse_requests"]["over_io_uring"] > 10 and d["fuse_requests"]["read_from_dev_fuse"] < d["fuse_requests"]["over_io_uring"]'
  expect_ok strata stats "$MP"
  expect_output_matches '^requests +[1-9][0-9]* over io_uring, [0-9]+ read from /dev/fuse$'
else
  json_true 'd["fuse_requests"]["over_io_uring"] == 0 and d["fuse_requests"]["read_from_dev_fuse"] > 10'
fi
expect_ok strata umount "$MP"
