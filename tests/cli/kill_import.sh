#!/usr/bin/env bash
# An import killed with SIGKILL at a random moment leaves a store that verifies
# clean and works; the next command clears STORE/tmp; a full import afterwards
# exports identically.
source "$(dirname "$0")/lib.sh"

SRC="$WORK/src"
mkdir -p "$SRC"
step "building the source tree"
cp -a /usr/include "$SRC/include"
for i in 1 2 3 4; do
  head -c $((8 * 1024 * 1024)) /dev/urandom >"$SRC/random$i"
done

expect_ok "$STRATA_BIN" init "$STORE"

# How long an import takes here, timed on the same work each round does (the
# tree already stored, 48 MiB of new data): fixed delays killed nothing on a
# faster machine, so the kills are spread over the measured duration instead.
head -c $((48 * 1024 * 1024)) /dev/urandom >"$SRC/fresh.bin"
expect_ok strata import "$SRC" --branch calibrate -m calibrate
head -c $((48 * 1024 * 1024)) /dev/urandom >"$SRC/fresh.bin"
t0=$(date +%s.%N)
expect_ok strata import "$SRC" --branch calibrate -m calibrate
duration=$(python3 -c "print('%.3f' % ($(date +%s.%N) - $t0))")
step "an import of the stored tree plus 48 MiB of new data takes ${duration}s"

killed=0
for i in 0 1 2 3 4; do
  # New data each round, so every import has chunks to write, not only to skip.
  head -c $((48 * 1024 * 1024)) /dev/urandom >"$SRC/fresh.bin"
  # Delays spread over 5 % .. 85 % of the measured duration: one slot per
  # round, random inside it.
  delay=$(python3 -c "import random; print('%.3f' % ($duration * (0.05 + 0.16 * $i + random.uniform(0, 0.16))))")
  "$STRATA_BIN" --store "$STORE" import "$SRC" --branch "kill$i" -m "round $i" \
    >"$WORK/import$i.log" 2>&1 </dev/null &
  pid=$!
  BG_PIDS+=("$pid")
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  st=0
  { wait "$pid"; } 2>/dev/null || st=$?
  BG_PIDS=()
  if [[ $st == 137 ]]; then
    killed=$((killed + 1))
    step "round $i: killed after ${delay}s"
  elif [[ $st == 0 ]]; then
    step "round $i: import finished before the kill at ${delay}s"
  else
    cat "$WORK/import$i.log" >&2
    fail "round $i: import exited $st before it was killed"
  fi

  left=$(find "$STORE/tmp" -mindepth 1 | wc -l)
  packs=$(find "$STORE/packs" -name '*.pack' | wc -l)
  step "round $i: $left file(s) in tmp/, $packs pack(s) before the next command"
  expect_ok strata verify
  assert_store_tmp_empty
  expect_ok strata stats --json
  json_true 'd["objects"]["chunk"] >= 0 and d["packs"] >= 0'
  # The branch is either absent (killed before the ref moved) or a whole commit.
  run strata log "kill$i" --json
  case $RC in
    0) json_true "len(d) == 1 and d[0]['message'] == 'round $i'"
       expect_ok strata ls "kill$i" --json ;;
    1) [[ $st == 137 ]] || fail "round $i: import exited 0 but branch kill$i is unknown" ;;
    *) _show_last; fail "round $i: log kill$i exited $RC" ;;
  esac
done
(( killed >= 3 )) || fail "only $killed of 5 imports were still running when killed; the tree is too small to test this"

step "a complete import after the kills"
expect_ok strata import "$SRC" --branch main -m complete
commit_of_output >/dev/null
assert_store_tmp_empty
expect_ok strata export main "$WORK/out"
assert_same_content "$SRC" "$WORK/out"
assert_same_metadata "$SRC" "$WORK/out"
expect_ok strata verify
assert_store_tmp_empty
