#!/usr/bin/env bash
# tests/bench/fake_suite.sh — a stand-in benchmark suite for tests/bench/run_cleanup.sh.
#
# bench/run runs it like a real suite (--rounds 1 --out DIR [--quick]); what it
# does depends on the name bench/run gives it (BENCH_SUITE):
#   fake-ok     writes raw.tsv (generic columns) with made-up values and exits 0
#   fake-fail   mounts a tmpfs and starts two daemons (one escaped into a session of its
#               own and recorded with bench_track_pid, one left in its process group),
#               then dies of SIGKILL: its own cleanup never runs
#   fake-hang   the same set-up, then waits (for the test to stop bench/run)
# It writes what it started to ${FAKE_STATE}/<suite>-r<round>.{pids,mounts} and
# touches ${FAKE_STATE}/<suite>-r<round>.ready once it is all set up.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../../bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../bench/lib.sh"

usage() { bench_usage 2 14; }
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  bench_die "unknown argument: $1"
done
: "${FAKE_STATE:?}" "${BENCH_SUITE:?}" "${BENCH_ROUND:?}"
state=${FAKE_STATE}/${BENCH_SUITE}-r${BENCH_ROUND}
cleanup_install_trap
bench_results_dir fake

case "${BENCH_SUITE}" in
  fake-ok)
    printf 'round\tarm\tphase\tvalue\tunit\tbetter\n1\tnative\tcreate\t%s\tops/s\thigher\n1\tstrata\tcreate\t%s\tops/s\thigher\n1\tnative\tuntar\t2\ts\tlower\n1\tstrata\tuntar\t1\ts\tlower\n' \
      $((100 * BENCH_ROUND)) 150 >"${OUT}/raw.tsv"
    printf 'cache_fake\twarm\n' >"${OUT}/meta.tsv"
    bench_log "fake-ok round ${BENCH_ROUND} done"
    exit 0
    ;;
  fake-fail | fake-hang) ;;
  *) bench_die "unknown fake suite ${BENCH_SUITE}" ;;
esac

bench_scratch fake
mkdir -p "${SCRATCH}/mnt"
bench_track_mount "${SCRATCH}/mnt"
mount -t tmpfs -o size=1m fake "${SCRATCH}/mnt"
echo "${SCRATCH}/mnt" >"${state}.mounts"
# A daemon in a session of its own (as a FUSE daemon that detaches would be):
# only bench_track_pid lets bench/run find it.
setsid sleep 300 >/dev/null 2>&1 &
escaped=$!
bench_track_pid "${escaped}"
# One more in the suite's own process group.
sleep 301 >/dev/null 2>&1 &
grouped=$!
printf '%s\n' "${escaped}" "${grouped}" >"${state}.pids"
touch "${state}.ready"
if [[ "${BENCH_SUITE}" == fake-fail ]]; then
  bench_log "fake-fail: dying mid-way"
  kill -KILL $$
fi
bench_log "fake-hang: waiting"
sleep 600
