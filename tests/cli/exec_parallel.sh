#!/usr/bin/env bash
# Sixteen sandboxes forked from one commit run at once, each committing its
# own change on its own branch, and nothing leaks between them. A `strata
# exec` killed with SIGKILL leaves no mount and no process behind, and the
# next exec on its workspace runs and finds what the killed one wrote.
source "$(dirname "$0")/lib.sh"
use_sandbox
AT=/mnt

mkdir -p "$WORK/src"
seq 1 100000 >"$WORK/src/shared.txt"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
base=$(commit_of_output)

step "sixteen forks of one commit, sixteen sandboxes at once"
pids=()
for i in $(seq 1 16); do
  expect_ok strata fork "b$i" --from main
done
for i in $(seq 1 16); do
  strata exec --branch "b$i" --name "p$i" --commit -m "change $i" --at "$AT" -- \
    sh -c "echo $i >only-$i.txt; echo $i >>shared.txt; sleep 1; ls" >"$WORK/out.$i" 2>"$WORK/err.$i" &
  pids+=($!)
done
for i in $(seq 1 16); do
  wait "${pids[$((i - 1))]}" || { cat "$WORK/err.$i" >&2; fail "sandbox $i failed"; }
done

step "each branch holds its own change and none of the others'"
for i in $(seq 1 16); do
  # While it ran, the sandbox saw only its own file.
  [[ $(grep -c '^only-' "$WORK/out.$i") == 1 ]] || fail "sandbox $i saw another's file: $(cat "$WORK/out.$i")"
  expect_ok strata ls "b$i"
  [[ $(grep -c 'only-' "$OUT") == 1 ]] || fail "branch b$i holds another's file: $(cat "$OUT")"
  expect_ok strata cat "b$i:only-$i.txt"
  [[ $(cat "$OUT") == "$i" ]] || fail "b$i:only-$i.txt is '$(cat "$OUT")'"
  expect_ok strata cat "b$i:shared.txt"
  [[ $(tail -n 1 "$OUT") == "$i" && $(wc -l <"$OUT") == 100001 ]] || fail "b$i:shared.txt is wrong"
  expect_ok strata log "b$i" --json
  json_true 'd[0]["message"].startswith("change '"$i"'") and d[1]["id"] == "'"$base"'"'
done
expect_ok strata cat main:shared.txt
[[ $(wc -l <"$OUT") == 100000 ]] || fail "main changed"
expect_ok strata workspace list --json
json_true 'd == []'
[[ -z $(grep "$STORE/.*sandbox.mnt" /proc/mounts || true) ]] || fail "a sandbox mount outlived its command"

step "a killed strata exec leaves no mount and no process"
# The binary itself, not the strata() function: $! must be its pid.
"$STRATA_BIN" --store "$STORE" exec --branch main --name killed --at "$AT" -- sh -c 'echo before >before.txt; exec sleep 3141' \
  >"$WORK/killed.out" 2>"$WORK/killed.err" &
exec_pid=$!
for _ in $(seq 200); do pgrep -x -f 'sleep 3141' >/dev/null && break; sleep 0.05; done
pgrep -x -f 'sleep 3141' >/dev/null || { cat "$WORK/killed.err" >&2; fail "the sandboxed program never started"; }
daemon_pid=$(sed -n 1p "$STORE"/workspaces/killed/mounted)
kill -0 "$daemon_pid" || fail "no daemon for the workspace"
kill -9 "$exec_pid"
wait "$exec_pid" 2>/dev/null || true
for _ in $(seq 200); do
  if ! pgrep -x -f 'sleep 3141' >/dev/null && ! grep -q "^strata:killed:$STORE " /proc/mounts && ! kill -0 "$daemon_pid" 2>/dev/null; then
    break
  fi
  sleep 0.05
done
if pgrep -x -f 'sleep 3141' >/dev/null; then fail "the sandboxed program outlived the killed command"; fi
if grep -q "^strata:killed:$STORE " /proc/mounts; then fail "the killed command's mount is still there"; fi
if kill -0 "$daemon_pid" 2>/dev/null; then fail "the daemon of the killed command's mount is still running"; fi

step "the next exec on that workspace recovers and finds what was written"
expect_ok strata exec --workspace killed --commit -m recovered --at "$AT" -- cat before.txt
[[ $(cat "$OUT") == before ]] || fail "the killed run's file is missing"
expect_ok strata cat main:before.txt
[[ -z $(grep "$STORE/.*sandbox.mnt" /proc/mounts || true) ]] || fail "a sandbox mount outlived its command"
