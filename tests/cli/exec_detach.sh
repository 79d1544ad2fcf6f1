#!/usr/bin/env bash
# strata exec --detach prints a run id at once; exec-status follows the run
# (running, then exited with the program's status), output [--follow] shows
# what it wrote, and stop ends it (SIGTERM, 143) and its mount with it.
source "$(dirname "$0")/lib.sh"
use_sandbox
AT=/mnt

mkdir -p "$WORK/src"
printf 'hello\n' >"$WORK/src/a.txt"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base

step "a detached run returns its id at once and runs in the background"
start=$(date +%s)
expect_ok strata exec --detach --branch main --name d1 --commit -m detached --at "$AT" -- \
  sh -c 'echo one; cat a.txt; sleep 2; echo two >&2; echo made >made.txt; exit 0'
id=$(cat "$OUT")
[[ $id =~ ^[0-9]+-[0-9]+$ ]] || fail "not a run id: '$id'"
(( $(date +%s) - start < 2 )) || fail "--detach waited for the program"
expect_ok strata exec-status "$id" --json
json_true 'd["state"] == "running" and d["exit_status"] is None'

step "output --follow prints everything and ends with the run"
expect_ok strata output "$id" --follow
grep -qx one "$OUT" && grep -qx hello "$OUT" && grep -qx two "$OUT" || fail "output: $(cat "$OUT")"
expect_ok strata exec-status "$id" --json
json_true 'd["state"] == "exited" and d["exit_status"] == 0'
expect_ok strata cat main:made.txt
[[ $(cat "$OUT") == made ]] || fail "the detached run's commit is missing"

step "a failing detached run reports its status"
expect_ok strata exec --detach --branch main --name d2 --at "$AT" -- sh -c 'exit 9'
id2=$(cat "$OUT")
for _ in $(seq 200); do
  strata exec-status "$id2" --json >"$WORK/st.json"
  [[ $(json 'd["state"]' "$WORK/st.json") == exited ]] && break
  sleep 0.05
done
json_true 'd["exit_status"] == 9' "$WORK/st.json"

step "stop ends a run, its sandbox and its mount"
expect_ok strata exec --detach --branch main --name d3 --at "$AT" -- sh -c 'exec sleep 2903'
id3=$(cat "$OUT")
for _ in $(seq 200); do pgrep -x -f 'sleep 2903' >/dev/null && break; sleep 0.05; done
pgrep -x -f 'sleep 2903' >/dev/null || fail "the detached program never started"
expect_ok strata stop "$id3"
expect_ok strata exec-status "$id3" --json
json_true 'd["state"] == "exited" and d["exit_status"] == 143'
if pgrep -x -f 'sleep 2903' >/dev/null; then fail "the stopped program still runs"; fi
if grep -q "^strata:d3:$STORE " /proc/mounts; then fail "the stopped run's mount is still there"; fi
expect_fail strata stop "$id3"
expect_stderr_matches 'not running'

step "unknown and malformed ids are refused"
expect_fail strata exec-status 12-34
expect_stderr_matches 'no exec run'
expect_fail strata output ../../etc
expect_stderr_matches 'not a run id'
expect_exit 125 strata exec --detach --workspace nope -- true

step "a link planted as the store's exec-runs directory is refused"
mv "$STORE/exec-runs" "$WORK/runs-aside"
mkdir "$WORK/elsewhere"
ln -s "$WORK/elsewhere" "$STORE/exec-runs"
expect_fail strata exec --detach --branch main --name d4 --at "$AT" -- true
expect_stderr_matches 'link'
[[ -z $(ls -A "$WORK/elsewhere") ]] || fail "a run record was written through the link"
