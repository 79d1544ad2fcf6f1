#!/usr/bin/env bash
# A read-only mount following a branch of a remote store (Ceph RGW, started by
# the ceph fixture): a commit another store pushes reaches the mount within a
# few poll intervals (the deadline below is generous: it checks that the move
# happens, not how fast); a file opened before the move keeps its old bytes;
# a file the push deleted goes and a new one comes; a second push moves it on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
use_mountpoint
STORE_C="$WORK/store-c"
strata_c() { "$STRATA_BIN" --store "$STORE_C" "$@"; }
BUCKET="cli-follow-remote-$$-$RANDOM"
trap 'rc=$?; set +e; cd /; fusermount3 -u -z "$MP" 2>/dev/null || true
      for k in $(s3_keys "$BUCKET" "" 2>/dev/null); do s3 DELETE "$BUCKET/$k" >/dev/null 2>&1; done
      (exit $rc); _cleanup' EXIT

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata remote add origin "s3://$BUCKET/team" --endpoint "$STRATA_S3_ENDPOINT" --create-bucket
mkdir -p "$WORK/src/d"
echo old >"$WORK/src/kept"
echo gone >"$WORK/src/d/gone"
head -c 300000 /dev/urandom >"$WORK/src/d/data.bin"
import_dir "$WORK/src" main >/dev/null
expect_ok strata push origin main
expect_ok "$STRATA_BIN" init "$STORE_C"
expect_ok strata_c remote add origin "s3://$BUCKET/team" --endpoint "$STRATA_S3_ENDPOINT"

step "usage: --follow needs a branch of the remote"
expect_fail strata_c mount --read-only origin/nosuch --follow "$MP"

step "another store's follow mount of the remote branch shows its head"
expect_ok strata_c mount --read-only origin/main --follow --poll-interval 200ms "$MP"
[[ $(cat "$MP/kept") == old ]] || fail "kept is not the first commit's"
[[ -e $MP/d/gone ]] || fail "d/gone is missing"
exec 3<"$MP/kept"

step "a commit pushed from the first store reaches the mount"
echo new >"$WORK/src/kept"
rm "$WORK/src/d/gone"
echo hello >"$WORK/src/d/fresh"
second=$(import_dir "$WORK/src" main)
expect_ok strata push origin main
fresh_there() { [[ -e $MP/d/fresh ]]; }
until_true 30 fresh_there
[[ $(cat "$MP/d/fresh") == hello ]] || fail "d/fresh has the wrong bytes"
[[ ! -e $MP/d/gone ]] || fail "d/gone is still there"
[[ $(ls "$MP/d") == $'data.bin\nfresh' ]] || fail "the listing of d is stale: $(ls "$MP/d")"
[[ $(cat "$MP/kept") == new ]] || fail "a new open of kept reads the old bytes"
cmp "$WORK/src/d/data.bin" "$MP/d/data.bin" || fail "d/data.bin reads wrong"
expect_ok strata_c stats "$MP" --json
[[ $(json 'd["base"]') == "$second" ]] || fail "stats shows another commit than $second"
[[ $(cat <&3) == old ]] || fail "the file opened before the move lost its old bytes"
exec 3<&-
expect_fail touch "$MP/x"

step "a second push moves it on"
echo third >"$WORK/src/kept"
import_dir "$WORK/src" main >/dev/null
expect_ok strata push origin main
third_there() { [[ $(cat "$MP/kept") == third ]]; }
until_true 30 third_there
expect_ok strata_c umount "$MP"
