#!/usr/bin/env bash
# `strata key passwd` killed with SIGKILL at random moments (while it unwraps
# the key with the old passphrase, wraps it under the new one, writes the new
# key file or removes the old one): afterwards the old passphrase, the new
# one, or both open the store, never neither, and the data stays readable.
# Each round changes the passphrase again from one that works.
source "$(dirname "$0")/lib.sh"
unset STRATA_PASSWORD STRATA_NEW_PASSWORD STRATA_KEY_FILE
ROUNDS=${ROUNDS:-6}

mkdir -p "$WORK/src"
printf 'kept across every passphrase change\n' >"$WORK/src/data.txt"
STRATA_PASSWORD="pass 0" expect_ok "$STRATA_BIN" init --encrypt "$STORE"
STRATA_PASSWORD="pass 0" expect_ok strata import "$WORK/src" --branch main
# How long a whole passwd takes here: kills land anywhere within it.
start=$(date +%s%N)
STRATA_PASSWORD="pass 0" STRATA_NEW_PASSWORD="pass timed" expect_ok strata key passwd
span_ms=$(( ($(date +%s%N) - start) / 1000000 ))
current="pass timed"
opens() { STRATA_PASSWORD="$1" "$STRATA_BIN" --store "$STORE" key list >/dev/null 2>&1; }

killed=0
for round in $(seq "$ROUNDS"); do
  new="pass $round"
  STRATA_PASSWORD="$current" STRATA_NEW_PASSWORD="$new" "$STRATA_BIN" --store "$STORE" key passwd \
    >/dev/null 2>&1 &
  pid=$!
  sleep "$(python3 -c "import random; print(random.uniform(0, $span_ms) / 1000)")"
  if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
  wait "$pid" 2>/dev/null || true
  old_ok=0 new_ok=0
  opens "$current" && old_ok=1
  opens "$new" && new_ok=1
  echo "round $round: old passphrase $old_ok, new passphrase $new_ok" >&2
  (( old_ok + new_ok > 0 )) || fail "after a kill in round $round neither passphrase opens the store"
  (( new_ok )) && current="$new"
done
(( killed > 0 )) || fail "no passwd was killed while it ran: the test proved nothing"
STRATA_PASSWORD="$current" expect_ok strata export main "$WORK/out"
assert_same_content "$WORK/src" "$WORK/out"
STRATA_PASSWORD="$current" expect_ok strata verify
