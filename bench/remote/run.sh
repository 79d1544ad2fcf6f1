#!/usr/bin/env bash
# bench/remote/run.sh — a remote store on S3 (Ceph RGW): push, pull, and a cold read of a remote branch
# through a read-only mount, against plain curl GETs of the same pack objects.
#
# Usage: bench/remote/run.sh [--quick] [--rounds N] [--size-mib M] [--out DIR]
#
#   --quick         256 MiB file, 1 round (a smoke run of a few minutes)
#   --rounds N      rounds (default 3, quick 1); the read arms' order is rotated each round
#   --size-mib M    size of the file (default 1024, quick 256): half random bytes, half base64 text
#   --out DIR       results folder (default bench/results/remote-<timestamp>)
#
# Environment: STRATA_BUILD (default <repo>/build) or STRATA_BIN: the strata binary;
# STRATA_MOUNT_ARGS: extra arguments for `strata mount` (e.g. "--readahead-kib 8192").
#
# The suite starts its own single-node Ceph (scripts/ceph.sh: mon, one memstore OSD, so the
# objects live in RAM, and radosgw on 127.0.0.1) under /var/tmp/strata-bench-remote-<pid>, and
# stops it at exit, also on failure or Ctrl-C. One file is made and imported into a local store
# (branch `bench`). Then, every round, into a fresh prefix s3://strata-bench/<pid>/rN of the bucket
# (nothing of the data is there before):
#   push            `strata push rN bench` from the local store      MiB/s of chunk data (wall time)
#   pull            `strata pull rN bench` into a fresh empty store  MiB/s of chunk data (wall time)
# and three read arms, interleaved, their order rotated each round, each after
# `sync; echo 3 > /proc/sys/vm/drop_caches`:
#   strata-read     a fresh store + `remote add` of the prefix (so the block cache is empty), then
#                   timed: `strata mount --read-only rN/bench MP` and `dd if=MP/FILE of=/dev/null bs=1M`
#                   (the mount loads every pack's index with range GETs, which also bring chunk
#                   data into the block cache: timing the dd alone would hide that work)
#   curl-get        every pack object of the prefix, whole, with one curl process, one after
#                   another over one kept-alive connection (`curl --aws-sigv4 URL1 -o /dev/null URL2 ...`)
#   curl-get-par4   the same with `curl --parallel --parallel-max 4`
# strata-read counts the file's bytes per second (what a reader sees); the curl arms count the
# packs' bytes (what is stored: compressed text, so fewer bytes than the file). The report gives
# both ratios: per file MiB/s, and "same bytes" (pack bytes GETted by strata / its time, against
# curl's). RGW's own counters (admin socket `perf dump`: GETs, bytes sent) are taken around every
# read arm, and `strata stats MP --json` (the daemon's read path) after each strata read.
# At the end of a round the round's objects are deleted and RGW's garbage collector run, so the
# memstore OSD (4 GiB) never fills up.
# Output: raw.tsv, results.json, table.md (printed), meta.tsv, logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${SCRIPT_DIR}/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
QUICK=0 ROUNDS='' SIZE_MIB='' OUT=''
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --rounds) ROUNDS=$(bench_optarg "$@"); shift ;;
    --size-mib) SIZE_MIB=$(bench_optarg "$@"); shift ;;
    --out) OUT=$(bench_optarg "$@"); shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  ROUNDS=${ROUNDS:-1} SIZE_MIB=${SIZE_MIB:-256}
else
  ROUNDS=${ROUNDS:-3} SIZE_MIB=${SIZE_MIB:-1024}
fi
bench_check_int --rounds "${ROUNDS}" --size-mib "${SIZE_MIB}"
((SIZE_MIB <= 1536)) || bench_die "--size-mib at most 1536: the memstore OSD holds 4 GiB"
readonly READ_ARMS=(strata-read curl-get curl-get-par4)

# --- prerequisites ------------------------------------------------------------
require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the mount cannot run"
for cmd in ceph-mon ceph-osd radosgw radosgw-admin ceph curl python3 fusermount3 dd; do
  command -v "${cmd}" >/dev/null ||
    bench_die "${cmd} is missing (scripts/install-deps.sh installs Ceph and the rest)"
done
BUILD=${STRATA_BUILD:-${REPO_ROOT}/build}
STRATA_BIN=${STRATA_BIN:-${BUILD}/src/cli/strata}
[[ -x "${STRATA_BIN}" ]] || bench_die "strata not found at ${STRATA_BIN}.
  Build it first:  cmake -S ${REPO_ROOT} -B ${BUILD} -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C ${BUILD} strata
  or set STRATA_BUILD (a build directory) or STRATA_BIN (the binary)."
STRATA_BIN=$(cd "$(dirname "${STRATA_BIN}")" && pwd -P)/$(basename "${STRATA_BIN}")
read -r -a STRATA_MOUNT_EXTRA <<<"${STRATA_MOUNT_ARGS:-}"

cleanup_install_trap
OUT=${OUT:-${REPO_ROOT}/bench/results/remote-$(date +%Y%m%d-%H%M%S)}
mkdir -p "${OUT}/logs"
OUT=$(cd "${OUT}" && pwd -P)
LOGS=${OUT}/logs
RAW=${OUT}/raw.tsv
printf 'round\tposition\tarm\tphase\tvalue\tunit\tseconds\tbytes\tbytes_counted\trgw_gets\trgw_bytes_sent\tcached_kb_after_drop\tstats\tmount_seconds\tread_seconds\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"

# --- scratch, cleanup ------------------------------------------------------------
SCRATCH=/var/tmp/strata-bench-remote-$$
CEPH_DIR=${SCRATCH}/ceph
MP=${SCRATCH}/mnt
DAEMON_PIDS=()  # every mount daemon started, stopped at exit by pid (never by name)
mounts_below() { findmnt -rn -o TARGET | awk -v s="$1" '$0 == s || index($0, s "/") == 1' | sort -r; }
cleanup_scratch() {
  local mp pid i
  while read -r mp; do
    [[ -n "${mp}" ]] || continue
    bench_log "cleanup: unmounting ${mp}"
    fusermount3 -u "${mp}" 2>/dev/null || fusermount3 -uz "${mp}" 2>/dev/null || umount -l "${mp}" || true
  done < <(mounts_below "${SCRATCH}")
  for pid in "${DAEMON_PIDS[@]}"; do
    [[ "$(cat "/proc/${pid}/comm" 2>/dev/null)" == strata ]] || continue
    kill -TERM "${pid}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${pid}" 2>/dev/null || true
  done
  if [[ -n "$(mounts_below "${SCRATCH}")" ]]; then
    bench_log "cleanup: still mounted, NOT removing ${SCRATCH}"
    return 0
  fi
  rm -rf -- "${SCRATCH}"
}
stop_ceph() {
  [[ -d "${CEPH_DIR}" ]] || return 0
  bench_log "stopping Ceph"
  "${REPO_ROOT}/scripts/ceph.sh" stop "${CEPH_DIR}" || true
}
# Run in reverse order: mounts first, then Ceph, then the scratch directory.
cleanup_register cleanup_scratch
cleanup_register stop_ceph
mkdir -p "${SCRATCH}/data" "${MP}"

strata() { "${STRATA_BIN}" "$@"; }

# --- Ceph --------------------------------------------------------------------------
bench_log "starting Ceph (scripts/ceph.sh, about 16 s)"
"${REPO_ROOT}/scripts/ceph.sh" start "${CEPH_DIR}" >"${LOGS}/ceph-start.log" 2>&1 ||
  bench_die "scripts/ceph.sh start failed; see ${LOGS}/ceph-start.log"
# shellcheck disable=SC1091
source "${CEPH_DIR}/env"
ENDPOINT=${STRATA_S3_ENDPOINT}
BUCKET=strata-bench
RUN_PREFIX=$$
SIGV4="aws:amz:${AWS_REGION}:s3"
RGW_ASOK=${CEPH_DIR}/run/client.rgw.a.asok

# curl with SigV4 signing; the credentials are never written to a log. RGW refuses a signature
# without x-amz-content-sha256 (SignatureDoesNotMatch); strata sends UNSIGNED-PAYLOAD too.
S3CURL=(curl -sS --fail -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --aws-sigv4 "${SIGV4}"
  --user "${AWS_ACCESS_KEY_ID}:${AWS_SECRET_ACCESS_KEY}")

# list_keys PREFIX: "key<TAB>size" of every object under PREFIX/ in the bucket (ListObjectsV2, every page).
list_keys() {
  python3 - "${BUCKET}" "$1/" <<'PY'
import os, subprocess, sys, urllib.parse, xml.etree.ElementTree as ET
bucket, prefix = sys.argv[1], sys.argv[2]
env = os.environ
token = None
while True:
    q = {"list-type": "2", "prefix": prefix}
    if token:
        q["continuation-token"] = token
    query = "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in sorted(q.items()))
    url = f"{env['STRATA_S3_ENDPOINT']}/{bucket}?{query}"
    page = subprocess.run(["curl", "-sS", "--fail", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                           "--aws-sigv4", f"aws:amz:{env['AWS_REGION']}:s3",
                           "--user", f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}", url],
                          check=True, capture_output=True).stdout
    root = ET.fromstring(page)
    ns = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    t = (lambda name: f"{{{ns}}}{name}") if ns else (lambda name: name)
    for c in root.findall(t("Contents")):
        print(f"{c.find(t('Key')).text}\t{c.find(t('Size')).text}")
    nxt = root.find(t("NextContinuationToken"))
    if root.findtext(t("IsTruncated")) != "true" or nxt is None:
        break
    token = nxt.text
PY
}

# delete_prefix PREFIX: every object under it, then RGW's garbage collection (the tails of
# large objects are otherwise kept for hours), so the memstore OSD gets its RAM back.
delete_prefix() {
  local key size
  while IFS=$'\t' read -r key size; do
    "${S3CURL[@]}" -X DELETE "${ENDPOINT}/${BUCKET}/${key}" -o /dev/null
  done < <(list_keys "$1")
  timeout 120 radosgw-admin -c "${CEPH_DIR}/ceph.conf" gc process --include-all >>"${LOGS}/rgw-gc.log" 2>&1 ||
    bench_log "warning: radosgw-admin gc process failed; see ${LOGS}/rgw-gc.log"
}

# rgw_counters: "GETs<TAB>bytes sent" so far, from radosgw's admin socket (or "-<TAB>-").
rgw_counters() {
  timeout 20 ceph --admin-daemon "${RGW_ASOK}" perf dump 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin).get("rgw", {})
print("%d\t%d" % (r.get("get", 0), r.get("get_b", 0)))' 2>/dev/null || printf -- '-\t-\n'
}

# --- the data, the local store ------------------------------------------------------
FILE_NAME=big.bin
DATA=${SCRATCH}/data/${FILE_NAME}
FILE_BYTES=$((SIZE_MIB << 20))
bench_make_mixed_data "${DATA}" "${SIZE_MIB}"
DATA_SHA=$(sha256sum "${DATA}" | cut -d' ' -f1)

SRC=${SCRATCH}/src-store
bench_log "strata import"
strata --store "${SRC}" init >"${LOGS}/strata-init.log" 2>&1
strata --store "${SRC}" import "${SCRATCH}/data" --branch bench -m data --json >"${LOGS}/strata-import.json" 2>&1 ||
  bench_die "strata import failed; see ${LOGS}/strata-import.json"
strata --store "${SRC}" stats --json >"${LOGS}/strata-store-stats.json"

# --- environment record -------------------------------------------------------------
bench_meta_env
meta strata_bin "${STRATA_BIN}"
meta size_mib "${SIZE_MIB}"
meta data "first half head -c /dev/urandom; second half base64 -w 76 of /dev/urandom; sha256 ${DATA_SHA}"
meta ceph_version "$(ceph --version 2>/dev/null | head -1)"
meta ceph_setup "scripts/ceph.sh: 1 mon, 1 OSD on memstore (objects in RAM, 4 GiB), radosgw beast on 127.0.0.1, no auth inside the cluster"
meta curl_version "$(curl --version | head -1)"
meta endpoint "${ENDPOINT}"
meta strata_mount_args "${STRATA_MOUNT_ARGS:-}"
meta cmd_push "strata --store SRC remote add rN s3://${BUCKET}/${RUN_PREFIX}/rN --endpoint ${ENDPOINT} --create-bucket; strata --store SRC push rN bench --json"
meta cmd_pull "strata init P; strata --store P remote add rN s3://${BUCKET}/${RUN_PREFIX}/rN --endpoint ${ENDPOINT}; strata --store P pull rN bench --json"
meta cmd_strata_read "strata init M; strata --store M remote add rN ...; drop caches; timed: strata --store M mount --read-only rN/bench ${STRATA_MOUNT_ARGS:+${STRATA_MOUNT_ARGS} }MP, then dd if=MP/${FILE_NAME} of=/dev/null bs=1M"
meta cmd_curl_get "curl -sS --fail -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --aws-sigv4 ${SIGV4} --user KEY:SECRET -w '%{size_download}\\n' URL1 -o /dev/null URL2 -o /dev/null ... (every pack of the prefix, whole, one after another, one process)"
meta cmd_curl_get_par4 "the same with --parallel --parallel-max 4"
meta cache_cold "sync; echo 3 > /proc/sys/vm/drop_caches before every push, pull and read; Cached kB after the drop recorded; RGW's objects are in the OSD's RAM (memstore) either way"
meta value_units "push/pull: MiB/s of chunk data (chunk_bytes of --json / wall s); strata-read: MiB/s of the file (dd, wall s); curl: MiB/s of pack bytes (wall s)"

# --- one measurement ----------------------------------------------------------------
# record ROUND POS ARM PHASE VALUE UNIT SECONDS BYTES BYTES_COUNTED GETS SENT CACHED STATS
record() {
  local IFS=$'\t'
  printf '%s\n' "$*" >>"${RAW}"
}
# json_field KEY: KEY of the JSON object on stdin (skipping any text before it).
json_field() {
  python3 -c 'import json, sys; t = sys.stdin.read(); print(json.JSONDecoder().raw_decode(t[t.index("{"):])[0][sys.argv[1]])' "$1"
}
mibs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f\n", (s > 0 ? b / s / 1048576 : 0) }'; }
delta() { if [[ "$1" == - || "$2" == - ]]; then echo -; else echo $(($2 - $1)); fi; }

# The packs of round ROUND's prefix ("key<TAB>size"), listed once per round before the curl arms.
PACKS_LIST=

measure_push() {
  local round=$1 name=r$1 secs json=${LOGS}/r$1-push.json bytes
  strata --store "${SRC}" remote add "${name}" "s3://${BUCKET}/${RUN_PREFIX}/${name}" --endpoint "${ENDPOINT}" \
    --create-bucket >"${LOGS}/r${round}-push-remote-add.log" 2>&1 ||
    bench_die "remote add failed; see ${LOGS}/r${round}-push-remote-add.log"
  drop_caches
  local cached=${BENCH_CACHED_KB}
  # timeit sends the command's stdout (the JSON) to stderr, so into ${json}.
  secs=$(timeit timeout -k 10 1800 "${STRATA_BIN}" --store "${SRC}" push "${name}" bench --json 2>"${json}") ||
    bench_die "push failed; see ${json}"
  bytes=$(json_field chunk_bytes <"${json}")
  local value
  value=$(mibs "${bytes}" "${secs}")
  record "${round}" 1 push push "${value}" MiB/s "${secs}" "${bytes}" - - - "${cached}" "logs/r${round}-push.json" - "${secs}"
  bench_log "round ${round} push: ${value} MiB/s of chunk data (${bytes} B in ${secs} s)"
}

measure_pull() {
  local round=$1 name=r$1 secs json=${LOGS}/r$1-pull.json bytes store=${SCRATCH}/pull-r$1
  strata --store "${store}" init >"${LOGS}/r${round}-pull-init.log" 2>&1
  strata --store "${store}" remote add "${name}" "s3://${BUCKET}/${RUN_PREFIX}/${name}" --endpoint "${ENDPOINT}" \
    >>"${LOGS}/r${round}-pull-init.log" 2>&1 || bench_die "remote add failed; see ${LOGS}/r${round}-pull-init.log"
  local before after
  before=$(rgw_counters)
  drop_caches
  local cached=${BENCH_CACHED_KB}
  secs=$(timeit timeout -k 10 1800 "${STRATA_BIN}" --store "${store}" pull "${name}" bench --json 2>"${json}") ||
    bench_die "pull failed; see ${json}"
  after=$(rgw_counters)
  bytes=$(json_field chunk_bytes <"${json}")
  local value gets sent
  value=$(mibs "${bytes}" "${secs}")
  gets=$(delta "${before%%$'\t'*}" "${after%%$'\t'*}")
  sent=$(delta "${before##*$'\t'}" "${after##*$'\t'}")
  # The pulled file must be the file.
  local got
  got=$(strata --store "${store}" cat "bench:${FILE_NAME}" | sha256sum | cut -d' ' -f1)
  [[ "${got}" == "${DATA_SHA}" ]] || bench_die "round ${round}: the pulled file differs from the data"
  record "${round}" 1 pull pull "${value}" MiB/s "${secs}" "${bytes}" - "${gets}" "${sent}" "${cached}" "logs/r${round}-pull.json" - "${secs}"
  bench_log "round ${round} pull: ${value} MiB/s of chunk data (${bytes} B in ${secs} s; RGW: ${gets} GETs, ${sent} B sent)"
  rm -rf -- "${store}"
}

# dd_read FILE: dd's output to stderr; fails unless it copied FILE_BYTES bytes.
dd_read() {
  local log=$1 file=$2
  dd if="${file}" of=/dev/null bs=1M 2>"${log}"
  grep -q "^${FILE_BYTES} bytes" "${log}" || { cat "${log}" >&2; return 1; }
}

measure_strata_read() {
  local round=$1 pos=$2 name=r$1 store=${SCRATCH}/mount-r$1 log=${LOGS}/r$1-strata-read.log
  local stats=logs/r$1-strata-read-stats.json
  strata --store "${store}" init >"${log}" 2>&1
  strata --store "${store}" remote add "${name}" "s3://${BUCKET}/${RUN_PREFIX}/${name}" --endpoint "${ENDPOINT}" \
    >>"${log}" 2>&1 || bench_die "remote add failed; see ${log}"
  # Timed from the mount on: a fresh mount loads the remote's pack indexes (the tail of every
  # pack, with range GETs that also bring chunk data into the block cache), so leaving the
  # mount out of the time would give the read a head start.
  local before after secs mount_secs dd_secs cache=${store}/remotes/${name}/cache mount_blocks
  drop_caches
  local cached=${BENCH_CACHED_KB}
  before=$(rgw_counters)
  mount_secs=$(timeit "${STRATA_BIN}" --store "${store}" mount --read-only "${name}/bench" "${STRATA_MOUNT_EXTRA[@]}" \
    "${MP}" 2>>"${log}") || bench_die "strata mount failed; see ${log}"
  mount_blocks=$(find "${cache}" -type f ! -name '*.part' | wc -l)
  local pid
  pid=$(strata --store "${store}" stats "${MP}" --json 2>>"${log}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["daemon_pid"])') || bench_die "strata stats failed; see ${log}"
  DAEMON_PIDS+=("${pid}")
  dd_secs=$(timeit dd_read "${LOGS}/r${round}-strata-read.dd" "${MP}/${FILE_NAME}") || bench_die "dd failed; see ${log}"
  after=$(rgw_counters)
  secs=$(awk -v a="${mount_secs}" -v b="${dd_secs}" 'BEGIN { printf "%.3f\n", a + b }')
  # `strata stats MP` finds the remote by the mount's source; --remote NAME is the other way.
  strata --store "${store}" stats "${MP}" --json >"${OUT}/${stats}" 2>>"${log}" ||
    strata --store "${store}" --remote "${name}" stats "${MP}" --json >"${OUT}/${stats}" 2>>"${log}" ||
    { bench_log "warning: strata stats failed after the read"; stats=-; }
  strata --store "${store}" umount "${MP}" >>"${log}" 2>&1 || bench_die "strata umount failed; see ${log}"
  local i
  for ((i = 0; i < 100; i++)); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
  # What the block cache fetched: its files are the blocks GETted (none evicted: 2 GiB bound).
  local blocks cache_bytes
  blocks=$(find "${cache}" -type f ! -name '*.part' | wc -l)
  cache_bytes=$(find "${cache}" -type f ! -name '*.part' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  printf 'block_cache_files\t%s\nblock_cache_bytes\t%s\nblocks_fetched_by_mount\t%s\n' "${blocks}" "${cache_bytes}" \
    "${mount_blocks}" >"${LOGS}/r${round}-strata-read-cache.tsv"
  local gets sent value
  gets=$(delta "${before%%$'\t'*}" "${after%%$'\t'*}")
  sent=$(delta "${before##*$'\t'}" "${after##*$'\t'}")
  value=$(mibs "${FILE_BYTES}" "${secs}")
  record "${round}" "${pos}" strata-read cold-read "${value}" MiB/s "${secs}" "${FILE_BYTES}" "${cache_bytes}" \
    "${gets}" "${sent}" "${cached}" "${stats}" "${mount_secs}" "${dd_secs}"
  bench_log "round ${round} strata-read: ${value} MiB/s of the file (${secs} s: mount ${mount_secs} s, ${mount_blocks} blocks, dd ${dd_secs} s; block cache ${blocks} blocks, ${cache_bytes} B; RGW: ${gets} GETs, ${sent} B sent)"
  rm -rf -- "${store}"
}

measure_curl() {
  local round=$1 pos=$2 arm=$3 log=${LOGS}/r$1-$3.log
  local -a args=(-w '%{size_download}\n')
  [[ "${arm}" == curl-get-par4 ]] && args+=(--parallel --parallel-max 4)
  local key size total=0
  while IFS=$'\t' read -r key size; do
    args+=("${ENDPOINT}/${BUCKET}/${key}" -o /dev/null)
    total=$((total + size))
  done <<<"${PACKS_LIST}"
  local before after secs
  drop_caches
  local cached=${BENCH_CACHED_KB}
  before=$(rgw_counters)
  secs=$(timeit timeout -k 10 1800 "${S3CURL[@]}" "${args[@]}" 2>"${log}") || bench_die "curl failed; see ${log}"
  after=$(rgw_counters)
  # -w printed each transfer's size on curl's stdout, which timeit sent to the log.
  local got
  got=$(grep -E '^[0-9]+$' "${log}" | awk '{ s += $1 } END { print s + 0 }')
  [[ "${got}" -eq "${total}" ]] || bench_die "${arm}: got ${got} bytes, the packs hold ${total}; see ${log}"
  local gets sent value
  gets=$(delta "${before%%$'\t'*}" "${after%%$'\t'*}")
  sent=$(delta "${before##*$'\t'}" "${after##*$'\t'}")
  value=$(mibs "${total}" "${secs}")
  record "${round}" "${pos}" "${arm}" cold-read "${value}" MiB/s "${secs}" "${total}" "${got}" "${gets}" "${sent}" \
    "${cached}" - - "${secs}"
  bench_log "round ${round} ${arm}: ${value} MiB/s of pack bytes (${total} B in ${secs} s; RGW: ${gets} GETs, ${sent} B sent)"
}

# --- the rounds ---------------------------------------------------------------------
for ((round = 1; round <= ROUNDS; round++)); do
  prefix=${RUN_PREFIX}/r${round}
  measure_push "${round}"
  PACKS_LIST=$(list_keys "${prefix}/packs")
  [[ -n "${PACKS_LIST}" ]] || bench_die "no packs under s3://${BUCKET}/${prefix}/packs after the push"
  printf '%s\n' "${PACKS_LIST}" >"${LOGS}/r${round}-packs.tsv"
  bench_log "round ${round}: $(wc -l <<<"${PACKS_LIST}") packs, $(awk -F'\t' '{ s += $2 } END { print s }' <<<"${PACKS_LIST}") B"
  measure_pull "${round}"
  mapfile -t order < <(bench_rotate "${round}" "${READ_ARMS[@]}")
  pos=0
  for arm in "${order[@]}"; do
    pos=$((pos + 1))
    case "${arm}" in
      strata-read) measure_strata_read "${round}" "${pos}" ;;
      *) measure_curl "${round}" "${pos}" "${arm}" ;;
    esac
  done
  bench_log "round ${round}: deleting s3://${BUCKET}/${prefix}"
  delete_prefix "${prefix}"
done
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"

python3 "${SCRIPT_DIR}/report.py" "${OUT}" | tee "${OUT}/table.md"
