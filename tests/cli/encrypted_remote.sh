#!/usr/bin/env bash
# An encrypted store's remote on a real S3 server (Ceph RGW, the ceph
# fixture): after a push, no object of the bucket, nor any key, holds the
# plaintext of a known file, its name, the branch name, the commit message,
# the file's SHA-256 or the public (plain store) id of a small file, while the
# same search on a plain store's bucket finds them (all but the whole file's
# SHA-256, which no store names); a second store made with the first one's master key (init --encrypt
# --key-file) pulls and exports byte-identical data, and pushes back what it
# sealed itself; the stores and remote sides sharing the key own disjoint key
# generations; a store with another key, a plain store on the encrypted
# bucket and an encrypted store on the plain bucket are refused before
# anything is written.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
unset STRATA_PASSWORD STRATA_NEW_PASSWORD STRATA_KEY_FILE

STORE_B="$WORK/store-b"   # the same master key as $STORE
STORE_C="$WORK/store-c"   # another key
STORE_P="$WORK/plain"     # not encrypted
strata_b() { STRATA_PASSWORD="pass b" "$STRATA_BIN" --store "$STORE_B" "$@"; }
strata_c() { STRATA_PASSWORD="pass c" "$STRATA_BIN" --store "$STORE_C" "$@"; }
strata_p() { "$STRATA_BIN" --store "$STORE_P" "$@"; }
export STRATA_PASSWORD="pass a"
BUCKET="cli-encrypted-remote-$$-$RANDOM"
EP="$STRATA_S3_ENDPOINT"

known_secrets
mkdir -p "$WORK/src/dir"
# Lines that differ, so that compression leaves the marker readable in a plain pack.
python3 - "$WORK/src/dir/$name" "$marker" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as f:
    for i in range(20000):
        f.write("%s %08x line %d\n" % (sys.argv[2], random.getrandbits(32), i))
PY
printf 'small %s\n' "$marker" >"$WORK/src/small.txt"
sha=$(sha256sum "$WORK/src/dir/$name" | cut -d' ' -f1)
# The id a plain store gives the small file's one chunk (docs/format/objects.md):
# a hash anyone holding the file computes, and which a plain bucket holds.
public_id=$(python3 -c 'import hashlib, sys; d = open(sys.argv[1], "rb").read()
print(hashlib.sha256(b"strata chunk %d\0" % len(d) + d).hexdigest())' "$WORK/src/small.txt")

# bucket_dump PREFIX DIR: every object under PREFIX into DIR (numbered), and
# the list of their keys in DIR/keys.
bucket_dump() {
  local i=0 key
  mkdir -p "$2"
  s3_keys "$BUCKET" "$1" >"$2/keys"
  [[ -s "$2/keys" ]] || fail "nothing under $1 in the bucket"
  while read -r key; do
    s3 GET "$BUCKET/$key" -o "$2/object-$i"
    i=$((i + 1))
  done <"$2/keys"
}
# found_in DIR NEEDLE: whether any object or key in DIR holds NEEDLE; a
# needle "id:HEX" is looked for as hex and as its 32 bytes.
found_in() {
  python3 - "$@" <<'PY'
import os, sys
folder, needle = sys.argv[1], sys.argv[2]
forms = [needle.encode()]
if needle.startswith("id:"):
    forms = [needle[3:].encode(), bytes.fromhex(needle[3:])]
for name in os.listdir(folder):
    data = open(os.path.join(folder, name), "rb").read()
    if any(f in data for f in forms):
        sys.exit(0)
sys.exit(1)
PY
}
# listing PREFIX: keys with their sizes and ETags, to show nothing changed.
listing() {
  s3 GET "$BUCKET?list-type=2&prefix=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1")" |
    python3 -c 'import re, sys; [print(*m) for m in re.findall(r"<Key>([^<]*)</Key>.*?<ETag>([^<]*)</ETag>.*?<Size>([^<]*)</Size>", sys.stdin.read())]'
}

step "an encrypted store pushes to a new remote"
expect_ok "$STRATA_BIN" init --encrypt "$STORE"
expect_ok strata import "$WORK/src" --branch "$branch" -m "$message"
expect_ok strata remote add origin "s3://$BUCKET/enc" --endpoint "$EP" --create-bucket
expect_ok strata push origin "$branch"
expect_output_matches "pushed"

step "nothing in the encrypted store's bucket holds the data, the names, the message or the SHA-256"
bucket_dump enc/ "$WORK/dump-enc"
grep -q '^enc/packs/' "$WORK/dump-enc/keys" || fail "no pack in the bucket"
for needle in "$marker" "$name" "$branch" "$message" "$sha" "id:$public_id"; do
  if found_in "$WORK/dump-enc" "$needle"; then fail "'$needle' appears in the encrypted store's bucket"; fi
done

step "the same search finds them all in a plain store's bucket (so it can fail)"
expect_ok "$STRATA_BIN" init "$STORE_P"
expect_ok strata_p import "$WORK/src" --branch "$branch" -m "$message"
expect_ok strata_p remote add origin "s3://$BUCKET/plain" --endpoint "$EP"
expect_ok strata_p push origin "$branch"
bucket_dump plain/ "$WORK/dump-plain"
# (The SHA-256 of the whole file is in neither: a plain store names a file's
# chunks, not the file; the chunk's public id stands for it here.)
for needle in "$marker" "$name" "$branch" "$message" "id:$public_id"; do
  found_in "$WORK/dump-plain" "$needle" || fail "'$needle' is not in the plain store's bucket: the search proves nothing"
done

step "a plain store on the encrypted bucket, and an encrypted one on the plain bucket, are refused before any write"
listing enc/ >"$WORK/enc-before"
[[ -s "$WORK/enc-before" ]] || fail "the bucket's listing shows no keys, sizes and ETags"
expect_fail "$STRATA_BIN" --store "$STORE_P" remote add enc "s3://$BUCKET/enc" --endpoint "$EP"
expect_stderr_matches "not encrypted.*encrypted store.*nothing was written"
expect_fail strata remote add plain "s3://$BUCKET/plain" --endpoint "$EP"
expect_stderr_matches "is encrypted.*plain store.*nothing was written"
[[ ! -e "$STORE/remotes/plain" && ! -e "$STORE_P/remotes/enc" ]] || fail "a refused remote add left its directory"

step "a store with another master key is refused before anything is read or written"
expect_ok strata_c init --encrypt
expect_fail strata_c remote add origin "s3://$BUCKET/enc" --endpoint "$EP"
expect_stderr_matches "another master key.*nothing written"
[[ ! -e "$STORE_C/remotes/origin" ]] || fail "a refused remote add left $STORE_C/remotes/origin"
listing enc/ >"$WORK/enc-after"
diff -u "$WORK/enc-before" "$WORK/enc-after" || fail "a refused remote add changed the bucket"

step "a second store with the master key pulls and exports byte-identical data"
expect_ok strata key export --out "$WORK/master.key"
expect_ok strata_b --key-file "$WORK/master.key" init --encrypt
expect_output_matches "seals nothing until"
# It owns no key generation yet: it refuses to seal rather than share one.
mkdir -p "$WORK/early" && echo early >"$WORK/early/e.txt"
expect_fail strata_b import "$WORK/early" --branch early
expect_stderr_matches "owns no key generation"
expect_ok strata_b remote add origin "s3://$BUCKET/enc" --endpoint "$EP"
expect_ok strata_b pull origin "$branch"
expect_ok strata_b export "$branch" "$WORK/out-b"
assert_same_content "$WORK/src" "$WORK/out-b"
cmp "$WORK/src/dir/$name" "$WORK/out-b/dir/$name" || fail "the file differs after the round trip"

step "what the second store seals itself goes back to the first"
mkdir -p "$WORK/src-b" && printf 'from b %s\n' "$marker" >"$WORK/src-b/b.txt"
expect_ok strata_b import "$WORK/src-b" --branch from-b -m "sealed by b"
expect_ok strata_b push origin from-b
expect_ok strata pull origin from-b
expect_ok strata export from-b "$WORK/out-a"
assert_same_content "$WORK/src-b" "$WORK/out-a"
expect_ok strata verify

step "the stores and remote sides sharing the key own disjoint key generations"
assert_disjoint_generations "$STORE" "$STORE/remotes/origin/store" "$STORE_B" "$STORE_B/remotes/origin/store"

step "gc --remote repacks the encrypted remote: the new pack reveals nothing and both stores still read it"
expect_ok strata gc --remote origin --grace 1 --json
python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if d["packs_written"] >= 1 and d["packs_deleted"] >= 2 else "FAIL: no repack: %s" % d)' <"$OUT" ||
  fail "gc --remote did not merge the remote's small packs"
expect_ok strata --remote origin fsck
for store in strata strata_b; do
  rm -rf "$WORK/out-$store"
  expect_ok "$store" --remote origin export "$branch" "$WORK/out-$store"
  assert_same_content "$WORK/src" "$WORK/out-$store"
done
bucket_dump enc/ "$WORK/dump-repacked"
for needle in "$marker" "$name" "$branch" "$message" "id:$public_id"; do
  if found_in "$WORK/dump-repacked" "$needle"; then fail "'$needle' appears in the repacked bucket"; fi
done
