#!/usr/bin/env bash
# Sparse files and the largest file through a mount: st_blocks counts what a
# file holds, in the workspace and once committed (holes and zero chunks hold
# nothing); offsets past the largest file (16 TiB - 4 KiB) are EFBIG, one below
# it works, and the daemon logs no internal error for any of them.
source "$(dirname "$0")/lib.sh"
use_mountpoint

# blocks_kib PATH: the space stat reports the file holding, in KiB.
blocks_kib() { echo $(($(stat -c '%b * %B' -- "$1") / 1024)); }

step "a sparse file in a workspace holds its written blocks only"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name sparse "$MP"
python3 - "$MP" <<'PY' || fail "writing the sparse files"
import os, sys
mp = sys.argv[1]
fd = os.open(mp + "/sparse", os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"a" * 4096, 0)
os.pwrite(fd, b"b" * 4096, 64 << 20)
os.fsync(fd)
os.close(fd)
fd = os.open(mp + "/small", os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, os.urandom(50 * 1024), 1600 * 1000)
os.fsync(fd)
os.close(fd)
PY
kib=$(blocks_kib "$MP/sparse")
((kib >= 8 && kib < 1024)) || fail "sparse: $kib KiB held in the workspace, expected about 8"
kib=$(blocks_kib "$MP/small")
((kib >= 50 && kib < 256)) || fail "small: $kib KiB held in the workspace, expected about 52"

step "committed, the sparse file holds its chunks with data, not its zero chunks"
expect_ok strata commit "$MP" -m sparse --branch main
expect_ok strata umount "$MP"
expect_ok strata mount --branch main --name fresh "$MP"
cmp <(head -c 4096 "$MP/sparse") <(head -c 4096 /dev/zero | tr '\0' a) || fail "sparse: the data at 0 differs"
kib=$(blocks_kib "$MP/sparse")
# 64 MiB + 4 KiB written at two places is cut at fixed offsets into 8 KiB
# chunks (docs/format/chunking.md): the first and the last hold data, every
# one between them is the zero chunk.
((kib >= 8 && kib <= 16)) || fail "sparse: $kib KiB held after the commit, expected 8 KiB + 4 KiB"
before=$kib
printf 'x' | dd of="$MP/sparse" bs=1 seek=$((10 << 20)) conv=notrunc status=none
kib=$(blocks_kib "$MP/sparse")
((kib > before && kib < 64)) || fail "sparse: $kib KiB held after a 1-byte write into a zero chunk (before: $before)"

step "offsets past the largest file are EFBIG, one below it works"
python3 - "$MP/huge" <<'PY' || fail "huge offsets"
import errno, os, sys
limit = (1 << 44) - 4096
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
for offset in (limit, 1 << 44, (1 << 63) - 2):
    try:
        os.pwrite(fd, b"x", offset)
        sys.exit(f"pwrite at {offset} worked")
    except OSError as e:
        if e.errno != errno.EFBIG:
            sys.exit(f"pwrite at {offset}: {e}")
assert os.pwrite(fd, b"xy", limit - 1) == 1, "a write reaching past the limit is cut short at it"
assert os.fstat(fd).st_size == limit and os.pread(fd, 2, limit - 1) == b"x"
for size in (limit + 1, (1 << 63) - 1):
    try:
        os.ftruncate(fd, size)
        sys.exit(f"ftruncate to {size} worked")
    except OSError as e:
        if e.errno != errno.EFBIG:
            sys.exit(f"ftruncate to {size}: {e}")
os.ftruncate(fd, 0)
os.pwrite(fd, b"z" * 4096, 0)
out = os.open(sys.argv[1] + ".copy", os.O_RDWR | os.O_CREAT, 0o644)
for offset in (limit, 1 << 44, (1 << 63) - 4097):
    try:
        os.copy_file_range(fd, out, 4096, 0, offset)
        sys.exit(f"copy_file_range to {offset} worked")
    except OSError as e:
        if e.errno != errno.EFBIG:
            sys.exit(f"copy_file_range to {offset}: {e}")
PY
grep -q "internal error" "$STORE/workspaces/fresh/daemon.log" &&
  fail "the daemon logged an internal error: $(grep "internal error" "$STORE/workspaces/fresh/daemon.log" | head -3)"
expect_ok strata umount "$MP"
