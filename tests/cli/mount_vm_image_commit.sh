#!/usr/bin/env bash
# VM images on a workspace, committed after scattered writes: the commit
# hashes in proportion to what changed (fixed-size chunks, docs/format/chunking.md),
# lands exactly the bytes a native copy holds, and a qcow2 image committed,
# mounted again and exported passes qemu-img check.
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v qemu-io >/dev/null || fail "qemu-io is not installed (scripts/install-deps.sh installs qemu-utils)"

# scatter IMG NATIVE COUNT SEED: COUNT 4 KiB writes of random bytes at random
# 4 KiB offsets, the same into both files (through qemu with cache=none into IMG).
scatter() {
  python3 - "$@" <<'PY' || fail "scattered writes into $1"
import os, random, subprocess, sys
img, native, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
blocks = os.path.getsize(img) // 4096
cmds = []
fd = os.open(native, os.O_WRONLY)
for _ in range(count):
    off = rnd.randrange(blocks) * 4096
    pattern = rnd.randrange(1, 256)
    os.pwrite(fd, bytes([pattern]) * 4096, off)
    cmds += ["-c", "write -P %d %d 4k" % (pattern, off)]
os.close(fd)
subprocess.run(["qemu-io", "-f", "raw", "-t", "none"] + cmds + [img], check=True, stdout=subprocess.DEVNULL)
PY
}
# hashed_by_commit: the bytes the last `strata commit --json` hashed.
hashed_by_commit() { json 'd["stats"]["bytes_hashed"]'; }

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name vm "$MP"
IMG="$MP/disk.raw"
NATIVE="$WORK/disk.raw"

# 160 MiB: 20 480 fixed chunks once it turns, a list the workspace keeps by
# reference to the commit's tree (docs/format/workspace.md, base_chunk_refs).
step "a 160 MiB raw image filled sequentially, then committed (content-defined chunks)"
expect_ok qemu-img create -f raw "$IMG" 160M
expect_ok qemu-io -f raw -t none -c "write -P 0x5a 0 160M" "$IMG"
python3 -c "open('$NATIVE','wb').write(b'\x5a' * (160 << 20))"
expect_ok strata commit "$MP" -m filled --branch main --json

step "256 scattered 4 KiB writes: the commit turns the image fixed (one full pass) and lands the bytes"
scatter "$IMG" "$NATIVE" 256 1
expect_ok strata commit "$MP" -m scattered --json
strata cat main:disk.raw >"$WORK/out.raw" || fail "cat of the committed image"
cmp "$WORK/out.raw" "$NATIVE" || fail "the committed image differs from the native copy"

step "the same workspace mounted again reads the image's list back from the commit's tree"
expect_ok strata umount "$MP"
expect_ok strata mount --workspace vm "$MP"
cmp "$IMG" "$NATIVE" || fail "the image read through the list kept by reference differs from the native copy"

step "256 more: now the commit hashes at most 4x what was written"
scatter "$IMG" "$NATIVE" 256 2
expect_ok strata commit "$MP" -m "scattered again" --json
hashed=$(hashed_by_commit)
written=$((256 * 4096))
step "the commit hashed $hashed bytes for $written written"
[ "$hashed" -ge 4096 ] || fail "the commit hashed $hashed bytes: the writes were not captured"
[ "$hashed" -le $((4 * written)) ] || fail "the commit hashed $hashed bytes for $written written"
strata cat main:disk.raw >"$WORK/out.raw" || fail "cat of the committed image"
cmp "$WORK/out.raw" "$NATIVE" || fail "the committed image differs from the native copy"

step "a qcow2 image written at random, committed, mounted again and exported: qemu-img check is clean"
Q="$MP/disk.qcow2"
expect_ok qemu-img create -f qcow2 "$Q" 1G
python3 - "$Q" <<'PY' || fail "qcow2 writes"
import random, subprocess, sys
rnd = random.Random(3)
cmds = []
for _ in range(300):
    cmds += ["-c", "write -P %d %d 4k" % (rnd.randrange(1, 256), rnd.randrange(1 << 18) * 4096)]
subprocess.run(["qemu-io", "-f", "qcow2", "-t", "none"] + cmds + [sys.argv[1]], check=True, stdout=subprocess.DEVNULL)
PY
expect_ok qemu-img check -f qcow2 "$Q"
expect_ok qemu-img convert -f qcow2 -O raw "$Q" "$WORK/q-before.raw"
expect_ok strata commit "$MP" -m qcow2
expect_ok strata umount "$MP"
expect_ok strata mount --branch main --name again "$MP"
expect_ok qemu-img check -f qcow2 "$MP/disk.qcow2"
expect_ok qemu-img compare -f qcow2 -F raw "$MP/disk.qcow2" "$WORK/q-before.raw"
cmp "$MP/disk.raw" "$NATIVE" || fail "the raw image mounted again differs from the native copy"
expect_ok strata umount "$MP"
expect_ok strata export main "$WORK/exported"
expect_ok qemu-img check -f qcow2 "$WORK/exported/disk.qcow2"
expect_ok qemu-img compare -f qcow2 -F raw "$WORK/exported/disk.qcow2" "$WORK/q-before.raw"
cmp "$WORK/exported/disk.raw" "$NATIVE" || fail "the exported raw image differs from the native copy"
