#!/usr/bin/env bash
# `sync` and syncfs(2) return at once on a FUSE mount (the kernel does not
# pass them to the daemon), so what they can make durable is only what the
# daemon has already put into the workspace's files. The daemon does that
# within a short window after it answers an operation (docs/guarantees.md):
# operations followed by `sync` and, a moment later, kill -9 of the daemon
# are all there after a remount, none of them fsynced.
source "$(dirname "$0")/lib.sh"
use_mountpoint
# Seconds between `sync` and the kill: past the window once operations pause
# (10 ms, docs/guarantees.md) with room for a loaded machine, but well inside
# the 50 ms that a batch may stay open while operations keep coming.
WAIT=${WAIT:-0.02}

daemon_pid() { awk 'NR==1' "$STORE/workspaces/ws/mounted"; }
remount() {
  local _
  for _ in $(seq 50); do
    "$STRATA_BIN" --store "$STORE" mount --workspace ws "$MP" 2>"$ERR" && return 0
    sleep 0.1
  done
  fail "the workspace does not mount again after the kill: $(cat "$ERR")"
}

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ws "$MP"
sleep 0.5  # the daemon idle first, as after any mount

for round in 1 2 3; do
  step "round $round: operations, syncfs, $WAIT s, kill -9, remount: nothing lost"
  mkdir "$MP/d$round"
  for i in 1 2 3 4 5; do printf 'round %s file %s\n' "$round" "$i" >"$MP/d$round/f$i"; done
  head -c 300000 /dev/urandom >"$WORK/big$round"
  cp "$WORK/big$round" "$MP/d$round/big"
  mv "$MP/d$round/f1" "$MP/moved$round"
  rm "$MP/d$round/f2"
  # syncfs(2) of the mount, which returns at once. (`sync` of every
  # filesystem takes long enough on a busy machine to hide the window.)
  sync -f "$MP"
  sleep "$WAIT"
  kill -9 "$(daemon_pid)"
  remount
  [[ $(cat "$MP/moved$round" 2>/dev/null) == "round $round file 1" ]] || fail "round $round: the renamed file is lost"
  [[ ! -e $MP/d$round/f2 ]] || fail "round $round: the deleted file is back"
  for i in 3 4 5; do
    [[ $(cat "$MP/d$round/f$i" 2>/dev/null) == "round $round file $i" ]] || fail "round $round: f$i is lost"
  done
  cmp -s "$MP/d$round/big" "$WORK/big$round" || fail "round $round: big is lost or reads otherwise"
done
expect_ok strata umount "$MP"
