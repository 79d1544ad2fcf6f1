#!/usr/bin/env bash
# A store's key kept unlocked between commands (`key unlock`, `key lock`), in
# the kernel's user keyring: while it is kept, commands on that store need no
# passphrase (import, export, log, stats); another store, even one made with
# the same master key, still needs its own; a value put under a store's name
# that is not its key is never used; `key lock` and the timeout end it; a bad
# --for is refused and keeps nothing; `key export` and `key unlock` still
# need the passphrase. Skipped where the kernel keyring cannot be used.
source "$(dirname "$0")/lib.sh"
unset STRATA_PASSWORD STRATA_NEW_PASSWORD STRATA_KEY_FILE
PASS_A="unlock pass a"
PASS_B="unlock pass b"
STORE_B="$WORK/store-b"   # another encrypted store
STORE_C="$WORK/store-c"   # made with the master key of $STORE
strata_b() { "$STRATA_BIN" --store "$STORE_B" "$@"; }
strata_c() { "$STRATA_BIN" --store "$STORE_C" "$@"; }
store_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["encryption"]["store_id"])' "$1/config.json"; }
# keyring OP DESCRIPTION [PAYLOAD]: "put" adds a key of type user to the user
# keyring (what someone else could put under a store's name), "drop" removes it.
keyring() {
  python3 - "$@" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_keyctl, KEYCTL_SEARCH, KEYCTL_INVALIDATE, USER = 248, 250, 10, 21, -4
op, desc = sys.argv[1], sys.argv[2].encode()
if op == "put":
    payload = bytes.fromhex(sys.argv[3])
    if libc.syscall(SYS_add_key, b"user", desc, payload, len(payload), ctypes.c_long(USER)) < 0:
        sys.exit("add_key failed: errno %d" % ctypes.get_errno())
else:
    key = libc.syscall(SYS_keyctl, KEYCTL_SEARCH, ctypes.c_long(USER), b"user", desc, 0)
    if key >= 0: libc.syscall(SYS_keyctl, KEYCTL_INVALIDATE, key)
PY
}
# Whatever way the test ends, no key of its stores stays in the keyring.
trap 'rc=$?; set +e
  for s in "$STORE" "$STORE_B" "$STORE_C"; do
    [[ -f "$s/config.json" ]] && keyring drop "strata:store:$(store_id "$s")"
  done
  (exit $rc); _cleanup' EXIT

mkdir -p "$WORK/src/d"
printf 'kept key test\n' >"$WORK/src/d/f"
STRATA_PASSWORD="$PASS_A" expect_ok strata init --encrypt
STRATA_PASSWORD="$PASS_A" expect_ok strata import "$WORK/src" --branch main
STRATA_PASSWORD="$PASS_B" expect_ok strata_b init --encrypt
STRATA_PASSWORD="$PASS_A" expect_ok strata key export --out "$WORK/master.key"
STRATA_PASSWORD="$PASS_B" expect_ok strata_c --key-file "$WORK/master.key" init --encrypt

step "the kernel keyring is usable here"
STRATA_PASSWORD="$PASS_A" run strata key unlock --for 5s
if [[ $RC != 0 ]] && grep -qi "kernel keyring cannot be used here" "$ERR"; then
  echo "SKIP: $(cat "$ERR")" >&2
  exit 77
fi
[[ $RC == 0 ]] || { _show_last; fail "key unlock failed"; }
expect_ok strata key lock

step "locked: a command needs the passphrase"
expect_fail strata log main
expect_stderr_matches "needs its passphrase"

step "a bad --for is refused and keeps nothing"
for bad in 0 0s 500ms 25h 2d abc -5; do
  STRATA_PASSWORD="$PASS_A" expect_fail strata key unlock --for "$bad"
  expect_stderr_matches "duration|from 1s to 24h|--for"
done
expect_fail strata log main
expect_stderr_matches "needs its passphrase"

step "key unlock needs the passphrase, and a wrong one keeps nothing"
expect_fail strata key unlock
expect_stderr_matches "needs its passphrase"
STRATA_PASSWORD="not it" expect_fail strata key unlock
expect_stderr_matches "wrong passphrase"
expect_fail strata log main

step "unlocked: import, export, log and stats need no passphrase"
STRATA_PASSWORD="$PASS_A" expect_ok strata key unlock --for 10m
expect_output_matches "kept the key of the store at .* for 600 s"
expect_ok strata log main
printf 'second\n' >"$WORK/src/d/g"
expect_ok strata import "$WORK/src" --branch main
expect_ok strata export main "$WORK/out"
assert_same_content "$WORK/src" "$WORK/out"
expect_ok strata stats
expect_ok strata verify

step "key export still needs the passphrase"
expect_fail strata key export --out "$WORK/again.key"
expect_stderr_matches "needs its passphrase"
[[ ! -e "$WORK/again.key" ]] || fail "key export wrote a key with no passphrase"

step "other stores need their own: another key, and the same key under another store id"
expect_fail strata_b log main
expect_stderr_matches "needs its passphrase"
expect_fail strata_c stats
expect_stderr_matches "needs its passphrase"

step "a value under a store's name that is not its key is never used"
keyring put "strata:store:$(store_id "$STORE_B")" "$(head -c 32 /dev/urandom | xxd -p -c 64)"
expect_fail strata_b stats
expect_stderr_matches "does not open it; it was not used"
expect_stderr_matches "needs its passphrase"
STRATA_PASSWORD="$PASS_B" expect_ok strata_b stats
# The first store's own key, copied under the other store's name: refused too.
keyring put "strata:store:$(store_id "$STORE_B")" "$(python3 -c '
import sys; print(open(sys.argv[1]).read().split()[-1])' "$WORK/master.key")"
expect_fail strata_b stats
expect_stderr_matches "does not open it"
keyring drop "strata:store:$(store_id "$STORE_B")"

step "key lock drops it: the passphrase is needed again"
expect_ok strata key lock
expect_output_matches "dropped the kept key"
expect_fail strata log main
expect_stderr_matches "needs its passphrase"
expect_ok strata key lock
expect_output_matches "no key was kept"

step "the timeout drops it too"
STRATA_PASSWORD="$PASS_A" expect_ok strata key unlock --for 2s
expect_ok strata log main
sleep 3
expect_fail strata log main
expect_stderr_matches "needs its passphrase"

step "a plain store has no key to keep"
expect_ok "$STRATA_BIN" init "$WORK/plain"
expect_fail "$STRATA_BIN" --store "$WORK/plain" key unlock
expect_stderr_matches "not encrypted"
echo "PASS"
