#!/usr/bin/env bash
# An encrypted store made with a tiny --seal-limit moves to a new object-seal
# key generation every 16 seals: across several imports (several processes,
# each reserving its seals in the index) the generations named in the sealed
# objects' headers advance, every branch exports intact and verify is clean.
# A store made with the master key (--key-file) takes that limit from its
# bucket's first store at `remote add` (the fake S3 server of lib.sh).
source "$(dirname "$0")/lib.sh"
unset STRATA_PASSWORD STRATA_NEW_PASSWORD STRATA_KEY_FILE
printf 'seal generations passphrase\n' >"$WORK/pw"

step "--seal-limit is checked, and recorded in config.json"
expect_fail "$STRATA_BIN" --password-file "$WORK/pw" init --encrypt --seal-limit 15 "$STORE"
expect_fail "$STRATA_BIN" init --seal-limit 16 "$STORE"
[[ ! -e $STORE/config.json ]] || fail "a refused init left a store"
expect_ok "$STRATA_BIN" --password-file "$WORK/pw" init --encrypt --seal-limit 16 "$STORE"
grep -q '"seal_limit": 16' "$STORE/config.json" || fail "config.json does not record the seal limit"
grep -q '"version": 4' "$STORE/config.json" || fail "a new encrypted store is not format 4"

export STRATA_PASSWORD="seal generations passphrase"
step "three imports of 20 new files each seal past several generations"
for round in 1 2 3; do
  mkdir -p "$WORK/src$round"
  for i in $(seq 1 20); do printf 'round %s file %s\n' "$round" "$i" >"$WORK/src$round/f$i"; done
  expect_ok strata import "$WORK/src$round" --branch "b$round" -m "round $round"
done
for round in 1 2 3; do
  expect_ok strata export "b$round" "$WORK/out$round"
  assert_same_content "$WORK/src$round" "$WORK/out$round"
done
expect_ok strata verify

step "the sealed objects' headers name generations 0 and on, none holding more than 16"
sealed_generations "$STORE" >"$WORK/generations" || fail "could not read the generations"
cat "$WORK/generations" >&2
awk '$2 > 16 { bad = 1 } END { exit bad }' "$WORK/generations" || fail "a generation sealed more than 16 objects"
max=$(awk 'END { print $1 }' "$WORK/generations")
(( max >= 3 )) || fail "the generations did not advance past the limit (last $max)"

step "a store made with the key takes the seal limit of its bucket's first store at remote add"
start_fake_s3 "$WORK/fake"
expect_ok strata remote add origin s3://limits/enc --endpoint "$EP" --create-bucket
expect_ok strata key export --out "$WORK/master.key"
STORE_B="$WORK/store-b"
expect_ok "$STRATA_BIN" --store "$STORE_B" --key-file "$WORK/master.key" init --encrypt
grep -q '"seal_limit": 2147483648' "$STORE_B/config.json" || fail "a store made with the key starts with another limit"
expect_ok "$STRATA_BIN" --store "$STORE_B" remote add origin s3://limits/enc --endpoint "$EP"
grep -q '"seal_limit": 16' "$STORE_B/config.json" ||
  fail "the store made with the key did not take the bucket's seal limit: $(cat "$STORE_B/config.json")"
mkdir -p "$WORK/src-b"
for i in $(seq 1 40); do printf 'store b file %s\n' "$i" >"$WORK/src-b/f$i"; done
expect_ok "$STRATA_BIN" --store "$STORE_B" import "$WORK/src-b" --branch b -m "under the bucket's limit"
sealed_generations "$STORE_B" >"$WORK/generations-b" || fail "could not read the generations"
awk '$2 > 16 { bad = 1 } END { exit bad }' "$WORK/generations-b" ||
  fail "a generation of the store made with the key sealed more than 16 objects: $(cat "$WORK/generations-b")"
(($(wc -l <"$WORK/generations-b") >= 3)) || fail "too few generations: $(cat "$WORK/generations-b")"
expect_ok "$STRATA_BIN" --store "$STORE_B" export b "$WORK/out-b"
assert_same_content "$WORK/src-b" "$WORK/out-b"
echo "PASS"
