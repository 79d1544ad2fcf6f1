#!/usr/bin/env bash
# Stores that use up the key generations they own claim more from their
# remote's bucket, transparently (docs/format/encryption.md, "Nonces across
# stores"), on a real S3 server (Ceph RGW, the ceph fixture). With
# --seal-limit 16 and a bucket left with 16 generations to give (as after
# many claims), a store made with the master key imports past what it
# claimed at `remote add`, its remote's local side seals a push past its own,
# every range stays disjoint from the others, and once the bucket has nothing
# left to give the next seal is refused, saying so, with nothing lost.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
unset STRATA_PASSWORD STRATA_NEW_PASSWORD STRATA_KEY_FILE
export STRATA_PASSWORD="claims pass a"
STORE_B="$WORK/store-b"   # made with the master key of $STORE
strata_b() { STRATA_PASSWORD="claims pass b" "$STRATA_BIN" --store "$STORE_B" "$@"; }
BUCKET="cli-enc-claims-$$-$RANDOM"
EP="$STRATA_S3_ENDPOINT"
generations() { s3 GET "$BUCKET/enc/generations"; }
# counter STORE NAME: a counter of a store's index (0 if absent).
counter() {
  python3 - "$1/index.db" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
row = db.execute("SELECT value FROM counters WHERE name = ?", (sys.argv[2],)).fetchone()
print(row[0] if row else 0)
PY
}
# tree DIR N: N directories of one distinct file each (N chunks, N + 1 trees).
tree() {
  local i
  for i in $(seq "$2"); do mkdir -p "$1/d$i" && printf '%s file %s\n' "$1" "$i" >"$1/d$i/f"; done
}

step "a store and its remote; the bucket is left 16 generations to give"
expect_ok "$STRATA_BIN" init --encrypt --seal-limit 16 "$STORE"
mkdir -p "$WORK/a" && echo a >"$WORK/a/a.txt"
expect_ok strata import "$WORK/a" --branch a
expect_ok strata remote add origin "s3://$BUCKET/enc" --endpoint "$EP" --create-bucket
expect_ok strata push origin a
read -r _ _ first end _ < <(generations)
# What many claims of other machines would leave: [first, first + 16).
printf 'strata-generations 1 %d %d -\n' "$first" $((first + 16)) >"$WORK/gens"
s3 PUT "$BUCKET/enc/generations" --data-binary "@$WORK/gens" >/dev/null

step "a store made with the key claims 8 of them, its remote's local side 4"
expect_ok strata key export --out "$WORK/master.key"
expect_ok strata_b --key-file "$WORK/master.key" init --encrypt --seal-limit 16
expect_ok strata_b remote add origin "s3://$BUCKET/enc" --endpoint "$EP"
[[ $(generations) == "strata-generations 1 $first $((first + 4)) "* ]] || fail "unexpected claims: $(generations)"
[[ $(counter "$STORE_B" seal_generation) == $((first + 8)) ]] || fail "the store did not claim [$((first + 8)), $((first + 16)))"

step "an import of 142 objects seals past the 8 x 16 it owns: it claims more from the bucket"
tree "$WORK/b1" 70
expect_ok strata_b import "$WORK/b1" --branch b1 -m "past the claim"
[[ $(generations) == "strata-generations 1 $first $((first + 2)) "* ]] || fail "the store claimed no more: $(generations)"
gen=$(counter "$STORE_B" seal_generation)
((gen >= first + 2 && gen < first + 4)) || fail "the store seals under generation $gen, not one it claimed last"
expect_ok strata_b export b1 "$WORK/out-b1"
assert_same_content "$WORK/b1" "$WORK/out-b1"

step "a push of 72 trees and commits seals past the remote side's 4 x 16: it claims from its bucket"
expect_ok strata_b push origin b1
[[ $(generations) == "strata-generations 1 $first $((first + 1)) "* ]] || fail "the remote side claimed no more: $(generations)"
expect_ok strata --remote origin export b1 "$WORK/out-remote"
assert_same_content "$WORK/b1" "$WORK/out-remote"

step "the stores and remote sides sharing the key own disjoint generations"
assert_disjoint_generations "$STORE" "$STORE/remotes/origin/store" "$STORE_B" "$STORE_B/remotes/origin/store"

step "no generation sealed more than 16 objects in the store that claimed twice"
sealed_generations "$STORE_B" >"$WORK/per-generation" || fail "could not read the generations"
awk '$2 > 16 { bad = 1 } END { exit bad }' "$WORK/per-generation" || fail "a generation sealed more than 16 objects"
(($(wc -l <"$WORK/per-generation") >= 9)) || fail "fewer generations than the claims gave: $(cat "$WORK/per-generation")"

step "once the bucket has none left to give, sealing stops, saying so, and nothing is lost"
tree "$WORK/b2" 30
expect_fail strata_b import "$WORK/b2" --branch b2
expect_stderr_matches "claiming more key generations failed.*no key generations left"
expect_ok strata_b export b1 "$WORK/out-b1-again"
assert_same_content "$WORK/b1" "$WORK/out-b1-again"
expect_ok strata_b verify
echo "PASS"
