#!/usr/bin/env bash
# A throwaway single-node Ceph cluster with an S3 gateway, for tests and benchmarks.
#
#   scripts/ceph.sh start DIR   starts mon, one OSD (memstore: data lives in RAM) and
#                               radosgw (beast on 127.0.0.1), creates an S3 user, waits
#                               until S3 answers and writes DIR/env, a sourceable file
#                               exporting STRATA_S3_ENDPOINT, AWS_ACCESS_KEY_ID,
#                               AWS_SECRET_ACCESS_KEY and AWS_REGION.
#   scripts/ceph.sh stop DIR    stops the daemons by the PIDs that start recorded
#                               (radosgw, then OSD, then mon) and removes DIR.
#
# All state (config, mon store, OSD, sockets, logs) is under DIR, and every port is
# picked free at start, so several clusters can run on one machine at once.
# `start` on a DIR whose cluster still answers does nothing and succeeds; on a DIR
# left over from a dead cluster it starts afresh. A failed start prints the tail of
# the logs, stops what it started and exits non-zero (DIR stays for inspection).
# No systemd, no /etc/ceph, no name-based kill. See docs/remote-s3.md ("The Ceph test harness")
# for why the settings below are what they are.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd=$1
mkdir -p "$(dirname "$2")"
dir=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
conf=$dir/ceph.conf
daemons=(radosgw osd mon)  # in stopping order

log() { echo "ceph.sh: $*" >&2; }

# The PID recorded for daemon $1 when that process is still ours (its command line
# names our config, so a PID reused after a reboot is never taken for ours).
live_pid() {
  local f=$dir/pids/$1 pid
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$conf" || return 1
  echo "$pid"
}

# Whether process $1 still runs. A zombie counts as gone: our own child during a
# failed start, or an orphan where the reaper of orphans does not reap.
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

stop_daemon() {
  local name=$1 pid i
  pid=$(live_pid "$name") || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do  # 10 s
    running "$pid" || break
    sleep 0.1
  done
  if running "$pid"; then
    log "$name ($pid) ignored SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pids/$name"
}

stop_all() {
  local d
  for d in "${daemons[@]}"; do stop_daemon "$d"; done
}

# Ports some process listens on (TCP, any address).
used_ports() { ss -Htln | awk '{n = split($4, a, ":"); print a[n]}' | sort -u; }

# A TCP port nobody listens on: $1 if free, else a random one below the ephemeral
# range (so the kernel does not hand it out to a client meanwhile). Ports already
# picked in this run are passed in $taken.
taken=" "
free_port() {
  local want=$1 used p i
  used=" $(used_ports | tr '\n' ' ') "
  for ((i = 0; i < 200; i++)); do
    if ((i == 0 && want > 0)); then p=$want; else p=$((10000 + RANDOM % 22000)); fi
    if [[ $used != *" $p "* && $taken != *" $p "* ]]; then
      taken+="$p "
      echo "$p"
      return 0
    fi
  done
  log "no free TCP port found"
  return 1
}

s3_answers() {  # any HTTP answer from the gateway counts
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1/" 2>/dev/null) || return 1
  [[ $code != 000 ]]
}

fail() {
  local f
  log "start failed: $*"
  for f in "$dir"/log/*; do
    [[ -f $f ]] || continue
    echo "---- tail of $f" >&2
    tail -n 25 "$f" >&2
  done
  stop_all
  exit 1
}

# Runs "$@" in the background as a daemon of its own session, output to log/$name.out,
# and records its PID. setsid execs (the shell's background child is no group
# leader), so $! is the daemon itself.
spawn() {
  local name=$1
  shift
  setsid "$@" </dev/null >>"$dir/log/$name.out" 2>&1 &
  echo $! >"$dir/pids/$name"
}

ceph_cli() { timeout 20 ceph -c "$conf" --connect-timeout 10 "$@"; }

start() {
  if [[ -f $dir/env ]] && live_pid mon >/dev/null && live_pid osd >/dev/null &&
    live_pid radosgw >/dev/null; then
    # shellcheck disable=SC1091
    if s3_answers "$(. "$dir/env" && echo "$STRATA_S3_ENDPOINT")"; then
      log "cluster in $dir already runs"
      return 0
    fi
  fi
  if [[ -e $dir ]]; then  # left over from a dead or half-started cluster
    stop_all
    rm -rf "$dir"
  fi
  local t0=$SECONDS
  mkdir -p "$dir"/{run,log,pids,mon,osd,rgw}

  local fsid mon_v2 mon_v1 rgw_port
  fsid=$(uuidgen)
  mon_v2=$(free_port 0)
  mon_v1=$(free_port 0)
  rgw_port=$(free_port "${STRATA_CEPH_RGW_PORT:-7480}")
  cat >"$conf" <<EOF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$mon_v2,v1:127.0.0.1:$mon_v1]
public_addr = 127.0.0.1
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
# With auth off every messenger mode must allow crc, or radosgw hangs on -13.
ms_cluster_mode = crc secure
ms_service_mode = crc secure
ms_client_mode = crc secure
ms_mon_cluster_mode = crc secure
ms_mon_service_mode = crc secure
ms_mon_client_mode = crc secure
osd_objectstore = memstore
memstore_device_bytes = 4294967296
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
log_file = $dir/log/\$name.log
pid_file = $dir/run/\$name.pid
mon_data = $dir/mon/\$cluster-\$id
osd_data = $dir/osd/\$cluster-\$id
rgw_data = $dir/rgw/\$cluster-\$id
keyring = $dir/keyring
crash_dir = $dir/crash

[client.rgw.a]
rgw_frontends = beast endpoint=127.0.0.1:$rgw_port
rgw_enable_usage_log = false
EOF

  ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null ||
    fail "ceph-authtool"
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_v2,v1:127.0.0.1:$mon_v1]" \
    "$dir/monmap" >/dev/null || fail "monmaptool"
  ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring" \
    >>"$dir/log/mkfs.out" 2>&1 || fail "ceph-mon --mkfs"
  spawn mon ceph-mon -c "$conf" -i a -f

  local osd_uuid osd_id
  osd_uuid=$(uuidgen)
  osd_id=$(ceph_cli osd new "$osd_uuid") || fail "ceph osd new (is the mon up?)"
  mkdir -p "$dir/osd/ceph-$osd_id"
  ceph-osd -c "$conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/mkfs.out" 2>&1 ||
    fail "ceph-osd --mkfs"
  spawn osd ceph-osd -c "$conf" -i "$osd_id" -f

  # radosgw waits for the OSD by itself; starting it now overlaps the two boots.
  spawn radosgw radosgw -c "$conf" -n client.rgw.a -f
  local endpoint=http://127.0.0.1:$rgw_port d
  until s3_answers "$endpoint"; do
    for d in "${daemons[@]}"; do
      live_pid "$d" >/dev/null || fail "$d exited"
    done
    ((SECONDS - t0 < 90)) || fail "S3 at $endpoint did not answer within 90 s"
    sleep 0.25
  done
  # Two clusters started at the same moment can both find the same port free;
  # the one whose radosgw lost the bind would take the other's answers for its
  # own. As root, ss names the listener: it must be this cluster's radosgw.
  if ((EUID == 0)); then
    local rgw_pid
    rgw_pid=$(live_pid radosgw) || fail "radosgw exited"
    ss -Htlnp "sport = :$rgw_port" | grep -q "pid=$rgw_pid," ||
      fail "port $rgw_port answers, but not from this cluster's radosgw (another cluster took it meanwhile)"
  fi

  local access secret
  access=$(od -An -N10 -tx1 /dev/urandom | tr -d ' \n')
  secret=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
  timeout 30 radosgw-admin -c "$conf" user create --uid=strata --display-name=strata \
    --access-key="$access" --secret="$secret" >>"$dir/log/admin.out" 2>&1 ||
    fail "radosgw-admin user create"

  cat >"$dir/env.tmp" <<EOF
export STRATA_S3_ENDPOINT=$endpoint
export AWS_ACCESS_KEY_ID=$access
export AWS_SECRET_ACCESS_KEY=$secret
export AWS_REGION=us-east-1
EOF
  mv "$dir/env.tmp" "$dir/env"
  log "cluster up in $((SECONDS - t0)) s: S3 at $endpoint, env in $dir/env"
}

stop() {
  [[ -e $dir ]] || return 0
  stop_all
  rm -rf "$dir"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
