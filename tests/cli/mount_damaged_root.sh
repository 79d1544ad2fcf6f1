#!/usr/bin/env bash
# A commit whose top directory's tree is damaged (or gone) is refused when it
# is mounted, with a message saying so, instead of mounting and answering EIO
# to every access; a workspace the refused mount made is not left behind.
source "$(dirname "$0")/lib.sh"
use_mountpoint

for i in $(seq 300); do echo "$i" >"$WORK/src-file-with-a-long-name-$i"; done
mkdir -p "$WORK/src"
mv "$WORK"/src-file-* "$WORK/src/"
expect_ok "$STRATA_BIN" init "$STORE"
import_dir "$WORK/src" main v1 >/dev/null
expect_ok strata log main --json
root=$(json 'd[0]["root"]')
[[ $root =~ ^[0-9a-f]{64}$ ]] || fail "no root tree id in the log: $root"

step "the top directory mounts and lists while its tree is whole"
expect_ok strata mount --read-only main "$MP"
[[ $(ls "$MP" | wc -l) == 300 ]] || fail "the mount does not list the 300 files"
expect_ok strata umount "$MP"

step "flip a byte inside the root tree's stored bytes"
python3 - "$STORE" "$root" <<'PY'
import os, sqlite3, sys
store, root = sys.argv[1], bytes.fromhex(sys.argv[2])
db = sqlite3.connect(os.path.join(store, "index.db"))
row = db.execute("SELECT p.name, o.offset, o.stored_len FROM objects o JOIN packs p ON p.id = o.pack "
                 "WHERE o.oid = ?", (root,)).fetchone()
if row is None:
    sys.exit("the root tree is not in the index")
name, offset, stored_len = row
db.close()
with open(os.path.join(store, "packs", name), "r+b") as f:
    at = offset + stored_len // 2
    f.seek(at)
    b = f.read(1)
    f.seek(at)
    f.write(bytes([b[0] ^ 0x5A]))
PY

step "a read-only mount of the commit is refused, naming the top directory"
expect_fail strata mount --read-only main "$MP"
expect_stderr_matches "top directory"
if mountpoint -q "$MP"; then fail "the refused mount is mounted"; fi

step "so is a new workspace on it, and the workspace it made is gone again"
expect_fail strata mount --branch main --name w "$MP"
expect_stderr_matches "top directory"
if mountpoint -q "$MP"; then fail "the refused mount is mounted"; fi
expect_ok strata workspace list --json
json_true 'not any(w["name"] == "w" for w in d)'

step "verify names the damaged tree"
expect_exit 3 strata verify
expect_output_matches "$root|damaged"
