#!/usr/bin/env bash
# Many machines on one remote branch (Ceph RGW, started by the ceph fixture):
# eight stores, each in a network namespace of its own that reaches the
# gateway over a veth pair, commit and push to one branch at once, over and
# over, while `gc --remote` and `forget --remote` run from other stores.
# A machine whose push loses pulls (replaying its commit on the new head) and
# pushes again. Checked: every push that reported success is in the branch's
# history, each exactly once, and is never missing from it while the run
# goes on; each race had one winner (the history is one line, of exactly the
# landed commits); every losing push pulled and landed later; the head holds
# every machine's last files; fsck of the remote is clean at the end.
#
#   many_machines.sh [--seconds N]   how long the machines commit (default 60;
#                                    by hand, e.g. --seconds 300)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_s3.sh"
require_root
[[ -n "${STRATA_CEPH_ENV:-}" && -r "${STRATA_CEPH_ENV}" ]] || { echo "SKIP: no S3 server (STRATA_CEPH_ENV)" >&2; exit 77; }
source "$STRATA_CEPH_ENV"
command -v ip >/dev/null || { echo "SKIP: no ip(8) for network namespaces" >&2; exit 77; }

RUN_SECONDS=60
while [[ $# -gt 0 ]]; do
  case $1 in
    --seconds) RUN_SECONDS=$2; shift ;;
    *) echo "usage: $0 [--seconds N]" >&2; exit 2 ;;
  esac
  shift
done
[[ $RUN_SECONDS =~ ^[0-9]+$ ]] || { echo "usage: --seconds takes a whole number" >&2; exit 2; }

MACHINES=8
KEEP_LAST=12  # forget keeps more than a machine falls behind between two pulls
BUCKET="cli-many-machines-$$-$RANDOM"
URL="s3://$BUCKET/team"
EP="$STRATA_S3_ENDPOINT"
PORT=${EP##*:}
export XDG_CACHE_HOME="$WORK/xdg-cache"
# This run's subnets, 10.OCTET.I.0/30 for machine I: the second octet from the
# PID, so that two runs at once do not share addresses.
OCTET=$(( 20 + $$ % 200 ))
ns_name() { echo "strata-mm-$$-$1"; }
GROUPS_TO_KILL=()  # process groups of the machines and the relay

teardown() {
  local rc=$? g i keys
  set +e
  trap - ERR  # the processes ended here exit by SIGKILL, on purpose
  for g in "${GROUPS_TO_KILL[@]}"; do kill -9 -- "-$g" 2>/dev/null; wait "$g" 2>/dev/null; done
  for i in $(seq "$MACHINES"); do ip netns del "$(ns_name "$i")" 2>/dev/null; done
  # The cluster keeps objects in memory: this test's go when it ends (listed 1000 at a time).
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    keys=$(s3_keys "$BUCKET" "" 2>/dev/null)
    [[ -n $keys ]] || break
    for k in $keys; do s3 DELETE "$BUCKET/$k" >/dev/null 2>&1; done
  done
  s3 DELETE "$BUCKET" >/dev/null 2>&1
  (exit $rc)
  _cleanup
}
trap teardown EXIT

# in_group CMD...: CMD in the background as a process group of its own (setsid
# execs: a background child of this shell is no group leader), so teardown
# ends it with everything it started.
in_group() {
  setsid "$@" &
  GROUPS_TO_KILL+=($!)
}

# machine I DIR URL ENDPOINT END: one machine's loop, run in its namespace.
# Until END (epoch seconds): append a line to its own log.txt, write a new
# latest.bin, commit the branch's tree with its own folder replaced by those
# (export, import), push; a push refused or lost (exit 4) pulls, which replays
# the commit on the new head, and pushes again. Each push that lands is a line
# "HEAD MESSAGE ATTEMPTS" of DIR/landed; each loss a line of DIR/lost. Any
# other failure ends it with DIR/error.
machine() {
  local i=$1 dir=$2 end=$5 n=0 attempts rc head
  S() { "$STRATA_BIN" --store "$dir/store" "$@"; }
  die() { echo "machine $i: $*" >"$dir/error"; cat "$dir/cmd.err" >>"$dir/error" 2>/dev/null; exit 1; }
  S init "$dir/store" >/dev/null 2>"$dir/cmd.err" || die "init"
  S remote add origin "$3" --endpoint "$4" --timeout 5 >/dev/null 2>"$dir/cmd.err" || die "remote add"
  S pull origin main >/dev/null 2>"$dir/cmd.err" || die "first pull"
  mkdir -p "$dir/own"
  while (( $(date +%s) < end )); do
    n=$((n + 1))
    printf 'machine %d commit %d\n' "$i" "$n" >>"$dir/own/log.txt"
    head -c 65536 /dev/urandom >"$dir/own/latest.bin"
    rm -rf "$dir/tree"
    S export main "$dir/tree" >/dev/null 2>"$dir/cmd.err" || die "export of commit $n's base"
    rm -rf "$dir/tree/m$i"
    cp -a "$dir/own" "$dir/tree/m$i"
    S import "$dir/tree" --branch main -m "m$i c$n" >/dev/null 2>"$dir/cmd.err" || die "import of commit $n"
    attempts=0
    while :; do
      attempts=$((attempts + 1))
      rc=0
      S push origin main --json >"$dir/push.json" 2>"$dir/cmd.err" || rc=$?
      if (( rc == 0 )); then
        head=$(sed -n 's/.*"head": *"\([0-9a-f]*\)".*/\1/p' "$dir/push.json")
        [[ -n $head ]] || die "push printed no head: $(cat "$dir/push.json")"
        echo "$head m$i c$n $attempts" >>"$dir/landed"
        break
      fi
      (( rc == 4 )) || die "push of commit $n failed with exit $rc"
      echo "m$i c$n $(grep -o 'pull first\|lost a race' "$dir/cmd.err" | head -n 1)" >>"$dir/lost"
      (( attempts < 1000 )) || die "commit $n lost 1000 races"
      S pull origin main >/dev/null 2>"$dir/cmd.err" || die "pull after a lost push of commit $n"
    done
  done
}
export -f machine

step "a seed commit on the remote branch; gc, forget and a watcher each with a store of their own"
mkdir -p "$WORK/seed"
echo "shared" >"$WORK/seed/README"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata remote add origin "$URL" --endpoint "$EP" --create-bucket --timeout 5
expect_ok strata import "$WORK/seed" --branch main -m seed
expect_ok strata push origin main
for role in gc forget watch; do
  expect_ok "$STRATA_BIN" init "$WORK/$role"
  expect_ok "$STRATA_BIN" --store "$WORK/$role" remote add origin "$URL" --endpoint "$EP" --timeout 5
done

step "$MACHINES network namespaces, each reaching the gateway through a veth pair and a relay"
listen=()
for i in $(seq "$MACHINES"); do
  ns=$(ns_name "$i")
  host_if="mmh$i-$$" ns_if="mmn$i-$$"
  expect_ok ip netns add "$ns"
  expect_ok ip link add "$host_if" type veth peer name "$ns_if"
  expect_ok ip link set "$ns_if" netns "$ns"
  expect_ok ip addr add "10.$OCTET.$i.1/30" dev "$host_if"
  expect_ok ip link set "$host_if" up
  expect_ok ip -n "$ns" addr add "10.$OCTET.$i.2/30" dev "$ns_if"
  expect_ok ip -n "$ns" link set "$ns_if" up
  expect_ok ip -n "$ns" link set lo up
  listen+=(--listen "10.$OCTET.$i.1:$PORT")
done
in_group python3 "$(dirname "$0")/tcp_relay.py" "${listen[@]}" --to "127.0.0.1:$PORT" >"$WORK/relay.out" 2>&1
for _ in $(seq 100); do grep -q ready "$WORK/relay.out" && break; sleep 0.1; done
grep -q ready "$WORK/relay.out" || fail "the relay did not start: $(cat "$WORK/relay.out")"
# Each namespace is a network of its own: the gateway's loopback address is not there.
expect_fail ip netns exec "$(ns_name 1)" curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$PORT/"
expect_ok ip netns exec "$(ns_name 1)" curl -s --max-time 2 -o /dev/null "http://10.$OCTET.1.1:$PORT/"

step "$MACHINES machines commit and push to main for $RUN_SECONDS s; gc and forget run meanwhile"
end=$(( $(date +%s) + RUN_SECONDS ))
machine_pids=()
for i in $(seq "$MACHINES"); do
  mkdir -p "$WORK/m$i"
  : >"$WORK/m$i/landed"
  : >"$WORK/m$i/lost"
  in_group ip netns exec "$(ns_name "$i")" bash -c 'machine "$@"' _ \
    "$i" "$WORK/m$i" "$URL" "http://10.$OCTET.$i.1:$PORT" "$end"
  machine_pids+=("${GROUPS_TO_KILL[-1]}")
done
machines_running() {
  local p
  for p in "${machine_pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
  return 1
}
# The landed heads so far, one a line (read before the history they must be in).
landed_heads() { cat "$WORK"/m*/landed | cut -d' ' -f1 | sort -u; }
gc_runs=0 forget_runs=0 watches=0
next_forget=$(( $(date +%s) + 10 ))
while machines_running; do
  # A machine that failed ends the test at once, with what it said.
  for f in "$WORK"/m*/error; do [[ -e $f ]] && fail "$(cat "$f")"; done
  "$STRATA_BIN" --store "$WORK/gc" gc --remote origin --grace 6 --json >"$WORK/gc-$gc_runs.json" 2>"$WORK/gc.err" ||
    fail "gc --remote failed while the machines pushed: $(cat "$WORK/gc.err")"
  gc_runs=$((gc_runs + 1))
  if (( $(date +%s) >= next_forget )); then
    "$STRATA_BIN" --store "$WORK/forget" --remote origin forget --branch main --keep-last "$KEEP_LAST" --json \
      >"$WORK/forget-$forget_runs.json" 2>"$WORK/forget.err" ||
      fail "forget --remote failed while the machines pushed: $(cat "$WORK/forget.err")"
    forget_runs=$((forget_runs + 1))
    next_forget=$(( $(date +%s) + 10 ))
  fi
  # No push reported as landed is ever missing from the history.
  landed_heads >"$WORK/landed-now"
  "$STRATA_BIN" --store "$WORK/watch" --remote origin log main --json >"$WORK/log-now.json" 2>"$WORK/watch.err" ||
    fail "log of the remote failed: $(cat "$WORK/watch.err")"
  python3 - "$WORK/landed-now" "$WORK/log-now.json" <<'EOF' || fail "a landed push went missing from the history"
import json, sys
landed = set(open(sys.argv[1]).read().split())
history = {c["id"] for c in json.load(open(sys.argv[2]))}
missing = landed - history
if missing:
    sys.exit(f"landed but not in the history: {sorted(missing)}")
EOF
  watches=$((watches + 1))
done
for i in $(seq "$MACHINES"); do
  wait "${machine_pids[$((i - 1))]}" || fail "$(cat "$WORK/m$i/error" 2>/dev/null || echo "machine $i failed")"
done

step "the history is one line of exactly the landed commits, each once; every loser landed later"
expect_ok strata --remote origin log main --json
cp "$OUT" "$WORK/log-final.json"
cat "$WORK"/m*/landed >"$WORK/landed-all"
cat "$WORK"/m*/lost >"$WORK/lost-all"
python3 - "$WORK/landed-all" "$WORK/lost-all" "$WORK/log-final.json" "$MACHINES" <<'EOF' || fail "the history does not match the pushes that landed"
import json, sys
landed = [line.split() for line in open(sys.argv[1]) if line.strip()]
lost = [line.split()[:2] for line in open(sys.argv[2]) if line.strip()]
log = json.load(open(sys.argv[3]))
machines = int(sys.argv[4])
errors = []
# One line: from the one commit that is no other's parent, each commit's only
# parent leads to the next, through every commit of the history, to the seed.
ids = {c["id"]: c for c in log}
tips = set(ids) - {p for c in log for p in c["parents"]}
line = []
if len(tips) != 1:
    errors.append(f"{len(tips)} commits are no other's parent")
else:
    at = tips.pop()
    while at in ids and len(line) <= len(log):
        line.append(ids[at])
        parents = ids[at]["parents"]
        if len(parents) > 1:
            errors.append(f"{at[:12]} has {len(parents)} parents")
        at = parents[0] if parents else None
    if len(line) != len(log) or line[-1]["message"] != "seed":
        errors.append(f"the line from the tip holds {len(line)} of {len(log)} commits and ends at "
                      f"{line[-1]['message']!r}, not the seed")
by_id = {c["id"]: c for c in log if c["message"] != "seed"}
heads = [h for h, *_ in landed]
if len(set(heads)) != len(heads):
    errors.append("one head was reported as landed twice")
if set(heads) != set(by_id):
    errors.append(f"{len(set(by_id) - set(heads))} commits in the history that no push reported, "
                  f"{len(set(heads) - set(by_id))} reported but not in the history")
for h, machine, commit, _ in landed:
    if h in by_id and by_id[h]["message"] != f"{machine} {commit}":
        errors.append(f"{h[:12]} landed as {machine} {commit} but reads {by_id[h]['message']!r}")
messages = [c["message"] for c in log]
if len(set(messages)) != len(messages):
    errors.append("a commit message appears twice: a replay landed twice")
# Every push that lost landed later, as a later attempt of the same commit.
landed_names = {(m, c) for _, m, c, _ in landed}
for m, c in lost:
    if (m, c) not in landed_names:
        errors.append(f"{m} {c} lost a race and never landed")
per_machine = {m for _, m, _, _ in landed}
if len(per_machine) != machines:
    errors.append(f"only {len(per_machine)} of {machines} machines landed a commit")
if not lost:
    errors.append("no push lost a race: the machines did not race")
if errors:
    sys.exit("\n".join(errors[:20]))
print(f"{len(landed)} pushes landed, {len(lost)} lost a race and landed later; "
      f"most attempts for one commit: {max(int(a) for *_, a in landed)}")
EOF

step "gc and forget did their work meanwhile; the head holds every machine's last files; fsck is clean"
# A last gc with everything settled.
expect_ok strata gc --remote origin --grace 1 --json
cp "$OUT" "$WORK/gc-$gc_runs.json"
python3 - "$WORK" "$gc_runs" "$forget_runs" <<'EOF' || fail "gc or forget did nothing while the machines pushed"
import json, sys
work, gcs, forgets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gc = [json.load(open(f"{work}/gc-{k}.json")) for k in range(gcs + 1)]
fg = [json.load(open(f"{work}/forget-{k}.json")) for k in range(forgets)]
packs = sum(g["packs_deleted"] for g in gc)
forgotten = sum(f["commits_forgotten"] for f in fg)
print(f"{gcs} gc runs meanwhile deleted {packs} packs ({sum(g['bytes_deleted'] for g in gc)} bytes), "
      f"waiting for {sum(g['leases_waited'] for g in gc)} writers; {forgets} forget runs forgot {forgotten} commits",
      file=sys.stderr)
if not forgets or forgotten == 0:
    sys.exit("forget forgot nothing")
if packs == 0:
    sys.exit("no gc deleted a pack")
EOF
rm -rf "$WORK/expected" "$WORK/out"
cp -a "$WORK/seed" "$WORK/expected"
for i in $(seq "$MACHINES"); do cp -a "$WORK/m$i/own" "$WORK/expected/m$i"; done
expect_ok strata --remote origin export main "$WORK/out"
assert_same_content "$WORK/expected" "$WORK/out"
expect_ok strata --remote origin fsck --json
json_true 'd["ok"] and d["missing"] == [] and d["damaged"] == []'
echo "$watches looks at the history while the machines pushed found every landed push in it" >&2
