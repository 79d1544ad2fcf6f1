#!/usr/bin/env bash
# Observability of a mount: `strata mount --metrics` serves the daemon's
# counters in Prometheus text format over HTTP (scraped with curl, checked by
# promtool), the counters move with the work done, and the endpoint refuses
# what it does not serve; bad addresses are usage errors, a port in use fails
# the mount with nothing mounted. `strata stats --watch` away from a terminal
# prints one block per look, with the counters moving.
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v curl >/dev/null || fail "curl is not installed (scripts/install-deps.sh installs it)"
command -v promtool >/dev/null || fail "promtool is not installed (scripts/install-deps.sh installs prometheus)"
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

# A port nobody listens on now (the kernel's choice).
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT/metrics"

# sample FILE NAME{LABELS}: the value of that one sample in a scrape.
sample() {
  local v
  v=$(awk -v k="$2" '$1 == k {print $2}' "$1")
  [[ -n $v ]] || fail "no sample $2 in $1"
  echo "$v"
}

step "bad addresses are usage errors, and mount nothing"
expect_ok "$STRATA_BIN" init "$STORE"
for bad in "" 127.0.0.1 127.0.0.1:0 127.0.0.1:70000 localhost:http 0.0.0.0:$PORT 192.0.2.1:$PORT "[::]:$PORT" \
           example.org:$PORT; do
  expect_exit 2 strata mount --new --metrics "$bad" "$MP"
  expect_stderr_matches "metrics"
done
expect_exit 2 strata mount --new --metrics 0.0.0.0:$PORT "$MP"
expect_stderr_matches "loopback"
expect_exit 2 strata mount --new --metrics 127.0.0.1:99999 "$MP"
expect_stderr_matches "1 to 65535"
grep -q " $MP " /proc/mounts && fail "a refused mount mounted"
expect_ok strata workspace list --json
json_true 'd == []'

step "a mount serves its counters at /metrics"
expect_ok strata mount --new --name one --metrics "127.0.0.1:$PORT" "$MP"
mkdir "$MP/dir"
for i in 1 2 3 4 5; do printf 'file %s\n' "$i" >"$MP/dir/f$i"; done
cat "$MP/dir/f1" >/dev/null
ls -l "$MP/dir" >/dev/null
stat "$MP/missing" 2>/dev/null && fail "a missing file was found"
rmdir "$MP/dir" 2>/dev/null && fail "a directory that holds files was removed"
expect_ok strata commit "$MP" -m first --branch main
curl -fsS -o "$WORK/m1" -D "$WORK/h1" "$URL" || fail "curl of $URL failed"
grep -qi '^content-type: text/plain; version=0.0.4' "$WORK/h1" || fail "not the Prometheus text format: $(cat "$WORK/h1")"
promtool check metrics <"$WORK/m1" >"$WORK/promtool.out" 2>&1 || fail "promtool check metrics: $(cat "$WORK/promtool.out")"
[[ ! -s "$WORK/promtool.out" ]] || fail "promtool found problems: $(cat "$WORK/promtool.out")"
lookups=$(sample "$WORK/m1" 'strata_fuse_requests_total{op="lookup"}')
writes=$(sample "$WORK/m1" 'strata_fuse_requests_total{op="write"}')
(( lookups > 0 && writes >= 5 )) || fail "lookup=$lookups write=$writes after that work"
(( $(sample "$WORK/m1" 'strata_fuse_request_errors_total{op="rmdir"}') == 1 )) || fail "the failed rmdir is not counted"
[[ $(sample "$WORK/m1" 'strata_fuse_request_duration_seconds_count{op="write"}') == "$writes" ]] ||
  fail "the write histogram's count is not the write count"
[[ $(sample "$WORK/m1" 'strata_fuse_request_duration_seconds_bucket{op="write",le="+Inf"}') == "$writes" ]] ||
  fail "the +Inf bucket is not the count"
sample "$WORK/m1" 'strata_fuse_transport_info{transport="libfuse"}' | grep -qx 1 || fail "no transport info"
sample "$WORK/m1" 'strata_commits_total{result="committed"}' | grep -qx 1 || fail "the commit is not counted"
sample "$WORK/m1" 'strata_workspace_info{workspace="one",read_only="false"}' | grep -qx 1 || fail "no workspace info"
(( $(sample "$WORK/m1" 'strata_workspace_written_bytes_total') == 35 )) || fail "35 bytes were written"
(( $(sample "$WORK/m1" 'strata_commit_files_captured_total') == 5 )) || fail "5 files were committed"
# The commit's phases, each by name, took time in all; the chunk cache and
# its fetches from the store are there, at 0 or more.
phase_seconds=()
for phase in cut capture trees publish rebase; do
  phase_seconds+=("$(sample "$WORK/m1" "strata_commit_phase_seconds_total{phase=\"$phase\"}")")
done
python3 -c 'import sys; sys.exit(0 if sum(map(float, sys.argv[1:])) > 0 else 1)' "${phase_seconds[@]}" ||
  fail "the commit's phases took no time: ${phase_seconds[*]}"
for name in 'strata_chunk_cache_requests_total{result="hit"}' 'strata_chunk_cache_requests_total{result="miss"}' \
            strata_chunk_fetches_total strata_chunk_fetch_errors_total 'strata_store_read_seconds_total{step="pread"}'; do
  [[ $(sample "$WORK/m1" "$name") =~ ^[0-9.e+-]+$ ]] || fail "$name is not a number"
done

step "the counters move with more work"
for i in 1 2 3; do printf 'more %s\n' "$i" >"$MP/g$i"; done
curl -fsS -o "$WORK/m2" "$URL" || fail "second scrape failed"
(( $(sample "$WORK/m2" 'strata_fuse_requests_total{op="write"}') > writes )) || fail "the write count did not move"
# A new file is a mknod and an open, or a create, as the kernel chooses.
(( $(sample "$WORK/m2" 'strata_fuse_requests_total{op="mknod"}') + $(sample "$WORK/m2" 'strata_fuse_requests_total{op="create"}') >= 8 )) ||
  fail "the new files are not all counted"

step "only GET and HEAD of /metrics are served"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/") == 404 ]] || fail "/ is not 404"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metricsx") == 404 ]] || fail "/metricsx is not 404"
[[ $(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL") == 405 ]] || fail "POST is not 405"
[[ $(curl -s -o /dev/null -w '%{http_code}' -I "$URL") == 200 ]] || fail "HEAD is not 200"
# A client that sends nothing is dropped after the request timeout; the endpoint serves on.
python3 - "$PORT" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
time.sleep(5)
PY
BG_PIDS+=($!)
sleep 0.2
curl -fsS -m 10 -o /dev/null "$URL" || fail "a silent client kept the endpoint from serving"

step "a port in use fails the second mount clearly, mounting nothing"
expect_fail strata mount --new --name two --metrics "127.0.0.1:$PORT" "$MP2"
expect_stderr_matches "127.0.0.1:$PORT.*in use"
grep -q " $MP2 " /proc/mounts && fail "the mount with a port in use mounted"
expect_ok strata workspace list --json
json_true '[w["name"] for w in d] == ["one"]'

step "stats --watch away from a terminal: one block per look, the counters moving"
expect_exit 2 strata stats --watch
expect_exit 2 strata stats "$MP" --interval 1
expect_exit 2 strata stats "$MP" --watch --json
expect_exit 2 strata stats "$MP" --watch --interval 0
( for i in $(seq 1 40); do printf 'w%s\n' "$i" >"$MP/watch$i"; sleep 0.05; done ) &
writer=$!
expect_ok strata stats "$MP" --watch --interval 0.5 --count 4
wait "$writer"
cp "$OUT" "$WORK/watch.out"
[[ $(grep -c '^OPERATION ' "$WORK/watch.out") == 4 ]] || fail "not 4 blocks: $(cat "$WORK/watch.out")"
grep -q $'\033' "$WORK/watch.out" && fail "terminal control sequences away from a terminal"
writes=$(awk '$1 == "write" {print $2}' "$WORK/watch.out")
[[ $(echo "$writes" | wc -l) == 4 ]] || fail "write is not in every block: $writes"
(( $(echo "$writes" | tail -n 1) > $(echo "$writes" | head -n 1) )) || fail "the write count did not move: $writes"
# The first look has no rate; later ones do, and a moving counter's is above zero.
awk '$1 == "write" {print $3}' "$WORK/watch.out" | head -n 1 | grep -qx -- - || fail "the first look shows a rate"
awk '$1 == "write" {print $3}' "$WORK/watch.out" | sed -n 2p | grep -qE '^[0-9]+\.[0-9]$' || fail "no rate in the second look"

step "stats --watch on a terminal: the view redrawn in place, look after look"
command -v script >/dev/null || fail "script is not installed (util-linux)"
script -qefc "$(printf '%q ' "$STRATA_BIN" --store "$STORE" stats "$MP" --watch --interval 0.2 --count 3)" /dev/null \
  </dev/null >"$WORK/watch.tty" 2>&1 || fail "stats --watch on a terminal failed: $(cat -v "$WORK/watch.tty")"
# Each look homes the cursor and clears the screen, then draws the counters.
[[ $(grep -o $'\033\[H\033\[2J' "$WORK/watch.tty" | wc -l) == 3 ]] ||
  fail "not 3 redraws in place: $(cat -v "$WORK/watch.tty")"
[[ $(grep -c '^OPERATION ' "$WORK/watch.tty") == 3 ]] || fail "not 3 views: $(cat -v "$WORK/watch.tty")"
grep -q "Ctrl-C ends" "$WORK/watch.tty" || fail "the view does not say how to end it: $(cat -v "$WORK/watch.tty")"

step "stats --watch ends on SIGINT (Ctrl-C) with status 0"
# The binary itself, not the strata function: the signal goes to it.
"$STRATA_BIN" --store "$STORE" stats "$MP" --watch --interval 0.2 >"$WORK/watch2.out" 2>&1 &
watcher=$!
BG_PIDS+=("$watcher")
sleep 1
kill -INT "$watcher"
rc=0
wait "$watcher" || rc=$?
[[ $rc == 0 ]] || fail "stats --watch ended with $rc on SIGINT: $(cat "$WORK/watch2.out")"
(( $(grep -c '^OPERATION ' "$WORK/watch2.out") >= 2 )) || fail "fewer than 2 looks in a second: $(cat "$WORK/watch2.out")"

step "the endpoint goes with the mount"
expect_ok strata umount "$MP"
curl -s -o /dev/null "$URL" && fail "the endpoint outlived its mount"
true
