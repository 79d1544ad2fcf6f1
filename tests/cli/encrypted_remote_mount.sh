#!/usr/bin/env bash
# A workspace of an encrypted store's remote on a real S3 server (Ceph RGW,
# the ceph fixture): `mount --branch REMOTE/BRANCH` reads the sealed remote
# lazily, a write and a commit there move the remote branch, and the commit
# comes back intact by pull, by a second store with the master key and by
# export from the remote; the bucket never holds the written plaintext. The
# remote's settings (bucket URL, endpoint, region) are sealed on the local
# disk: neither the bucket's name nor the endpoint appears in any file of the
# store (which the same search finds in a plain store's remote.json), a
# plaintext remote.json left from before is sealed on first use, and `remote
# list` needs the key.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
use_mountpoint
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
unset STRATA_PASSWORD STRATA_NEW_PASSWORD STRATA_KEY_FILE
export STRATA_PASSWORD="mount pass a"
STORE_B="$WORK/store-b"   # the same master key
STORE_P="$WORK/plain"
strata_b() { STRATA_PASSWORD="mount pass b" "$STRATA_BIN" --store "$STORE_B" "$@"; }
BUCKET="cli-enc-mount-$$-$RANDOM"
EP="$STRATA_S3_ENDPOINT"
host_port=${EP#*://}

known_secrets
mkdir -p "$WORK/src/docs"
for i in $(seq 10); do printf 'document %s\n' "$i" >"$WORK/src/docs/d$i.txt"; done

# holds_location DIR: whether any file under DIR holds the bucket's name or the endpoint.
holds_location() { grep -r -a -q -F -e "$BUCKET" -e "$host_port" "$1"; }

step "an encrypted store's remote settings are sealed on the local disk"
expect_ok "$STRATA_BIN" init --encrypt "$STORE"
expect_ok strata import "$WORK/src" --branch main -m "first"
expect_ok strata remote add origin "s3://$BUCKET/enc" --endpoint "$EP" --create-bucket
[[ -f "$STORE/remotes/origin/remote.sealed" && ! -e "$STORE/remotes/origin/remote.json" ]] ||
  fail "the encrypted store's remote settings are not in remote.sealed alone"
if holds_location "$STORE"; then fail "the bucket's name or the endpoint is in a file of the encrypted store"; fi
expect_ok strata push origin main
expect_ok strata remote list --json
json_true 'd[0]["name"] == "origin" and d[0]["url"] == "s3://'"$BUCKET"'/enc" and d[0]["endpoint"] == "'"$EP"'"'
expect_fail env -u STRATA_PASSWORD "$STRATA_BIN" --store "$STORE" remote list </dev/null
expect_stderr_matches "passphrase|key"

step "the same search finds them in a plain store's remote.json (so it can fail)"
expect_ok "$STRATA_BIN" init "$STORE_P"
expect_ok "$STRATA_BIN" --store "$STORE_P" remote add origin "s3://$BUCKET/plain" --endpoint "$EP"
holds_location "$STORE_P" || fail "the plain store's remote.json does not name its bucket: the search proves nothing"

step "settings sealed for one remote do not open as another's"
cp -a "$STORE/remotes/origin" "$STORE/remotes/copy"
expect_fail strata remote list
expect_stderr_matches "remote copy: remote.sealed failed authentication"
expect_ok strata remote remove copy
[[ ! -e "$STORE/remotes/copy" ]] || fail "remote remove left the copied remote"

step "a plaintext remote.json of an encrypted store (written before sealing) is sealed on first use"
mv "$STORE/remotes/origin/remote.sealed" "$WORK/sealed-aside"
cp "$STORE_P/remotes/origin/remote.json" "$STORE/remotes/origin/remote.json"
sed -i "s|$BUCKET/plain|$BUCKET/enc|" "$STORE/remotes/origin/remote.json"
expect_ok strata remote list --json
json_true 'd[0]["url"] == "s3://'"$BUCKET"'/enc"'
[[ -f "$STORE/remotes/origin/remote.sealed" && ! -e "$STORE/remotes/origin/remote.json" ]] ||
  fail "the plaintext remote.json was not replaced by remote.sealed"
if holds_location "$STORE"; then fail "the location is still in the store after sealing"; fi

step "a workspace on the encrypted remote's branch: write, commit, and the remote branch moves"
expect_ok strata mount --branch origin/main --name ws "$MP"
[[ $(cat "$MP/docs/d3.txt") == "document 3" ]] || fail "wrong content through the remote mount"
mkdir -p "$MP/new"
printf '%s written in the workspace\n' "$marker" >"$MP/new/$name"
rm "$MP/docs/d1.txt"
expect_ok strata commit "$MP" -m "$message"
expect_ok strata umount "$MP"
expect_ok strata --remote origin workspace end ws
cp -a "$WORK/src" "$WORK/expected"
mkdir -p "$WORK/expected/new" && printf '%s written in the workspace\n' "$marker" >"$WORK/expected/new/$name"
rm "$WORK/expected/docs/d1.txt"
expect_ok strata --remote origin export main "$WORK/out-remote"
assert_same_content "$WORK/expected" "$WORK/out-remote"
if holds_location "$STORE"; then fail "the location is in a file of the store after the mount"; fi

step "pull brings the commit here; a local commit on it pushes back"
expect_ok strata pull origin main
expect_ok strata export main "$WORK/out-pulled"
assert_same_content "$WORK/expected" "$WORK/out-pulled"
cp -a "$WORK/expected" "$WORK/more" && echo more >"$WORK/more/m.txt"
expect_ok strata import "$WORK/more" --branch main -m "more"
expect_ok strata push origin main
expect_output_matches "pushed"

step "a second store with the master key reads the workspace's commit"
expect_ok strata key export --out "$WORK/master.key"
expect_ok strata_b --key-file "$WORK/master.key" init --encrypt
rm -f "$WORK/master.key"
expect_ok strata_b remote add origin "s3://$BUCKET/enc" --endpoint "$EP"
expect_ok strata_b pull origin main
expect_ok strata_b export main "$WORK/out-b"
assert_same_content "$WORK/more" "$WORK/out-b"
expect_ok strata_b verify

step "the bucket holds neither the written plaintext nor its name"
mkdir -p "$WORK/dump"
i=0
while read -r key; do
  s3 GET "$BUCKET/$key" -o "$WORK/dump/o$i"
  i=$((i + 1))
done < <(s3_keys "$BUCKET" enc/)
((i > 0)) || fail "nothing in the bucket"
if grep -r -a -q -F -e "$marker" -e "$name" -e "$message" "$WORK/dump"; then
  fail "the workspace's plaintext is in the bucket"
fi
echo "PASS"
