#!/usr/bin/env bash
# tests/bench/run_cleanup.sh — bench/run leaves no mount and no process behind when a
# suite fails mid-way or the run is stopped, and still reports what succeeded.
#
# Uses the stand-in suites of tests/bench/fake_suite.sh (no real benchmark runs):
#   1. fake-ok and fake-fail, 2 rounds: fake-fail mounts a tmpfs, starts two daemons
#      and dies of SIGKILL each round. bench/run must exit 1, list the failed runs,
#      report fake-ok's ratios, and leave no mount, no daemon, no scratch folder.
#   2. fake-hang, stopped by SIGINT (Ctrl-C) and, separately, by SIGTERM while the
#      suite runs: same checks.
# Needs root (mount, and bench/run requires it); exits 77 (skipped) otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUN=${REPO}/bench/run
FAKE=${REPO}/tests/bench/fake_suite.sh
if [[ ${EUID} -ne 0 ]]; then
  echo "SKIP: needs root"
  exit 77
fi

T=$(mktemp -d /var/tmp/bench-run-test.XXXXXX)
STARTED_PIDS=()
finish() {
  local p mp
  # Never leave anything of ours behind, even when a check failed.
  for mp in $(findmnt -rn -o TARGET | awk -v s="${T}" 'index($0, s "/") == 1' | sort -r); do umount -l "${mp}" || true; done
  for p in "${STARTED_PIDS[@]}"; do kill -KILL "${p}" 2>/dev/null || true; done
  rm -rf -- "${T}"
}
trap finish EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# check_clean CASE: nothing mounted below the scratch root, no fake daemon alive,
# the runner's scratch folder gone.
check_clean() {
  local case=$1 mounts p f
  mounts=$(findmnt -rn -o TARGET | awk -v s="${T}/scratch" 'index($0, s "/") == 1' || true)
  [[ -z "${mounts}" ]] || fail "${case}: still mounted: ${mounts}"
  for f in "${T}/state"/*.pids; do
    [[ -e "${f}" ]] || continue
    mapfile -t -O "${#STARTED_PIDS[@]}" STARTED_PIDS <"${f}"
    while read -r p; do
      # Alive and still the fake's sleep (a zombie waiting to be reaped is gone).
      # A few seconds' grace: on a loaded machine a process signalled during
      # the run's cleanup may take a moment to be scheduled and die; a daemon
      # the run forgot (sleep 300) is still there after them.
      local waited
      for ((waited = 0; waited < 50; waited++)); do
        [[ "$(cat "/proc/${p}/comm" 2>/dev/null)" == sleep &&
          "$(sed 's/.*) //' "/proc/${p}/stat" 2>/dev/null | cut -c1)" != Z ]] || break
        sleep 0.1
      done
      if ((waited == 50)); then
        fail "${case}: daemon ${p} from ${f} still runs: $(ps -o pid=,pgid=,stat=,args= -p "${p}")"
      fi
    done <"${f}"
  done
  [[ -z "$(ls -A "${T}/scratch")" ]] || fail "${case}: scratch left: $(ls -A "${T}/scratch")"
}

# bench/run with the fake suites. A background job ignores SIGINT unless told
# otherwise: env restores it, as on a terminal. A simple command, so that in the
# background $! is bench/run's own pid (env execs it).
PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3  # not a slower wrapper (pyenv) found first in PATH
RUN_BENCH=(env --default-signal=INT STRATA_COMMIT=test PYTHON="${PY}" BENCH_SCRATCH_ROOT="${T}/scratch" FAKE_STATE="${T}/state"
  BENCH_EXTRA_SUITES="fake-ok=${FAKE},fake-fail=${FAKE},fake-hang=${FAKE}" "${RUN}")

# --- 1. a suite that fails mid-way ------------------------------------------------
mkdir -p "${T}/scratch" "${T}/state"
rc=0
"${RUN_BENCH[@]}" --rounds 2 --out "${T}/out1" fake-ok fake-fail >"${T}/out1.log" 2>&1 || rc=$?
[[ ${rc} -eq 1 ]] || { cat "${T}/out1.log"; fail "case 1: exit ${rc}, expected 1"; }
for r in 1 2; do
  [[ -e "${T}/state/fake-fail-r${r}.ready" ]] || { cat "${T}/out1.log"; fail "case 1: fake-fail round ${r} did not run"; }
done
check_clean "case 1"
grep -q $'^1\tfake-fail\tfailed\t137\t' "${T}/out1/runs.tsv" || fail "case 1: runs.tsv lacks the failure: $(cat "${T}/out1/runs.tsv")"
grep -q $'^2\tfake-ok\tok\t0\t' "${T}/out1/runs.tsv" || fail "case 1: runs.tsv lacks fake-ok"
grep -q 'round 2 fake-fail: failed (exit 137)' "${T}/out1/table.md" || fail "case 1: table lacks the failure"
# fake-ok: strata 150 ops/s against native 100, 200: ratios 1.5 and 0.75; untar 1 s vs 2 s: 2x.
grep -qF '| create | ops/s | 150 | 1.12× (0.75–1.50) |' "${T}/out1/table.md" ||
  fail "case 1: wrong ratio line in: $(cat "${T}/out1/table.md")"
grep -qF '| untar | s | 1.00 | 2.00× |' "${T}/out1/table.md" || fail "case 1: wrong lower-is-better ratio"
"${PY}" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["cache_state"]["fake-ok"]["cache_fake"] == "warm"' \
  "${T}/out1/results.json" || fail "case 1: results.json"
[[ -s "${T}/out1/chart.svg" ]] || fail "case 1: no chart"
echo "ok: a suite killed mid-way (2 rounds) left nothing behind; the run reported it and the other suite"

# --- 2. the run stopped by Ctrl-C, then by SIGTERM ----------------------------------
for sig in INT TERM; do
  rm -rf -- "${T}/state" && mkdir -p "${T}/state"
  "${RUN_BENCH[@]}" --rounds 1 --out "${T}/out-${sig}" fake-hang >"${T}/out-${sig}.log" 2>&1 &
  pid=$!
  STARTED_PIDS+=("${pid}")
  for ((i = 0; i < 100; i++)); do
    [[ -e "${T}/state/fake-hang-r1.ready" ]] && break
    sleep 0.1
  done
  [[ -e "${T}/state/fake-hang-r1.ready" ]] || { cat "${T}/out-${sig}.log"; fail "${sig}: fake-hang never got ready"; }
  kill "-${sig}" "${pid}"
  rc=0
  for ((i = 0; i < 300; i++)); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "${pid}" 2>/dev/null && fail "${sig}: bench/run still running 30 s after SIG${sig}"
  wait "${pid}" || rc=$?
  expected=$([[ ${sig} == INT ]] && echo 130 || echo 143)
  [[ ${rc} -eq ${expected} ]] || { cat "${T}/out-${sig}.log"; fail "${sig}: exit ${rc}, expected ${expected}"; }
  check_clean "SIG${sig}"
  echo "ok: SIG${sig} during a suite left nothing behind (exit ${rc})"
done
