#!/usr/bin/env bash
# How a mount checks what it reads from the store's own packs, and what
# `strata stats` counts of it: by default the XXH3 checksums of the frames
# read (no SHA-256), and a random 4 KiB read decodes about one 64 KiB frame;
# with --verify-reads=full each object's SHA-256 as well. A flipped byte in a
# frame fails the read (EIO), names the object in the daemon's answer, and
# verify finds it.
source "$(dirname "$0")/lib.sh"
use_mountpoint

mkdir -p "$WORK/src"
head -c $((3 * 1024 * 1024)) /dev/urandom >"$WORK/src/big.bin"

step "import, mount read-only, random 4 KiB reads"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
expect_ok strata mount --read-only main "$MP"
python3 - "$MP/big.bin" "$WORK/src/big.bin" <<'EOF' || fail "random reads through the mount returned wrong bytes"
import os, random, sys
mounted, original = (os.open(p, os.O_RDONLY) for p in sys.argv[1:3])
rng = random.Random(5)
for _ in range(40):
    off = rng.randrange(0, 3 * 1024 * 1024 - 4096) & ~4095
    if os.pread(mounted, 4096, off) != os.pread(original, 4096, off):
        sys.exit("wrong bytes at %d" % off)
EOF
expect_ok strata stats "$MP" --json
json_true 'd["workspace_counters"]["read_path"]["store"]["frames_decoded"] >= 1'
json_true 'd["workspace_counters"]["read_path"]["store"]["range_reads"] >= 1'
json_true 'd["workspace_counters"]["read_path"]["store"]["fast_checked_bytes"] >= 4096'
json_true 'd["workspace_counters"]["read_path"]["store"]["sha256_checked_bytes"] == 0'
# The kernel may read more around each 4 KiB; still far less than whole chunks would be.
json_true 'd["workspace_counters"]["read_path"]["store"]["frames_decoded"] <= 4 * d["workspace_counters"]["read_path"]["store"]["range_reads"] + 64'
expect_ok strata stats "$MP"
expect_output_matches "checked by XXH3"
expect_ok strata umount "$MP"

step "--verify-reads=full checks SHA-256 too"
expect_ok strata mount --read-only main --verify-reads=full "$MP"
cmp "$MP/big.bin" "$WORK/src/big.bin" || fail "big.bin differs under --verify-reads=full"
expect_ok strata stats "$MP" --json
json_true 'd["workspace_counters"]["read_path"]["store"]["sha256_checked_bytes"] >= 3 * 1024 * 1024'
expect_ok strata umount "$MP"
expect_fail strata mount --read-only main --verify-reads=sometimes "$MP"

step "a flipped byte in a frame: the read fails, verify names the object"
pack=$(ls -S "$STORE"/packs/*.pack | head -n 1)
flip_middle_byte "$pack"
expect_ok strata mount --read-only main "$MP"
if cat "$MP/big.bin" >/dev/null 2>"$WORK/cat.err"; then fail "a damaged frame read without an error"; fi
grep -q "Input/output error" "$WORK/cat.err" || fail "the damaged read was not EIO: $(cat "$WORK/cat.err")"
expect_ok strata umount "$MP"
expect_exit 3 strata verify
expect_output_matches "damaged|does not match"
