#!/usr/bin/env bash
# Remote stores against a small S3 server of the test's own (fake_s3.py, on
# 127.0.0.1): the faults a real server will not produce on demand. A listing
# that repeats its continuation token, and credentials files that are devices
# or FIFOs, fail at once instead of hanging; a listing of 200 000 pack names
# costs a bounded number of GETs; remote add fails when config.json was not
# stored; a pack upload that moves and then stalls is retried; a server that
# stops answering fails a command within its --timeout; packs that a
# multi-object delete of gc fails for are kept, counted as not deleted, and
# the next gc deletes them.
source "$(dirname "$0")/lib.sh"

FAKE_DIR="$WORK/fake"
CONTROL="$FAKE_DIR/control.json"
LOG="$FAKE_DIR/requests.log"
start_fake_s3 "$FAKE_DIR"
faults() { printf '%s\n' "$1" >"$CONTROL"; }
requests() { grep -c -- "$1" "$LOG" || true; }  # requests logged so far whose line matches
expect_ok "$STRATA_BIN" init "$STORE"
mkdir -p "$WORK/src"
head -c 3000000 /dev/urandom >"$WORK/src/blob.bin"
printf 'hello\n' >"$WORK/src/small.txt"

step "prefixes with '.', '..', empty segments or control characters are refused before any request"
: >"$LOG"
for url in 's3://bkt1/a/../../bktx/z' 's3://bkt1/p/./q' 's3://bkt1/p//q' 's3://bkt1/..' $'s3://bkt1/p\nq' $'s3://bkt1/p\tq'; do
  expect_fail strata remote add dots "$url" --endpoint "$EP" --create-bucket
  expect_stderr_matches "segment|control character"
  [[ ! -e "$STORE/remotes/dots" ]] || fail "the refused remote add of $url left remotes/dots"
done
[[ ! -s "$LOG" ]] || fail "a refused URL still sent requests: $(head -n 3 "$LOG")"

step "CR/LF and other invalid values in --region, --endpoint and remote.json are refused"
for region in $'us-east-1\r\nX-Injected: 1' 'us east' ''; do
  expect_fail strata remote add reg s3://bkt-region/p --endpoint "$EP" --region "$region"
  expect_stderr_matches "region"
done
expect_fail strata remote add reg s3://bkt-region/p --endpoint "$EP"$'\r\nX-Injected: 1'
expect_stderr_matches "endpoint"
[[ ! -s "$LOG" ]] || fail "a refused value still sent requests: $(head -n 3 "$LOG")"
expect_ok strata remote add good s3://bkt-good/p --endpoint "$EP"
cp "$STORE/remotes/good/remote.json" "$WORK/good.json"
edit_spec() {  # edit_spec PYTHON-STATEMENT: changes d, the remote's remote.json
  python3 - "$STORE/remotes/good/remote.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PY
}
for change in 'd["region"] = "us-east-1\r\nX-Injected: 1"' 'd["endpoint"] += "\r\nX-Injected: 1"' \
              'd["url"] = "s3://bkt-good/a/../b"' 'd["url"] = "s3://bkt-good/a\nb"'; do
  cp "$WORK/good.json" "$STORE/remotes/good/remote.json"
  edit_spec "$change"
  : >"$LOG"
  expect_exit 3 strata --remote good log main
  expect_stderr_matches "remote.json"
  [[ ! -s "$LOG" ]] || fail "remote.json with $change still sent requests"
done
cp "$WORK/good.json" "$STORE/remotes/good/remote.json"
edit_spec 'd["cache_bytes"] = -5'
expect_exit 3 strata --remote good log main
expect_stderr_matches "cache_bytes.* -5"
cp "$WORK/good.json" "$STORE/remotes/good/remote.json"

step "a listing that repeats its continuation token is an error, not an endless loop"
faults '{"repeat_token": true}'
: >"$LOG"
expect_fail timeout 60 "$STRATA_BIN" --store "$STORE" remote add loop s3://bkt-loop/p --endpoint "$EP" --timeout 5
(( RC != 124 )) || fail "remote add still listing after 60 s ($(wc -l <"$LOG") requests)"
expect_stderr_matches "repeated a continuation token"
[[ ! -e "$STORE/remotes/loop" ]] || fail "the refused remote add left remotes/loop"
# Opening a remote lists its packs too.
faults '{}'
expect_ok strata remote add loop s3://bkt-loop/p --endpoint "$EP" --timeout 5
faults '{"repeat_token": true}'
: >"$LOG"
expect_fail timeout 60 "$STRATA_BIN" --store "$STORE" --remote loop log main
(( RC != 124 )) || fail "log still listing after 60 s ($(wc -l <"$LOG") requests)"
expect_stderr_matches "repeated a continuation token"
(( $(requests '^GET ?') <= 3 )) || fail "$(requests '^GET ?') list requests for a repeated token"

step "credentials files: a device or a FIFO is refused at once, a huge file too"
faults '{}'
mkfifo "$WORK/creds.fifo"
head -c 200000 /dev/zero | tr '\0' 'x' >"$WORK/creds.big"
for creds in /dev/zero "$WORK/creds.fifo" "$WORK/creds.big"; do
  AWS_SHARED_CREDENTIALS_FILE="$creds" expect_fail timeout 20 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
    "$STRATA_BIN" --store "$STORE" remote add c s3://bkt-creds --endpoint "$EP"
  (( RC != 124 )) || fail "remote add with credentials file $creds hung"
  expect_stderr_matches "not a regular file|larger than"
done

step "remote add fails when config.json was not stored (500, 501), and leaves nothing"
for code in 500 501; do
  faults '{"put_status": {"config\\.json$": '"$code"'}}'
  expect_fail "$STRATA_BIN" --store "$STORE" remote add bad$code s3://bkt-put$code/p --endpoint "$EP" --timeout 2
  expect_stderr_matches "config.json"
  if grep -q "added remote" "$OUT"; then fail "remote add reported success after a $code"; fi
  [[ ! -e "$STORE/remotes/bad$code" ]] || fail "the failed remote add left remotes/bad$code"
done

step "a listing of 200 000 pack names that are not packs costs a bounded number of GETs"
faults '{}'
expect_ok strata remote add many s3://bkt-many/p --endpoint "$EP" --timeout 10
faults '{"synthetic_packs": 200000, "synthetic_size": 100000}'
: >"$LOG"
expect_fail timeout 120 "$STRATA_BIN" --store "$STORE" --remote many log main
(( RC != 124 )) || fail "opening the remote still indexing after 120 s ($(wc -l <"$LOG") requests)"
gets=$(requests '^GET .*packs/[0-9a-f]*\.pack')
echo "200 000 listed pack names that are not packs: $gets GETs, then: $(tail -n 1 "$ERR")" >&2
expect_stderr_matches "damaged"
(( gets <= 400 )) || fail "$gets GETs of listed packs before an error"
# Listed smaller than a pack can be: no GET at all.
faults '{"synthetic_packs": 200000, "synthetic_size": 10}'
: >"$LOG"
run timeout 120 "$STRATA_BIN" --store "$STORE" --remote many log main
(( $(requests '^GET .*packs/[0-9a-f]*\.pack') == 0 )) || fail "GETs of packs listed too short to be packs"

step "a pack upload that moves, then stalls, is retried (it is idempotent)"
faults '{}'
expect_ok strata remote add slow s3://bkt-slow/p --endpoint "$EP" --timeout 2
c1=$(import_dir "$WORK/src" main first)
faults '{"slow_put": {"packs/": 1}}'
: >"$LOG"
start=$(date +%s)
expect_ok timeout 120 "$STRATA_BIN" --store "$STORE" push slow main
resent=$(grep '^PUT .*packs/' "$LOG" | sort | uniq -d | wc -l)
echo "push with one stalled upload: $(( $(date +%s) - start )) s, $(requests '^PUT .*packs/') pack PUTs, $resent pack(s) sent twice" >&2
(( resent == 1 )) || fail "the stalled pack upload was not sent again (or more than one was)"
expect_ok "$STRATA_BIN" init "$WORK/store-b"
expect_ok "$STRATA_BIN" --store "$WORK/store-b" remote add slow s3://bkt-slow/p --endpoint "$EP"
expect_ok "$STRATA_BIN" --store "$WORK/store-b" pull slow main
expect_ok "$STRATA_BIN" --store "$WORK/store-b" export main "$WORK/out"
assert_same_content "$WORK/src" "$WORK/out"

step "a garbage ref in the bucket does not hide the other branches"
expect_ok strata branch create other main
expect_ok strata push slow other
curl -sS -X PUT --data-binary 'not a commit id' "$EP/bkt-slow/p/refs/main" >/dev/null
expect_ok strata --remote slow log other
expect_output_matches "first"
expect_exit 3 strata --remote slow log main

step "a pull of a damaged pack from the remote is damage: exit 3, not 1"
expect_ok "$STRATA_BIN" init "$WORK/store-c"
expect_ok "$STRATA_BIN" --store "$WORK/store-c" remote add slow s3://bkt-slow/p --endpoint "$EP"
packs=$(curl -sS "$EP/bkt-slow?list-type=2&prefix=p/packs/" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g')
[[ -n $packs ]] || fail "no pack listed in the bucket"
for key in $packs; do  # one byte flipped in the middle of each pack, its size kept
  curl -sS "$EP/bkt-slow/$key" | python3 -c 'import sys; b = bytearray(sys.stdin.buffer.read()); b[len(b) // 2] ^= 0xff; sys.stdout.buffer.write(b)' >"$WORK/flipped"
  curl -sS -X PUT --data-binary @"$WORK/flipped" "$EP/bkt-slow/$key" >/dev/null
done
expect_exit 3 "$STRATA_BIN" --store "$WORK/store-c" pull slow other
expect_stderr_matches "damaged|does not match"

step "probe objects that dead processes left: this host's once their process is gone, any host's once a day old"
probe="$EP/bkt-slow/p/.probe"
curl -sS -X PUT --data-binary probe "$probe/if-match-elsewhere.example-77-00000001" >/dev/null
curl -sS -X PUT --data-binary probe "$probe/if-match-elsewhere.example-78-00000002" >/dev/null
faults '{"backdate": {"if-match-elsewhere.example-77-": 90000}}'
import_dir "$WORK/src" other second >/dev/null  # a new commit: push moves the ref with If-Match
expect_ok strata push slow other
listed=$(curl -sS "$EP/bkt-slow?list-type=2&prefix=p/.probe/")
if grep -q "elsewhere.example-77-" <<<"$listed"; then fail "a probe 25 hours old from another host was kept"; fi
grep -q "elsewhere.example-78-" <<<"$listed" || fail "a fresh probe of another host's (maybe still running) was removed"
faults '{}'

step "a server that stops answering fails a command within --timeout (plus a second)"
faults '{"stall": true}'
for cmd in "--remote slow log main" "push slow main"; do
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  expect_fail timeout 60 "$STRATA_BIN" --store "$STORE" $cmd
  took=$(python3 -c "import sys; print(round($(date +%s.%N) - $start, 1))")
  echo "'$cmd' with the server stalled (--timeout 2): exit $RC after ${took} s: $(tail -n 1 "$ERR")" >&2
  python3 -c "import sys; sys.exit(0 if $took <= 4.0 else 1)" || fail "'$cmd' took ${took} s with --timeout 2"
  expect_stderr_matches "no answer|nothing moved"
done
faults '{}'

step "a multi-object delete that fails for a pack: gc counts it not deleted, it stays, the next gc deletes it"
expect_ok strata remote add gcd s3://bkt-gcd/p --endpoint "$EP" --create-bucket
import_dir "$WORK/src" junk >/dev/null
expect_ok strata push gcd junk
expect_ok strata --remote gcd branch delete junk
pack_keys() { curl -sS "$EP/bkt-gcd?list-type=2&prefix=p/packs/" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g'; }
mapfile -t before < <(pack_keys)
(( ${#before[@]} >= 2 )) || fail "the junk branch left ${#before[@]} packs; the step needs two"
stuck=${before[0]##*/}
faults '{"delete_fail": {"'"$stuck"'": "InternalError"}}'
: >"$LOG"
expect_ok strata gc --remote gcd --grace 0 --max-repack-mib 0 --json
json_true 'd["packs_not_deleted"] == 1 and d["packs_deleted"] == '"$(( ${#before[@]} - 1 ))"' and "InternalError" in d["not_deleted_reason"]'
json_true 'd["requests"]["delete"]["delete_many"] == 2 and d["requests"]["delete"]["delete"] == 0'
(( $(requests '^POST ?delete') == 2 )) || fail "$(requests '^POST ?delete') multi-object deletes (one, and one retry of the failed key)"
[[ $(pack_keys) == "p/packs/$stuck" ]] || fail "after the failed delete the bucket holds: $(pack_keys)"
faults '{}'
expect_ok strata gc --remote gcd --grace 0 --max-repack-mib 0 --json
json_true 'd["packs_deleted"] == 1 and d["packs_not_deleted"] == 0'
[[ -z $(pack_keys) ]] || fail "the second gc left: $(pack_keys)"
