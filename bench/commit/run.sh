#!/usr/bin/env bash
# bench/commit/run.sh — what a commit costs: the whole tree versus what changed.
#
# Usage: bench/commit/run.sh [--quick] [--files N] [--data-mib M] [--rounds R] [--out DIR]
#
#   --files N     small files in the workspace (default 100000; quick 10000)
#   --data-mib M  MiB of new data for the throughput phase (default 1024; quick 128)
#   --rounds R    rounds (default 3; quick 1); each round starts from a new store
#   --out DIR     results folder (default bench/results/commit-<timestamp>)
#
# Environment: STRATA_BIN, or STRATA_BUILD (default <repo>/build): the strata binary.
#
# One round, on a fresh store and a workspace mounted with `strata mount --new`:
#   all-files    N small files (100 per directory) are created, then committed
#   one-file     1 of them is changed, then committed
#   new-files    N/10 new small files are created, then committed
#   new-data     one file of M MiB of random data is written, then committed
# Every phase is timed as the wall time of `strata commit` (which calls syncfs
# on the mount first), and its --json counters are kept: bytes hashed,
# directories written, files captured. The target of the issue: one-file at
# least 20x faster than all-files.
#
# Output: raw.tsv, results.json, table.md (printed), logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { bench_usage 2 11; }

FILES=
DATA_MIB=
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --files) FILES=$(bench_optarg "$@"); shift ;;
    --data-mib) DATA_MIB=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  FILES=${FILES:-10000} DATA_MIB=${DATA_MIB:-128} ROUNDS=${ROUNDS:-1}
else
  FILES=${FILES:-100000} DATA_MIB=${DATA_MIB:-1024} ROUNDS=${ROUNDS:-3}
fi
bench_check_int --files "${FILES}" --data-mib "${DATA_MIB}" --rounds "${ROUNDS}"

require_root
[[ -e /dev/fuse ]] || bench_die "no /dev/fuse: the workspace is a FUSE mount"
bench_find_bin STRATA_BIN src/cli/strata strata

cleanup_install_trap
bench_results_dir commit
bench_scratch commit
MP=${SCRATCH}/mnt
mkdir -p "${MP}"

RAW=${OUT}/raw.tsv
printf 'round\tphase\tseconds\tbytes_hashed\tdirectories_written\tfiles_captured\tchanged_inodes\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"
bench_meta_env
meta files "${FILES}"
meta data_mib "${DATA_MIB}"
meta disk "$(df -h --output=source,fstype "${SCRATCH}" | tail -n 1)"
meta strata_bin "${STRATA_BIN}"
meta cmd_strata "strata --store S init; strata --store S mount --new --name bench MP; (files written through MP); strata commit MP -m PHASE --branch bench --json (timed)"
meta cache_state "warm: the files were just written through the mount; strata commit calls syncfs first"

strata() { "${STRATA_BIN}" --store "${STORE}" "$@"; }

# make_files DIR FIRST COUNT: COUNT small files, 100 per directory, through the mount.
make_files() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, sys
root, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(first, first + count):
    d = os.path.join(root, "d%05d" % (i // 100))
    if i % 100 == 0 or i == first:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%07d" % i), "wb") as f:
        f.write(b"small file %d\n" % i)
PY
}

# timed_commit ROUND PHASE: commits the mount and records time and counters.
timed_commit() {
  local round=$1 phase=$2 start end log=${OUT}/logs/r$1-$2.json
  start=$(now)
  strata commit "${MP}" -m "${phase}" --branch bench --json >"${log}"
  end=$(now)
  python3 - "${log}" "${round}" "${phase}" "${start}" "${end}" >>"${RAW}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stats"]
assert d["commit"], "nothing was committed"
print("\t".join([sys.argv[2], sys.argv[3], "%.3f" % (float(sys.argv[5]) - float(sys.argv[4])),
                 str(s["bytes_hashed"]), str(s["directories_written"]), str(s["files_captured"]),
                 str(s["changed_inodes"])]))
PY
  bench_log "round ${round} ${phase}: $(tail -n 1 "${RAW}" | cut -f3)s"
}

for ((round = 1; round <= ROUNDS; round++)); do
  STORE=${SCRATCH}/store-${round}
  strata init >/dev/null
  bench_track_mount "${MP}"
  strata mount --new --name bench "${MP}" >/dev/null
  bench_track_strata_daemon "${STORE}" "${MP}" /dev/null
  bench_log "round ${round}: creating ${FILES} files"
  make_files "${MP}" 0 "${FILES}"
  timed_commit "${round}" all-files
  printf 'changed\n' >>"${MP}/d00000/f0000042"
  timed_commit "${round}" one-file
  make_files "${MP}" "${FILES}" $((FILES / 10))
  timed_commit "${round}" new-files
  head -c $((DATA_MIB << 20)) /dev/urandom >"${MP}/new-data.bin"
  timed_commit "${round}" new-data
  strata stats "${MP}" --json >"${OUT}/logs/r${round}-stats.json"
  strata umount "${MP}" >/dev/null
  rm -rf -- "${STORE}"
done

python3 "${SCRIPT_DIR}/report.py" "${OUT}" "${DATA_MIB}" | tee "${OUT}/table.md"
