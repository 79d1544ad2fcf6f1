#!/usr/bin/env bash
# A commit that must read a damaged chunk of the base (a file changed in the
# middle is re-chunked around the change) fails as damage, exit 3, naming the
# file by its path, not by an inode number.
source "$(dirname "$0")/lib.sh"
use_mountpoint

mkdir -p "$WORK/src/d"
head -c 6000000 /dev/urandom >"$WORK/src/d/big.bin"
printf 'small\n' >"$WORK/src/small.txt"
expect_ok "$STRATA_BIN" init "$STORE"
import_dir "$WORK/src" main base >/dev/null

step "change the big file in the middle, then damage the pack that holds it"
expect_ok strata mount --branch main --name ws "$MP"
printf 'PATCH' | dd of="$MP/d/big.bin" bs=1 seek=3000000 conv=notrunc status=none
expect_ok strata umount "$MP"
pack=$(ls -S "$STORE"/packs/*.pack | head -n 1)
python3 - "$pack" <<'PY'
import os, sys
p = sys.argv[1]
size = os.path.getsize(p)
with open(p, "r+b") as f:
    # A flipped byte every 64 KiB over the middle of the pack: every chunk of
    # the big file is damaged, whichever the commit reads.
    for off in range(size // 10, size * 9 // 10, 65536):
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x5A]))
PY

step "the commit is refused as damage and names the file"
expect_ok strata mount --workspace ws "$MP"
expect_exit 3 strata commit "$MP" -m "over damage"
expect_stderr_matches "d/big\.bin"
if grep -q "inode [0-9]" "$ERR"; then _show_last; fail "the message names an inode number"; fi
expect_ok strata log main --json
json_true 'len(d) == 1'
expect_ok strata umount "$MP"
