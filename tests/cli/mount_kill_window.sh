#!/usr/bin/env bash
# `sync` and syncfs(2) return at once on a FUSE mount (the kernel does not
# pass them to the daemon), so what they can make durable is only what the
# daemon has already put into the workspace's files. The daemon does that
# within a short window after it answers an operation (docs/guarantees.md):
# operations done longer ago than that, followed by `sync` and kill -9 of the
# daemon, are all there after a remount, none of them fsynced.
source "$(dirname "$0")/lib.sh"
use_mountpoint
WAIT=${WAIT:-1}  # seconds: well past the window (100 ms), on a loaded machine too

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
  step "round $round: operations, $WAIT s, sync, kill -9, remount: nothing lost"
  mkdir "$MP/d$round"
  for i in 1 2 3 4 5; do printf 'round %s file %s\n' "$round" "$i" >"$MP/d$round/f$i"; done
  head -c 300000 /dev/urandom >"$WORK/big$round"
  cp "$WORK/big$round" "$MP/d$round/big"
  mv "$MP/d$round/f1" "$MP/moved$round"
  rm "$MP/d$round/f2"
  python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.syncfs(fd); os.close(fd)' "$MP" 2>/dev/null ||
    true  # os.syncfs needs Python 3.12; `sync` below does the same for every filesystem
  sleep "$WAIT"
  sync
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
