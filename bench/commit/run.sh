#!/usr/bin/env bash
# bench/commit/run.sh — what a snapshot costs: the whole tree versus what changed; strata, restic, borg.
#
# Usage: bench/commit/run.sh [--quick] [--files N] [--data-mib M] [--arms LIST] [--rounds R] [--out DIR]
#
#   --files N     small files in the tree (default 100000; quick 10000; at least 100)
#   --data-mib M  MiB of new random data for the new-data phase (default 1024; quick 128)
#   --arms LIST   comma-separated subset of strata,restic,borg (default all three)
#   --rounds R    rounds (default 3; quick 1); each round starts from new repositories
#   --out DIR     results folder (default bench/results/commit-<timestamp>)
#
# Environment: STRATA_BIN, or STRATA_BUILD (default <repo>/build): the strata binary.
#
# The arms, each with a tree and a repository of its own on the scratch disk:
#   strata  a workspace mounted with `strata mount --new`; snapshot = `strata commit MP --json`
#   restic  a plain directory; snapshot = `restic backup --json DIR` (the previous
#           snapshot of DIR is its parent: unchanged files are skipped by their
#           mtime, ctime, size and inode, but every file is still stat'ed)
#   borg    a plain directory; snapshot = `borg create --json REPO::PHASE DIR`
#           (its files cache skips unchanged files by ctime, size and inode)
# Encryption and compression, chosen to be as alike as the tools allow: strata
# and borg store unencrypted (`borg init -e none`) and compress with zstd level 3
# (strata's default; `borg create --compression zstd,3`); restic 0.14 always
# encrypts (AES-256-CTR, Poly1305: a fixed password from this script) and
# compresses with its default `auto` (zstd at its fastest level, repository
# format 2). Each tool's cache (restic's, borg's files cache) lives in the
# arm's scratch folder and persists through the round, as it would on a machine.
#
# One round: the phases below, in order; within each phase the arms take turns
# (their order rotated from round to round), each making the same change to its
# own tree (not timed), then `sync` (not timed), then its timed snapshot:
#   all-files    N small files (100 per directory) are created, then a snapshot
#   one-file     1 of them is changed (a line appended), then a snapshot
#   new-files    N/10 new small files are created, then a snapshot
#   new-data     one file of M MiB of random data (the same bytes for every arm
#                of the round) is copied in, then a snapshot
# Each phase is the wall time of the snapshot command (for strata that includes
# the syncfs of the mount `strata commit` starts with). strata's --json
# counters are kept (bytes hashed, directories written, files captured, the
# milliseconds of its last step, rebase), and restic's (files new or changed).
# Warm cache: the files were just written.
# The target of the issue: strata's one-file at least 20x faster than all-files.
#
# Output: raw.tsv (one line per snapshot), meta.tsv, results.json, table.md
# (printed), logs/ (each tool's output and JSON). Trees and repositories live
# in /var/tmp/strata-bench-commit-<pid>, removed at exit — also on failure or
# Ctrl-C, after unmounting the workspace and stopping its daemon.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

# Fixed, documented benchmark password: restic always encrypts; the secret is irrelevant here.
readonly BENCH_RESTIC_PASSWORD="strata-bench-not-a-secret"
readonly PHASES=(all-files one-file new-files new-data)

usage() { bench_usage 2 47; }

FILES=
DATA_MIB=
ARMS_CSV="strata,restic,borg"
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --files) FILES=$(bench_optarg "$@"); shift ;;
    --data-mib) DATA_MIB=$(bench_optarg "$@"); shift ;;
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
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
((FILES >= 100)) || bench_die "--files must be at least 100 (one-file changes file 42)"
bench_parse_arms "strata,restic,borg" "${ARMS_CSV}"

require_root
if has_arm strata; then
  [[ -e /dev/fuse ]] || bench_die "no /dev/fuse: strata's workspace is a FUSE mount"
  bench_find_bin STRATA_BIN src/cli/strata strata
fi
if has_arm restic; then bench_install restic:restic; fi
if has_arm borg; then bench_install borg:borgbackup; fi

cleanup_install_trap
bench_results_dir commit
bench_scratch commit

RAW=${OUT}/raw.tsv
printf 'round\tposition\tarm\tphase\tseconds\tbytes_hashed\tdirectories_written\tfiles_captured\tchanged_inodes\trebase_ms\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"
bench_meta_env
meta arms "${ARMS_CSV}"
meta files "${FILES}"
meta new_files $((FILES / 10))
meta data_mib "${DATA_MIB}"
meta disk "$(df -h --output=source,fstype "${SCRATCH}" | tail -n 1)"
if has_arm strata; then
  meta strata_bin "${STRATA_BIN}"
  meta strata_version "$("${STRATA_BIN}" --version 2>/dev/null | head -n 1 || true)"
fi
if has_arm restic; then meta restic_version "$(restic version)"; fi
if has_arm borg; then meta borg_version "$(borg --version)"; fi
# Exact command lines as run (S, REPO, MP and DIR in the arm's folder of the round).
if has_arm strata; then
  meta cmd_strata "strata --store S init; strata --store S mount --new --name bench MP; (files written through MP); strata --store S commit MP -m PHASE --branch bench --json (timed)"
fi
if has_arm restic; then
  meta cmd_restic "RESTIC_PASSWORD=<fixed> RESTIC_CACHE_DIR=<arm scratch> restic -r REPO init; (files written to DIR); restic -r REPO backup --json DIR (timed)"
fi
if has_arm borg; then
  meta cmd_borg "BORG_BASE_DIR=<arm scratch> BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes borg init -e none REPO; (files written to DIR); borg create --json --compression zstd,3 REPO::PHASE DIR (timed)"
fi
meta choice_encryption "strata: none; borg: none (-e none); restic: always encrypted in 0.14 (AES-256-CTR + Poly1305, fixed password), no way to turn it off"
meta choice_compression "strata: zstd level 3 (its default); borg: zstd,3 (the same); restic: auto = zstd at its fastest level (repository format 2, its default; its only other choices are off and max)"
meta choice_caches "restic's cache and borg's files cache and security dirs live in the arm's scratch folder (outside REPO) and persist through the round, so restic and borg skip unchanged files as they would on a machine"
meta timing "wall time (date +%s.%N) of the snapshot command alone; the change before it, a sync after the change, repository init and the mount are not timed"
meta cache_state "warm: each phase's files were just written; sync (not timed) before every snapshot, no cache drop"
meta data "small files: 'small file I' (13-20 bytes), 100 per directory; new-data: M MiB from /dev/urandom made once per round and copied into every arm's tree (incompressible, no dedup)"

strata() { "${STRATA_BIN}" --store "$1" "${@:2}"; }
restic_arm() { RESTIC_PASSWORD=${BENCH_RESTIC_PASSWORD} RESTIC_CACHE_DIR=$1/cache restic -r "$1/repo" "${@:2}"; }
borg_arm() { BORG_BASE_DIR=$1/base BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes borg "${@:2}"; }

# make_files DIR FIRST COUNT: COUNT small files, 100 per directory.
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

# arm_dir ROUND ARM: the arm's folder of the round; arm_tree: the tree it snapshots.
arm_dir() { echo "${SCRATCH}/r$1/$2"; }
arm_tree() {
  if [[ "$2" == strata ]]; then echo "$(arm_dir "$1" "$2")/mnt"; else echo "$(arm_dir "$1" "$2")/data"; fi
}

# arm_up ROUND ARM: the arm's empty tree and repository (not timed).
arm_up() {
  local dir log=${OUT}/logs/r$1-$2.log
  dir=$(arm_dir "$1" "$2")
  mkdir -p "${dir}"
  case "$2" in
    strata)
      mkdir "${dir}/mnt"
      strata "${dir}/store" init >>"${log}" 2>&1 || bench_die "strata init failed; see ${log}"
      bench_track_mount "${dir}/mnt"
      strata "${dir}/store" mount --new --name bench "${dir}/mnt" >>"${log}" 2>&1 ||
        bench_die "strata mount failed; see ${log}"
      mountpoint -q "${dir}/mnt" || bench_die "strata mount returned but ${dir}/mnt is not a mountpoint"
      bench_track_strata_daemon "${dir}/store" "${dir}/mnt" "${log}"
      ;;
    restic)
      mkdir "${dir}/data"
      restic_arm "${dir}" init >>"${log}" 2>&1 || bench_die "restic init failed; see ${log}"
      ;;
    borg)
      mkdir "${dir}/data"
      borg_arm "${dir}" init -e none "${dir}/repo" >>"${log}" 2>&1 || bench_die "borg init failed; see ${log}"
      ;;
  esac
}

# arm_down ROUND ARM: unmount strata's workspace (its counters kept) and remove the arm's folder.
arm_down() {
  local dir log=${OUT}/logs/r$1-$2.log
  dir=$(arm_dir "$1" "$2")
  if [[ "$2" == strata ]]; then
    strata "${dir}/store" stats "${dir}/mnt" --json >"${OUT}/logs/r$1-strata-stats.json" 2>>"${log}" ||
      bench_log "warning: 'strata stats --json' failed; see ${log}"
    strata "${dir}/store" umount "${dir}/mnt" >>"${log}" 2>&1 || bench_die "strata umount failed; see ${log}"
  fi
  rm -rf -- "${dir}"
}

# change ROUND ARM PHASE: the phase's change to the arm's tree (not timed), then sync.
change() {
  local tree
  tree=$(arm_tree "$1" "$2")
  case "$3" in
    all-files) make_files "${tree}" 0 "${FILES}" ;;
    one-file) printf 'changed\n' >>"${tree}/d00000/f0000042" ;;
    new-files) make_files "${tree}" "${FILES}" $((FILES / 10)) ;;
    new-data) cp -- "${SCRATCH}/r$1/new-data.bin" "${tree}/new-data.bin" ;;
  esac
  sync
}

# snapshot ROUND ARM PHASE JSON: the timed command; its JSON output to JSON.
snapshot() {
  local dir tree
  dir=$(arm_dir "$1" "$2")
  tree=$(arm_tree "$1" "$2")
  case "$2" in
    strata) strata "${dir}/store" commit "${tree}" -m "$3" --branch bench --json >"$4" ;;
    restic) restic_arm "${dir}" backup --json "${tree}" >"$4" ;;
    borg) borg_arm "${dir}" create --json --compression zstd,3 "${dir}/repo::$3" "${tree}" >"$4" ;;
  esac
}

# measure ROUND POSITION ARM PHASE: change, sync, timed snapshot; one line of raw.tsv.
measure() {
  local round=$1 pos=$2 arm=$3 phase=$4 secs
  local log=${OUT}/logs/r${round}-${arm}.log json=${OUT}/logs/r${round}-${arm}-${phase}.json
  change "${round}" "${arm}" "${phase}"
  printf '\n=== round %s %s %s ===\n' "${round}" "${arm}" "${phase}" >>"${log}"
  if ! secs=$(timeit snapshot "${round}" "${arm}" "${phase}" "${json}" 2>>"${log}"); then
    tail -n 20 "${log}" >&2 || true
    bench_die "${arm} snapshot of ${phase} failed in round ${round}; see ${log}"
  fi
  python3 - "${arm}" "${json}" "${round}" "${pos}" "${phase}" "${secs}" >>"${RAW}" <<'PY'
import json, sys
arm, path, rnd, pos, phase, secs = sys.argv[1:]
counters = ["", "", "", "", ""]  # bytes_hashed, directories_written, files_captured, changed_inodes, rebase_ms
if arm == "strata":
    d = json.load(open(path))
    assert d["commit"], "strata committed nothing"
    s = d["stats"]
    counters = [str(s[k]) for k in ("bytes_hashed", "directories_written", "files_captured", "changed_inodes")]
    counters.append("%.0f" % s["rebase_ms"])
elif arm == "restic":
    # One JSON object a line; the last is the summary of the snapshot.
    summary = [json.loads(l) for l in open(path) if '"summary"' in l][-1]
    assert summary.get("snapshot_id"), "restic made no snapshot"
    counters[2] = str(summary["files_new"] + summary["files_changed"])
else:
    assert json.load(open(path))["archive"]["name"] == phase, "borg made no archive"
print("\t".join([rnd, pos, arm, phase, secs] + counters))
PY
  bench_log "round ${round} ${phase} ${arm}: ${secs} s"
}

bench_log "results: ${OUT}; arms: ${ARMS[*]}; ${FILES} files, ${DATA_MIB} MiB new data, ${ROUNDS} round(s)"
for ((round = 1; round <= ROUNDS; round++)); do
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  meta "order_r${round}" "${order[*]}"
  mkdir -p "${SCRATCH}/r${round}"
  head -c $((DATA_MIB << 20)) /dev/urandom >"${SCRATCH}/r${round}/new-data.bin"
  for arm in "${order[@]}"; do arm_up "${round}" "${arm}"; done
  bench_log "round ${round}/${ROUNDS}: order ${order[*]}"
  for phase in "${PHASES[@]}"; do
    for ((i = 0; i < ${#order[@]}; i++)); do
      measure "${round}" "$((i + 1))" "${order[i]}" "${phase}"
    done
  done
  for arm in "${order[@]}"; do arm_down "${round}" "${arm}"; done
  rm -rf -- "${SCRATCH:?}/r${round}"
done

python3 "${SCRIPT_DIR}/report.py" "${OUT}" "${DATA_MIB}" | tee "${OUT}/table.md"
