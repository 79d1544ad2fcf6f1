#!/usr/bin/env bash
# A VM image on a mount written by qemu with cache=none (O_DIRECT, through
# its thread pool and through Linux AIO) while another program reads it
# through the page cache: the buffered reader sees every byte qemu wrote,
# never the pages it had cached before (docs/guarantees.md, O_DIRECT row).
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v qemu-io >/dev/null || fail "qemu-io is not installed (scripts/install-deps.sh installs qemu-utils)"

# byte_at FILE OFFSET: the byte at OFFSET, read through the page cache, in hex.
byte_at() { dd if="$1" bs=1 skip="$2" count=1 status=none | od -An -tx1 | tr -d ' \n'; }
# all_bytes FILE OFFSET LENGTH HEX: whether LENGTH bytes at OFFSET all equal HEX (buffered read).
all_bytes() {
  python3 - "$@" <<'PY'
import sys
path, off, n, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4], 16)
with open(path, "rb") as f:
    f.seek(off)
    data = f.read(n)
sys.exit(0 if len(data) == n and data.count(want) == n else 1)
PY
}

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name vm "$MP"
IMG="$MP/disk.img"
step "a 4 MiB raw image filled with 0x55, read once so that its pages are cached"
expect_ok qemu-img create -f raw "$IMG" 4M
expect_ok qemu-io -f raw -c "write -P 0x55 0 4M" "$IMG"
all_bytes "$IMG" 0 4194304 55 || fail "the image does not read back as 0x55"

step "qemu writes with cache=none; the buffered reader sees the new bytes"
expect_ok qemu-io -f raw -t none -c "write -P 0xaa 0 64k" "$IMG"
all_bytes "$IMG" 0 65536 aa || fail "after a cache=none write, a buffered read returns $(byte_at "$IMG" 0), not aa"
expect_ok qemu-io -f raw -t none -i native -c "aio_write -P 0xbb 1M 128k" -c "aio_flush" "$IMG"
all_bytes "$IMG" 1048576 131072 bb ||
  fail "after a native AIO cache=none write, a buffered read returns $(byte_at "$IMG" 1048576), not bb"
all_bytes "$IMG" 65536 983040 55 || fail "bytes qemu did not write changed"

step "and qemu reading with cache=none sees what a buffered writer wrote"
python3 - "$IMG" <<'PY' || fail "the buffered write"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b"\xcc" * 65536, 2 << 20)
os.close(fd)
PY
expect_ok qemu-io -f raw -t none -c "read -P 0xcc 2M 64k" "$IMG"
expect_output_matches "read 65536/65536 bytes"
if grep -q "Pattern verification failed" "$OUT"; then fail "qemu's direct read missed the buffered write"; fi

step "committed, the image holds the same bytes"
expect_ok strata commit "$MP" -m image --branch main
strata cat main:disk.img >"$WORK/disk.out" || fail "cat of the committed image"
cmp -s "$WORK/disk.out" "$IMG" || fail "the committed image differs from the mount's"
expect_ok strata umount "$MP"
