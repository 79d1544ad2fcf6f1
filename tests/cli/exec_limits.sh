#!/usr/bin/env bash
# strata exec limits: --timeout and --memory kill the program and say so in
# the exit status (124, 137) and on stderr; --pids stops it forking past the
# limit; --cpus runs. No cgroup of a sandbox outlives its command.
source "$(dirname "$0")/lib.sh"
use_sandbox
if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
  grep -qw memory /sys/fs/cgroup/cgroup.controllers || { echo "SKIP: no memory controller" >&2; exit 77; }
else
  for c in memory cpu pids; do
    [[ -e /sys/fs/cgroup/$c/cgroup.procs ]] || { echo "SKIP: no cgroup v1 $c controller" >&2; exit 77; }
  done
fi
AT=/mnt

mkdir -p "$WORK/src"
printf 'hello\n' >"$WORK/src/a.txt"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
expect_ok strata exec --branch main --name w --keep-mounted --at "$AT" -- true
mp=$(awk -v s="strata:w:$STORE" '$1 == s {print $2}' /proc/mounts)
expect_ok strata umount "$mp"

no_cgroups_left() {
  local left
  left=$(find /sys/fs/cgroup -maxdepth 3 -path '*/strata/exec-*' -type d 2>/dev/null || true)
  [[ -z $left ]] || fail "sandbox cgroups left behind: $left"
}

step "--timeout kills the program: exit 124 and a message"
start=$(date +%s)
expect_exit 124 strata exec --workspace w --timeout 1s --at "$AT" -- sh -c 'sleep 6001 & sleep 6002; wait'
expect_stderr_matches 'killed: timeout 1s'
(( $(date +%s) - start < 20 )) || fail "the timeout did not end the program promptly"
! pgrep -f 'sleep 600[12]' >/dev/null || fail "a process of the timed-out sandbox is still running"
expect_ok strata exec --workspace w --timeout 30s --at "$AT" -- true

step "--memory kills a program that goes past it: exit 137 and a message"
expect_exit 137 strata exec --workspace w --memory 64M --at "$AT" -- python3 -c 'b = bytearray(512 << 20); print("survived")'
expect_stderr_matches 'killed: memory limit 64M'
! grep -q survived "$OUT" || fail "the program survived its memory limit"
expect_ok strata exec --workspace w --memory 256M --at "$AT" -- python3 -c 'b = bytearray(16 << 20)'
no_cgroups_left

step "--pids: forks past the limit fail"
fork_many='
import os, time
made = 0
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    made += 1
print(made)'
expect_ok strata exec --workspace w --pids 10 --at "$AT" -- python3 -c "$fork_many"
made=$(cat "$OUT")
(( made < 10 )) || fail "--pids 10 let the program make $made processes"
expect_ok strata exec --workspace w --at "$AT" -- python3 -c "$fork_many"
[[ $(cat "$OUT") == 40 ]] || fail "without --pids the program made only $(cat "$OUT") processes"
no_cgroups_left

step "--cpus runs the program under a CPU quota"
expect_ok strata exec --workspace w --cpus 0.5 --at "$AT" -- sh -c 'echo ran'
grep -qx ran "$OUT" || fail "--cpus run printed nothing"
no_cgroups_left

step "bad limits are refused"
expect_exit 125 strata exec --workspace w --memory lots --at "$AT" -- true
expect_stderr_matches 'not a size'
expect_exit 125 strata exec --workspace w --timeout 5d --at "$AT" -- true
expect_stderr_matches 'not a duration'
