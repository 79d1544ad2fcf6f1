#!/usr/bin/env bash
# bench/retention/run.sh — retention on a remote (Ceph RGW): strata forget + gc --remote of a year of daily
# commits, against restic forget --prune of the same days, in the same run.
#
# Usage: bench/retention/run.sh [--quick] [--days N] [--files F] [--rounds R] [--push-meanwhile] [--out DIR]
#
#   --days N     daily versions of the tree (default 365; quick 90)
#   --files F    files of the first day's tree (default 2000; quick 300)
#   --rounds R   rounds (default 3; quick 1); each builds both histories anew, the arms' order rotated
#   --out DIR    results folder (default bench/results/retention-<timestamp>)
#   --push-meanwhile  while strata's forget and gc run, another machine (a store of its own) commits
#                a new file and pushes it to the branch `other` of the same remote, again and again;
#                every push must land, and fsck of the remote must be clean after (restic's exclusive
#                lock forbids a backup during its prune, so its arm runs alone)
#
# Environment: STRATA_BIN (default <repo>/build/src/cli/strata); GRACE (default 5): the seconds of
# gc --remote's grace; the remote's request timeout is set below it (GRACE-1), as the protocol needs.
#
# The suite starts its own single-node Ceph (scripts/ceph.sh: memstore OSD, radosgw on 127.0.0.1).
# A round builds one changing tree day by day (bench/retention/tree_day.py: 2% of the files rewritten,
# 0.5% added, 0.3% deleted, a 256 KiB dump.bin new every day), dated one day apart from 2025-01-01
# 12:00 UTC, and after each day, not timed:
#   strata   import --date (a local store), then push to s3://strata-bench-retention/PID/rN/strata
#   restic   backup --time into the repository s3:ENDPOINT/strata-bench-retention/PID/rN/restic
# Then, timed, each arm with RGW's request counters (admin socket) and the bytes under its prefix
# taken before and after, and the kept set checked to be the same size for both:
#   strata   strata --remote origin forget --branch main --keep-daily 7 --keep-weekly 4 --keep-monthly 12
#            --utc, then strata gc --remote origin --grace GRACE (other machines may push meanwhile)
#   restic   restic forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --prune (TZ=UTC; it holds an
#            exclusive lock: no backup may run meanwhile)
# strata's wall time includes the grace period gc waits for in-flight writers, idle time; the
# table also gives it without that wait ("busy"), and how much of it forget took.
# Output: raw.tsv, table.md (printed), meta.tsv, logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { bench_usage 2 17; }

DAYS='' FILES='' PUSH_MEANWHILE=0
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --days) DAYS=$(bench_optarg "$@"); shift ;;
    --files) FILES=$(bench_optarg "$@"); shift ;;
    --push-meanwhile) PUSH_MEANWHILE=1 ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  DAYS=${DAYS:-90} FILES=${FILES:-300} ROUNDS=${ROUNDS:-1}
else
  DAYS=${DAYS:-365} FILES=${FILES:-2000} ROUNDS=${ROUNDS:-3}
fi
GRACE=${GRACE:-5}
bench_check_int --days "${DAYS}" --files "${FILES}" --rounds "${ROUNDS}" GRACE "${GRACE}"
((GRACE >= 2)) || bench_die "GRACE must be at least 2 (the request timeout is GRACE-1)"
readonly ARMS=(strata restic)
readonly POLICY=(--keep-daily 7 --keep-weekly 4 --keep-monthly 12)

require_root
bench_install restic:restic curl:curl
for cmd in ceph-mon ceph-osd radosgw ceph python3; do
  command -v "${cmd}" >/dev/null || bench_die "${cmd} is missing (scripts/install-deps.sh installs Ceph)"
done
bench_find_bin STRATA_BIN src/cli/strata strata

cleanup_install_trap
bench_results_dir retention
bench_scratch retention
LOGS=${OUT}/logs
RAW=${OUT}/raw.tsv
printf 'round\tposition\tarm\tseconds\tbusy_seconds\tforget_seconds\trequests\tgets\tputs\tother_requests\tbytes_before\tbytes_after\tbytes_deleted\tkept\tpushes_meanwhile\n' >"${RAW}"

CEPH_DIR=${SCRATCH}/ceph
stop_ceph() {
  [[ -d "${CEPH_DIR}" ]] || return 0
  "${REPO_ROOT}/scripts/ceph.sh" stop "${CEPH_DIR}" || true
}
cleanup_register stop_ceph
bench_log "starting Ceph (scripts/ceph.sh)"
"${REPO_ROOT}/scripts/ceph.sh" start "${CEPH_DIR}" >"${LOGS}/ceph-start.log" 2>&1 ||
  bench_die "scripts/ceph.sh start failed; see ${LOGS}/ceph-start.log"
# shellcheck disable=SC1091
source "${CEPH_DIR}/env"
ENDPOINT=${STRATA_S3_ENDPOINT}
BUCKET=strata-bench-retention
RGW_ASOK=${CEPH_DIR}/run/client.rgw.a.asok
export RESTIC_PASSWORD=bench RESTIC_CACHE_DIR=${SCRATCH}/restic-cache TZ=UTC
export XDG_CACHE_HOME=${SCRATCH}/xdg-cache

bench_meta_open "${OUT}/meta.tsv"
bench_meta_env
meta days "${DAYS}"
meta files "${FILES}"
meta grace_s "${GRACE}"
meta restic_version "$(restic version | head -n 1)"
meta ceph_version "$(ceph --version 2>/dev/null | head -n 1)"
meta policy "${POLICY[*]}"
meta push_meanwhile "${PUSH_MEANWHILE}"
meta cmd_strata "strata --remote origin forget --branch main ${POLICY[*]} --utc --json; strata gc --remote origin --grace ${GRACE} --json"
meta cmd_restic "restic -r s3:${ENDPOINT}/${BUCKET}/PID/rN/restic forget ${POLICY[*]} --prune --json"

# prefix_bytes PREFIX: the bytes of every object under PREFIX/ (ListObjectsV2, every page).
prefix_bytes() {
  python3 - "${BUCKET}" "$1/" <<'PY'
import os, subprocess, sys, urllib.parse, xml.etree.ElementTree as ET
bucket, prefix = sys.argv[1], sys.argv[2]
env, token, total = os.environ, None, 0
while True:
    q = {"list-type": "2", "prefix": prefix}
    if token:
        q["continuation-token"] = token
    query = "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in sorted(q.items()))
    page = subprocess.run(["curl", "-sS", "--fail", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                           "--aws-sigv4", f"aws:amz:{env['AWS_REGION']}:s3",
                           "--user", f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}",
                           f"{env['STRATA_S3_ENDPOINT']}/{bucket}?{query}"],
                          check=True, capture_output=True).stdout
    root = ET.fromstring(page)
    ns = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    t = (lambda n: f"{{{ns}}}{n}") if ns else (lambda n: n)
    total += sum(int(c.findtext(t("Size"))) for c in root.findall(t("Contents")))
    nxt = root.find(t("NextContinuationToken"))
    if root.findtext(t("IsTruncated")) != "true" or nxt is None:
        break
    token = nxt.text
print(total)
PY
}

# rgw_counters: "requests gets puts" so far, from radosgw's admin socket.
rgw_counters() {
  timeout 20 ceph --admin-daemon "${RGW_ASOK}" perf dump | python3 -c '
import json, sys
r = json.load(sys.stdin)["rgw"]
print(r["req"], r["get"], r["put"])'
}

# build_history ROUND: both histories, day by day (not timed).
build_history() {
  local round=$1 day date src=${SCRATCH}/src-r$1 store=${SCRATCH}/store-r$1
  local repo=s3:${ENDPOINT}/${BUCKET}/$$/r$1/restic log=${LOGS}/r$1-build.log
  "${STRATA_BIN}" --store "${store}" init >"${log}" 2>&1
  "${STRATA_BIN}" --store "${store}" remote add origin "s3://${BUCKET}/$$/r${round}/strata" --endpoint "${ENDPOINT}" \
    --timeout $((GRACE - 1)) --create-bucket >>"${log}" 2>&1 || bench_die "remote add failed; see ${log}"
  restic -r "${repo}" init >>"${log}" 2>&1 || bench_die "restic init failed; see ${log}"
  for ((day = 1; day <= DAYS; day++)); do
    python3 "${SCRIPT_DIR}/tree_day.py" "${src}" "${day}" "${round}" "${FILES}"
    date=$(date -u -d "2025-01-01 12:00:00 UTC + $((day - 1)) days" +%Y-%m-%dT%H:%M:%SZ)
    "${STRATA_BIN}" --store "${store}" import "${src}/tree" --branch main -m "day ${day}" --date "${date}" \
      >>"${log}" 2>&1 || bench_die "strata import of day ${day} failed; see ${log}"
    "${STRATA_BIN}" --store "${store}" push origin main >>"${log}" 2>&1 ||
      bench_die "strata push of day ${day} failed; see ${log}"
    # restic reads the directory by the same path every day (one host, one path: one group).
    restic -r "${repo}" backup "${src}/tree" --host bench --time "$(date -u -d "${date}" "+%Y-%m-%d %H:%M:%S")" --quiet >>"${log}" 2>&1 ||
      bench_die "restic backup of day ${day} failed; see ${log}"
    ((day % 30)) || bench_log "round ${round}: day ${day} of ${DAYS}"
  done
}

# pusher ROUND STOP: the other machine's loop (a store of its own on the same remote), until the file STOP
# exists: a new file committed, pushed to `other`. Prints the pushes that landed; any failure ends it non-zero.
pusher() {
  local store=${SCRATCH}/pusher-r$1 tree=${SCRATCH}/pusher-tree-r$1 n=0 log=${LOGS}/r$1-pusher.log
  while [[ ! -e $2 ]]; do
    n=$((n + 1))
    head -c 65536 /dev/urandom >"${tree}/push-${n}.bin"
    "${STRATA_BIN}" --store "${store}" import "${tree}" --branch other -m "push ${n}" >>"${log}" 2>&1 || return 1
    "${STRATA_BIN}" --store "${store}" push origin other >>"${log}" 2>&1 || return 1
  done
  echo "$((n))"
}

# pusher_ready ROUND: the other machine's store, with a first push (not timed).
pusher_ready() {
  local store=${SCRATCH}/pusher-r$1 tree=${SCRATCH}/pusher-tree-r$1 log=${LOGS}/r$1-pusher.log
  mkdir -p "${tree}"
  head -c 65536 /dev/urandom >"${tree}/push-0.bin"
  { "${STRATA_BIN}" --store "${store}" init &&
    "${STRATA_BIN}" --store "${store}" remote add origin "s3://${BUCKET}/$$/r$1/strata" --endpoint "${ENDPOINT}" \
      --timeout $((GRACE - 1)) &&
    "${STRATA_BIN}" --store "${store}" import "${tree}" --branch other -m "push 0" &&
    "${STRATA_BIN}" --store "${store}" push origin other; } >"${log}" 2>&1 ||
    bench_die "the other machine's first push failed; see ${log}"
}

# measure ROUND POSITION ARM: one timed retention run.
measure() {
  local round=$1 pos=$2 arm=$3 store=${SCRATCH}/store-r$1 prefix=$$/r$1/$3 json=${LOGS}/r$1-$3
  local before after start mid end b_before b_after busy kept forget_secs pushes=- pusher_pid='' stop
  b_before=$(prefix_bytes "${prefix}")
  before=$(rgw_counters)
  if ((PUSH_MEANWHILE)) && [[ ${arm} == strata ]]; then
    stop=${SCRATCH}/pusher-stop-r${round}
    pusher "${round}" "${stop}" >"${SCRATCH}/pushes-r${round}" &
    pusher_pid=$!
  fi
  start=$(now)
  case ${arm} in
    strata)
      "${STRATA_BIN}" --store "${store}" --remote origin forget --branch main "${POLICY[@]}" --utc --json \
        >"${json}-forget.json" 2>"${json}.err" || bench_die "strata forget failed; see ${json}.err"
      mid=$(now)
      "${STRATA_BIN}" --store "${store}" gc --remote origin --grace "${GRACE}" --json >"${json}-gc.json" \
        2>>"${json}.err" || bench_die "strata gc --remote failed; see ${json}.err"
      ;;
    restic)
      restic -r "s3:${ENDPOINT}/${BUCKET}/${prefix}" forget "${POLICY[@]}" --prune --json >"${json}.json" \
        2>"${json}.err" || bench_die "restic forget --prune failed; see ${json}.err"
      ;;
  esac
  end=$(now)
  if [[ -n ${pusher_pid} ]]; then
    touch "${stop}"
    wait "${pusher_pid}" || bench_die "a push of the other machine failed during gc; see ${LOGS}/r${round}-pusher.log"
    pushes=$(cat "${SCRATCH}/pushes-r${round}")
  fi
  after=$(rgw_counters)
  b_after=$(prefix_bytes "${prefix}")
  if [[ -n ${pusher_pid} ]]; then
    "${STRATA_BIN}" --store "${SCRATCH}/pusher-r${round}" --remote origin fsck >>"${LOGS}/r${round}-pusher.log" 2>&1 ||
      bench_die "fsck of the remote after gc with pushes failed; see ${LOGS}/r${round}-pusher.log"
  fi
  case ${arm} in
    strata)
      kept=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["branches"][0]["kept"]))' \
        "${json}-forget.json")
      busy=$(python3 -c 'import json, sys; print("%.3f" % (float(sys.argv[2]) - json.load(open(sys.argv[1]))["ms"]["wait"] / 1000))' \
        "${json}-gc.json" "$(echo "${end} - ${start}" | bc)")
      forget_secs=$(echo "${mid} - ${start}" | bc)
      ;;
    restic)
      restic -r "s3:${ENDPOINT}/${BUCKET}/${prefix}" snapshots --json >"${json}-snapshots.json" 2>>"${json}.err"
      kept=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "${json}-snapshots.json")
      busy=$(echo "${end} - ${start}" | bc)
      forget_secs=-
      ;;
  esac
  read -r r0 g0 p0 <<<"${before}"
  read -r r1 g1 p1 <<<"${after}"
  local IFS=$'\t'
  printf '%s\n' "${round} ${pos} ${arm} $(echo "${end} - ${start}" | bc) ${busy} ${forget_secs} $((r1 - r0)) $((g1 - g0)) $((p1 - p0)) $((r1 - r0 - (g1 - g0) - (p1 - p0))) ${b_before} ${b_after} $((b_before - b_after)) ${kept} ${pushes}" |
    tr ' ' '\t' >>"${RAW}"
  bench_log "round ${round} ${arm}: $(tail -n 1 "${RAW}" | cut -f4) s, $((r1 - r0)) requests, $((b_before - b_after)) B deleted, ${kept} kept"
}

for ((round = 1; round <= ROUNDS; round++)); do
  bench_log "round ${round}: building ${DAYS} days of ${FILES} files for strata and restic"
  build_history "${round}"
  if ((PUSH_MEANWHILE)); then pusher_ready "${round}"; fi
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  pos=0
  for arm in "${order[@]}"; do
    pos=$((pos + 1))
    measure "${round}" "${pos}" "${arm}"
  done
  # The same kept versions, by day; strata keeps the oldest commit too while a rule wants more periods
  # than the history holds (restic does so from 0.16 on; Debian 12 has 0.14).
  python3 - "${LOGS}/r${round}-strata-forget.json" "${LOGS}/r${round}-restic-snapshots.json" <<'PY' ||
import datetime, json, sys
day = lambda ns: datetime.datetime.fromtimestamp(ns / 1e9, datetime.timezone.utc).date().isoformat()
strata = {day(c["time"]) for c in json.load(open(sys.argv[1]))["branches"][0]["kept"]}
restic = {s["time"][:10] for s in json.load(open(sys.argv[2]))}
forgotten = {day(c["time"]) for c in json.load(open(sys.argv[1]))["branches"][0]["forgotten"]}
oldest = min(strata | forgotten)
extra, missing = strata - restic, restic - strata
sys.exit(0 if not missing and extra <= {oldest} else f"only strata kept {sorted(extra)}, only restic {sorted(missing)}")
PY
    bench_die "round ${round}: strata and restic kept different versions"
  rm -rf -- "${SCRATCH}/src-r${round}" "${SCRATCH}/store-r${round}" "${SCRATCH}/pusher-r${round}" \
    "${SCRATCH}/pusher-tree-r${round}"
done
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "${RAW}" <<'PY' | tee "${OUT}/table.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = lambda arm, k: statistics.median(float(r[k]) for r in rows if r["arm"] == arm)
rng = lambda arm, k: "%.2f-%.2f" % (min(float(r[k]) for r in rows if r["arm"] == arm),
                                    max(float(r[k]) for r in rows if r["arm"] == arm))
print("| arm | wall s (median, range) | busy s | of which forget s | requests (GET/PUT/other) | MiB before | MiB deleted | kept |")
print("|---|---|---|---|---|---|---|---|")
for arm in ("strata", "restic"):
    forget = "%.2f" % med(arm, "forget_seconds") if arm == "strata" else ""
    print("| %s | %.2f (%s) | %.2f | %s | %d (%d/%d/%d) | %.1f | %.1f | %d |" % (
        arm, med(arm, "seconds"), rng(arm, "seconds"), med(arm, "busy_seconds"), forget, med(arm, "requests"),
        med(arm, "gets"), med(arm, "puts"), med(arm, "other_requests"), med(arm, "bytes_before") / 2**20,
        med(arm, "bytes_deleted") / 2**20, med(arm, "kept")))
pushes = [r["pushes_meanwhile"] for r in rows if r["arm"] == "strata" and r.get("pushes_meanwhile", "-") != "-"]
if pushes:
    print()
    print("Another machine pushed to the same remote during strata's runs: %s pushes landed (per round), fsck of "
          "the remote clean after each; strata's requests and bytes above include that machine's." % ", ".join(pushes))
print()
print("restic / strata: wall %.2fx, busy %.2fx" % (med("restic", "seconds") / med("strata", "seconds"),
                                                   med("restic", "busy_seconds") / med("strata", "busy_seconds")))
PY
