#!/usr/bin/env bash
# A past version read over SMB: Debian's samba shares a mount on 127.0.0.1
# (a private smb.conf, smbd in the foreground on a free port, torn down
# after), and smbclient reads an old file from .strata/commits/ID/ and
# .strata/branches/NAME/, and is refused a write there.
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v smbd >/dev/null && command -v smbclient >/dev/null ||
  { echo "SKIP: no smbd or smbclient (apt install samba smbclient)" >&2; exit 77; }

step "a workspace with two commits"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ws "$MP"
mkdir "$MP/docs"
printf 'first draft\n' >"$MP/docs/report.txt"
expect_ok strata commit "$MP" -m first --branch main --json
c1=$(json 'd["commit"]')
printf 'final version\n' >"$MP/docs/report.txt"
expect_ok strata commit "$MP" -m second --json

step "smbd shares the mount on 127.0.0.1"
SMB="$WORK/smb"
mkdir -p "$SMB"/{run,lock,state,cache,private,ncalrpc,logs}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$SMB/smb.conf" <<CONF
[global]
  server role = standalone server
  interfaces = 127.0.0.1
  bind interfaces only = yes
  smb ports = $port
  pid directory = $SMB/run
  lock directory = $SMB/lock
  state directory = $SMB/state
  cache directory = $SMB/cache
  private dir = $SMB/private
  ncalrpc dir = $SMB/ncalrpc
  log file = $SMB/logs/log.%m
  map to guest = Bad User
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
  server min protocol = SMB2
[ws]
  path = $MP
  read only = no
  guest ok = yes
  guest only = yes
  force user = root
CONF
smbd --foreground --debug-stdout -s "$SMB/smb.conf" >"$SMB/smbd.out" 2>&1 &
smbd_pid=$!
# In a process group of its own (it signals its group when it ends), ended
# with SIGTERM before the mount goes; lib.sh's kill -9 comes after.
BG_PIDS+=("$smbd_pid")
stop_smbd() {
  kill "$smbd_pid" 2>/dev/null || return 0
  wait "$smbd_pid" 2>/dev/null || true
}
trap 'rc=$?; set +e; trap - ERR; stop_smbd; fusermount3 -u -z "$MP" 2>/dev/null; (exit $rc); _cleanup' EXIT
smb() { smbclient -s "$SMB/smb.conf" //127.0.0.1/ws -p "$port" -N -c "$1"; }
for _ in $(seq 100); do
  smb ls >/dev/null 2>&1 && break
  kill -0 "$smbd_pid" 2>/dev/null || { cat "$SMB/smbd.out" >&2; fail "smbd exited"; }
  sleep 0.2
done
smb ls >"$OUT" 2>&1 || { cat "$OUT" "$SMB/smbd.out" >&2; fail "smbclient cannot reach the share"; }
grep -q docs "$OUT" || fail "the share does not show the workspace: $(cat "$OUT")"
grep -q '\.strata' "$OUT" && fail "the share's top listing shows .strata"

step "smbclient reads the past versions"
run smb "get .strata/commits/$c1/docs/report.txt $WORK/by_id.txt"
[[ $RC == 0 ]] || { _show_last; fail "smbclient get by commit id failed"; }
[[ $(cat "$WORK/by_id.txt") == "first draft" ]] || fail "over SMB, commits/<c1> reads '$(cat "$WORK/by_id.txt")'"
run smb "get .strata/commits/${c1:0:12}/docs/report.txt $WORK/by_prefix.txt"
[[ $(cat "$WORK/by_prefix.txt") == "first draft" ]] || fail "over SMB, a prefix of c1 reads wrong"
run smb "get .strata/branches/main/docs/report.txt $WORK/by_branch.txt"
[[ $(cat "$WORK/by_branch.txt") == "final version" ]] || fail "over SMB, branches/main reads wrong"
run smb "ls .strata/commits/$c1/docs/*"
grep -q report.txt "$OUT" || fail "over SMB, a past directory does not list its file: $(cat "$OUT")"
run smb "get docs/report.txt $WORK/now.txt"
[[ $(cat "$WORK/now.txt") == "final version" ]] || fail "over SMB, the workspace's own file reads wrong"

step "a write into a past version over SMB is refused and changes nothing"
printf 'overwritten\n' >"$WORK/upload.txt"
run smb "put $WORK/upload.txt .strata/commits/$c1/docs/report.txt"
grep -Eq 'NT_STATUS_(MEDIA_WRITE_PROTECTED|ACCESS_DENIED|CANNOT_MAKE|UNSUCCESSFUL)' "$OUT" ||
  { _show_last; fail "smbclient put into a past version was not refused"; }
[[ $(cat "$MP/.strata/commits/$c1/docs/report.txt") == "first draft" ]] || fail "the refused put changed the past version"
run smb "put $WORK/upload.txt docs/uploaded.txt"
[[ $(cat "$MP/docs/uploaded.txt") == overwritten ]] || { _show_last; fail "a put into the workspace itself failed"; }
