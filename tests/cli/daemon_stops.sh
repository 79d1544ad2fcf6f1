#!/usr/bin/env bash
# A daemon killed (SIGKILL) while it serves `commit`, `rebase` or `reset
# --hard`: the command says that the daemon stopped, with exit 1, never 3
# (nothing is damaged); for rebase and reset it says which state the
# workspace holds, before or after, and mounting it again shows exactly that
# state. A command on a mount whose daemon had stopped before says so too.
# Every remount here comes right after the kill (the dead mount is detached).
source "$(dirname "$0")/lib.sh"
use_mountpoint

daemon_pid() { awk 'NR==1' "$STORE/workspaces/$1/mounted"; }

# kill_when_waiting DELAY_MS PID CMD...: runs CMD (stdout in $OUT, stderr in
# $ERR); once CMD waits for the daemon's reply on the control socket (its
# only socket read), waits DELAY_MS and kills process PID with SIGKILL.
# Sets KILLED (1 when the kill came before CMD ended) and RC.
kill_when_waiting() {
  local res
  res=$(python3 - "$@" "$OUT" "$ERR" <<'PY'
import os, signal, subprocess, sys, time
delay, pid = float(sys.argv[1]) / 1000, int(sys.argv[2])
cmd, out, err = sys.argv[3:-2], sys.argv[-2], sys.argv[-1]
p = subprocess.Popen(cmd, stdout=open(out, "w"), stderr=open(err, "w"), stdin=subprocess.DEVNULL)
killed, deadline = 0, time.time() + 120
while p.poll() is None and time.time() < deadline:
    try:
        wchan = open("/proc/%d/wchan" % p.pid).read()
    except OSError:
        break
    if wchan == "unix_stream_read_generic":
        time.sleep(delay)
        if p.poll() is None:
            os.kill(pid, signal.SIGKILL)
            killed = 1
        break
    time.sleep(0.0002)
print(killed, p.wait())
PY
  )
  read -r KILLED RC <<<"$res"
}

expect_ok "$STRATA_BIN" init "$STORE"

step "commit: a kill while the daemon commits is 'stopped during the commit', exit 1"
expect_ok strata mount --new --name ws "$MP"
hits=0
for delay in 0 0 20 100 300; do
  head -c 24000000 /dev/urandom >"$MP/big-$delay-$RANDOM"
  kill_when_waiting "$delay" "$(daemon_pid ws)" "$STRATA_BIN" --store "$STORE" commit "$MP" -m "m $delay" --branch main
  if [[ $KILLED == 1 && $RC != 0 ]]; then
    hits=$((hits + 1))
    [[ $RC == 1 ]] || { _show_last; fail "a commit whose daemon was killed exited $RC, want 1"; }
    expect_stderr_matches "the daemon stopped during the commit; it may or may not have landed: see strata log"
    expect_stderr_matches "strata mount --workspace ws $MP"
  fi
  if [[ $KILLED == 1 ]]; then
    expect_ok strata mount --workspace ws "$MP"
  fi
  expect_ok strata fsck
done
(( hits >= 1 )) || fail "no kill landed while the daemon served a commit; the test proved nothing"
step "$hits of 5 commits were cut short by the kill"
expect_ok strata umount "$MP"

# Two trees: the base (b0) and a newer one with 1 500 more files (c1).
mkdir -p "$WORK/src/base" "$WORK/src2/base" "$WORK/src2/theirs"
for i in $(seq 1500); do
  printf 'base %s\n' "$i" >"$WORK/src/base/f$i"
  printf 'base %s\n' "$i" >"$WORK/src2/base/f$i"
  printf 'theirs %s\n' "$i" >"$WORK/src2/theirs/f$i"
done
c0=$(import_dir "$WORK/src" b0 "c0")
c1=$(import_dir "$WORK/src2" b1 "c1")

step "a command on a mount whose daemon had stopped before says so"
expect_ok strata mount --workspace ws "$MP"
kill -9 "$(daemon_pid ws)"
for cmd in "commit $MP -m late" "rebase $MP" "reset $MP --hard b0"; do
  # shellcheck disable=SC2086
  expect_exit 1 strata $cmd
  expect_stderr_matches "daemon serving $MP \(workspace 'ws'\) has stopped"
  expect_stderr_matches "nothing was (done|committed|rebased|reset)"
  expect_stderr_matches "strata mount --workspace ws $MP"
done
expect_ok strata mount --workspace ws "$MP"
expect_ok strata umount "$MP"

# fresh_workspace NAME: a workspace on b0 with 1 500 files of its own, mounted.
fresh_workspace() {
  expect_ok strata mount --branch b0 --name "$1" "$MP"
  mkdir "$MP/mine"
  for i in $(seq 1500); do printf 'mine %s\n' "$i" >"$MP/mine/f$i"; done
}

# check_state NAME WANT: after a remount, workspace NAME holds WANT: "before"
# (its base is c0 and it holds its own files only) or "after" (see $AFTER).
check_state() {
  expect_ok strata workspace list --json
  local base
  base=$(json '[w["base"] for w in d if w["name"] == "'"$1"'"][0]')
  case $2 in
    before)
      [[ $base == "$c0" ]] || fail "$1 said 'before' but is based on $base"
      [[ ! -e $MP/theirs ]] || fail "$1 said 'before' but holds the other side's files"
      [[ $(cat "$MP/mine/f1500") == "mine 1500" ]] || fail "$1 said 'before' but lost its own files"
      ;;
    after)
      [[ $base == "$c1" ]] || fail "$1 said 'after' but is based on $base"
      [[ $(cat "$MP/theirs/f1500") == "theirs 1500" ]] || fail "$1 said 'after' but lacks c1's files"
      if [[ $AFTER == rebased ]]; then
        [[ $(cat "$MP/mine/f1500") == "mine 1500" ]] || fail "$1 was rebased but lost its own files"
        [[ $(find "$MP/mine" -type f | wc -l) == 1500 ]] || fail "$1 was rebased but holds part of its files"
      else
        [[ ! -e $MP/mine ]] || fail "$1 was reset --hard but still holds its own files"
      fi
      ;;
  esac
  [[ $(find "$MP/base" -type f | wc -l) == 1500 ]] || fail "$1 holds part of the base"
}

for op in rebase reset; do
  step "$op: a kill while the daemon serves it names the state the workspace is in"
  hits=0
  n=0
  for delay in 0 5 50 300 1500; do
    n=$((n + 1))
    name="$op$n"
    fresh_workspace "$name"
    if [[ $op == rebase ]]; then
      AFTER=rebased
      kill_when_waiting "$delay" "$(daemon_pid "$name")" "$STRATA_BIN" --store "$STORE" rebase "$MP" "$c1"
      said="the daemon stopped during the rebase; workspace '$name' holds"
    else
      AFTER=reset
      kill_when_waiting "$delay" "$(daemon_pid "$name")" "$STRATA_BIN" --store "$STORE" reset "$MP" --hard "$c1"
      said="the daemon stopped during the reset; workspace '$name' holds"
    fi
    state=after
    said_rc=$RC
    if [[ $KILLED == 1 && $RC != 0 ]]; then
      hits=$((hits + 1))
      [[ $RC == 1 ]] || { _show_last; fail "a $op whose daemon was killed exited $RC, want 1"; }
      expect_stderr_matches "$said"
      if grep -q "state from before" "$ERR"; then state=before; fi
      expect_ok strata mount --workspace "$name" "$MP"
    elif [[ $KILLED == 1 ]]; then
      expect_ok strata mount --workspace "$name" "$MP"
    fi
    step "$op $n: killed=$KILLED exit=$said_rc state=$state"
    check_state "$name" "$state"
    expect_ok strata umount "$MP"
  done
  (( hits >= 1 )) || fail "no kill landed while the daemon served a $op; the test proved nothing"
done
expect_ok strata fsck
