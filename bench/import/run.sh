#!/usr/bin/env bash
# bench/import/run.sh — import and dedup benchmark: strata (plain and encrypted) against restic and borg.
#
# Usage: bench/import/run.sh [--quick] [--rounds N] [--out DIR] [--data SRC] [--arms LIST] [--modify N]
#
#   --quick       small data (/usr/share/doc, ~120 MB) and 1 round, for a smoke run
#   --rounds N    rounds to run (default 3, quick 1)
#   --out DIR     results folder (default bench/results/import-<timestamp>)
#   --data SRC    tree to import (default /usr/share, quick /usr/share/doc)
#   --arms LIST   comma-separated subset of strata,strata-enc,strata-enc-kept,restic,borg
#                 (default strata,restic,borg); strata-enc is strata on an encrypted store
#                 (init --encrypt), so encryption's cost is a ratio in the same run, each
#                 import given the passphrase; strata-enc-kept the same with the store's
#                 key kept unlocked (`strata key unlock`, not timed) and no passphrase
#   --modify N    files v2 modifies (default 300; see mutate_data)
#
# Environment: STRATA_BIN, or STRATA_BUILD (default <repo>/build): the strata binary.
#
# What one round does (all arms see byte-identical data in a round):
#   1. fresh copy of SRC → scratch/data                             ("v1")
#   2. for each arm, in this round's order: fresh repository, drop caches,
#      time the import of v1, record `du -sb` of the repository
#   3. mutate scratch/data once, deterministically                   ("v2")
#   4. for each arm, same order: drop caches, time the import of v2 into the
#      same repository, record `du -sb`
# The arm order rotates from round to round (strata restic borg, restic borg
# strata, …) so no arm always runs first after the copy or last in the round.
#
# Output in the results folder: results.json, table.md (also printed), raw.tsv
# (one line per timed import), meta.tsv, mutation.tsv (exactly what v2 changed),
# logs/ (each tool's output) and strata-stats/ (`strata stats --json` per import).
# Big data and repositories live in /var/tmp/strata-bench-<pid>, removed at exit,
# also on failure or Ctrl-C.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

# Fixed, documented benchmark password: restic always encrypts; the secret is irrelevant here.
readonly BENCH_RESTIC_PASSWORD="strata-bench-not-a-secret"
# The same for strata's encrypted arm (each command unlocks the store with it:
# one scrypt derivation, part of the timed import as it is for a user).
readonly BENCH_STRATA_PASSWORD="strata-bench-not-a-secret"
# How v2 differs from v1 (see mutate_data).
MUT_MODIFY=300
readonly MUT_ADD=20
readonly MUT_DELETE=20

usage() { bench_usage 2 13; }

# --- arguments ----------------------------------------------------------------
DATA_SRC=
ARMS_CSV="strata,restic,borg"
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --data) DATA_SRC=$(bench_optarg "$@"); shift ;;
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
    --modify) MUT_MODIFY=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done

if [[ -z "${ROUNDS}" ]]; then
  if ((QUICK)); then ROUNDS=1; else ROUNDS=3; fi
fi
bench_check_int --rounds "${ROUNDS}" --modify "${MUT_MODIFY}"
readonly MUT_MODIFY
if [[ -z "${DATA_SRC}" ]]; then
  # /usr/share/doc is on every Debian 12 install (~120 MB, ~5 000 files) and is a
  # real mixed tree (text, gzip'ed changelogs, HTML), good enough for a smoke run.
  if ((QUICK)); then DATA_SRC=/usr/share/doc; else DATA_SRC=/usr/share; fi
fi
[[ -d "${DATA_SRC}" ]] || bench_die "data source ${DATA_SRC} is not a directory"
DATA_SRC=$(cd "${DATA_SRC}" && pwd -P)
bench_parse_arms "strata,strata-enc,strata-enc-kept,restic,borg" "${ARMS_CSV}"

# --- prerequisites ------------------------------------------------------------
require_root

if has_arm restic; then bench_install restic:restic; fi
if has_arm borg; then bench_install borg:borgbackup; fi
if has_arm strata || has_arm strata-enc || has_arm strata-enc-kept; then bench_find_bin STRATA_BIN src/cli/strata strata; fi

# --- scratch and results folders ---------------------------------------------
cleanup_install_trap
bench_results_dir import
bench_scratch import
mkdir -p "${OUT}/strata-stats"
DATA=${SCRATCH}/data

RAW=${OUT}/raw.tsv
printf 'round\tposition\tarm\tphase\tseconds\tstored_bytes\tcached_kb_after_drop\twarning\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"

# --- environment record -------------------------------------------------------
bench_meta_env
meta arms "${ARMS_CSV}"
meta data_source "${DATA_SRC}"
if has_arm restic; then meta restic_version "$(restic version)"; fi
if has_arm borg; then meta borg_version "$(borg --version)"; fi
if has_arm strata || has_arm strata-enc || has_arm strata-enc-kept; then
  meta strata_bin "${STRATA_BIN}"
  meta strata_version "$("${STRATA_BIN}" --version 2>/dev/null | head -n1 || true)"
fi
# Exact command lines as run (REPO is the arm's fresh repository, DATA the tree).
meta cmd_strata "${STRATA_BIN} --store REPO init; XDG_CACHE_HOME=<scratch> ${STRATA_BIN} --store REPO import DATA --branch main -m v1|v2"
meta cmd_strata_enc "STRATA_PASSWORD=<fixed> ${STRATA_BIN} --store REPO init --encrypt; then as strata, with STRATA_PASSWORD=<fixed> (every command unlocks the store: one scrypt derivation, N = 2^17, timed with the import)"
meta cmd_strata_enc_kept "as strata-enc, then (not timed) STRATA_PASSWORD=<fixed> ${STRATA_BIN} --store REPO key unlock --for 1h; the imports without STRATA_PASSWORD (the key comes from the kernel keyring: no scrypt); key lock after v2"
meta cmd_restic "RESTIC_PASSWORD=<fixed> RESTIC_CACHE_DIR=<scratch> restic -r REPO init; restic -r REPO backup DATA (twice)"
meta cmd_borg "BORG_BASE_DIR=<scratch> borg init -e none REPO; borg create --compression zstd,3 REPO::v1|v2 DATA"
meta cache_state "cold: sync; echo 3 > /proc/sys/vm/drop_caches before every timed import; Cached (kB) from /proc/meminfo right after the drop is recorded per import"
meta timing "wall time: date +%s.%N before and after the import command; init is not timed"
meta stored "du -sb REPO after each import (v2 = the whole repository holding both versions); restic cache and borg cache/index dirs live outside REPO and are not counted"

# --- the arms -----------------------------------------------------------------
# arm_init ARM DIR: create the arm's empty repository in DIR/repo (not timed).
arm_init() {
  local arm=$1 dir=$2
  mkdir -p "${dir}"
  case "${arm}" in
    strata) "${STRATA_BIN}" --store "${dir}/repo" init ;;
    strata-enc) STRATA_PASSWORD=${BENCH_STRATA_PASSWORD} "${STRATA_BIN}" --store "${dir}/repo" init --encrypt ;;
    strata-enc-kept)
      STRATA_PASSWORD=${BENCH_STRATA_PASSWORD} "${STRATA_BIN}" --store "${dir}/repo" init --encrypt &&
        STRATA_PASSWORD=${BENCH_STRATA_PASSWORD} "${STRATA_BIN}" --store "${dir}/repo" key unlock --for 1h ;;
    restic) RESTIC_PASSWORD=${BENCH_RESTIC_PASSWORD} RESTIC_CACHE_DIR=${dir}/cache \
      restic -r "${dir}/repo" init ;;
    borg) BORG_BASE_DIR=${dir}/base BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes \
      borg init -e none "${dir}/repo" ;;
  esac
}

# arm_import ARM DIR PHASE: the timed command. restic exit 3 ("some files could not
# be read") and borg exit 1 ("warning") still produce a snapshot: they are kept
# but flagged in DIR/warning-PHASE, so a long run is not lost to one odd file.
arm_import() {
  local arm=$1 dir=$2 phase=$3 rc=0
  case "${arm}" in
    strata)
      # Like restic's and borg's caches, strata's import cache lives outside the
      # repository (and so outside its stored bytes), in the arm's scratch.
      XDG_CACHE_HOME=${dir}/cache "${STRATA_BIN}" --store "${dir}/repo" import "${DATA}" --branch main -m "${phase}" || rc=$?
      ;;
    strata-enc)
      STRATA_PASSWORD=${BENCH_STRATA_PASSWORD} XDG_CACHE_HOME=${dir}/cache \
        "${STRATA_BIN}" --store "${dir}/repo" import "${DATA}" --branch main -m "${phase}" || rc=$?
      ;;
    strata-enc-kept)
      # No passphrase: without the kept key this import fails.
      env -u STRATA_PASSWORD XDG_CACHE_HOME="${dir}/cache" \
        "${STRATA_BIN}" --store "${dir}/repo" import "${DATA}" --branch main -m "${phase}" || rc=$?
      ;;
    restic)
      RESTIC_PASSWORD=${BENCH_RESTIC_PASSWORD} RESTIC_CACHE_DIR=${dir}/cache \
        restic -r "${dir}/repo" backup "${DATA}" || rc=$?
      if ((rc == 3)); then echo "restic exit 3" >"${dir}/warning-${phase}"; rc=0; fi
      ;;
    borg)
      BORG_BASE_DIR=${dir}/base BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes \
        borg create --compression zstd,3 "${dir}/repo::${phase}" "${DATA}" || rc=$?
      if ((rc == 1)); then echo "borg exit 1" >"${dir}/warning-${phase}"; rc=0; fi
      ;;
  esac
  return "${rc}"
}

# measure ROUND POSITION ARM PHASE: cold-cache timed import plus stored bytes.
measure() {
  local round=$1 pos=$2 arm=$3 phase=$4
  local dir=${SCRATCH}/r${round}/${arm}
  local log=${OUT}/logs/r${round}-${arm}.log
  local secs stored warn=""
  printf '\n=== round %s %s import (%s) ===\n' "${round}" "${arm}" "${phase}" >>"${log}"
  drop_caches
  if ! secs=$(timeit arm_import "${arm}" "${dir}" "${phase}" 2>>"${log}"); then
    tail -n 20 "${log}" >&2 || true
    bench_die "${arm} import of ${phase} failed in round ${round}; full output in ${log}"
  fi
  stored=$(du -sb "${dir}/repo" | cut -f1)
  if [[ -f "${dir}/warning-${phase}" ]]; then warn=$(<"${dir}/warning-${phase}"); fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${round}" "${pos}" "${arm}" "${phase}" \
    "${secs}" "${stored}" "${BENCH_CACHED_KB}" "${warn}" >>"${RAW}"
  if [[ "${arm}" == strata ]]; then
    # Not timed; the project's own view of dedup and compression for the report
    # (of the plain arm: the encrypted one stores the same objects, sealed).
    "${STRATA_BIN}" --store "${dir}/repo" stats --json \
      >"${OUT}/strata-stats/r${round}-${phase}.json" 2>>"${log}" ||
      bench_log "warning: 'strata stats --json' failed (round ${round}, ${phase}); see ${log}"
  fi
  bench_log "round ${round} ${phase} ${arm}: ${secs} s cold (Cached after drop ${BENCH_CACHED_KB} kB), repository $((stored / 1024 / 1024)) MiB${warn:+ — WARNING: ${warn}}"
}

# --- data ---------------------------------------------------------------------
# tree_stats DIR: "files bytes dirs symlinks" (bytes = sum of regular file sizes).
tree_stats() {
  local files_bytes dirs links
  files_bytes=$(find "$1" -type f -printf '%s\n' | awk '{ s += $1; n++ } END { printf "%d %d", n, s }')
  dirs=$(find "$1" -type d | wc -l)
  links=$(find "$1" -type l | wc -l)
  echo "${files_bytes} ${dirs} ${links}"
}

# tree_manifest DIR: hash of the sorted (path, size, content hash) list, to check
# that every round imported exactly the same v1 and v2.
tree_manifest() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

# mutate_data DIR LOG: turn v1 into v2, deterministically, and write what changed
# to LOG (op, path, detail). Candidates are the regular files with a single link
# (so a change touches exactly one path), sorted by path in the C locale. With C
# candidates and step N = max(2, C / MUT_MODIFY):
#   modify  file k*N for k = 0 .. MUT_MODIFY-1: even k appends one text line,
#           odd k overwrites 16 bytes in the middle of the file in place (files
#           shorter than 16 bytes get the line appended instead);
#   delete  file k*N + 1 for k = 15*j + 7, j = 0 .. MUT_DELETE-1 (never a modified one);
#   add     strata-bench-new-JJ.txt, j = 0 .. MUT_ADD-1, next to modified file
#           k*N for k = 15*j + 3: 500*(j+1) numbered text lines made by seq.
mutate_data() {
  local data=$1 log=$2
  local -a files
  mapfile -d '' -t files < <(find "${data}" -type f -links 1 -printf '%P\0' | LC_ALL=C sort -z)
  local c=${#files[@]}
  ((c >= 2 * MUT_MODIFY / 10)) || bench_die "too few files (${c}) in ${data} to build v2"
  local n=$((c / MUT_MODIFY))
  ((n >= 2)) || n=2
  local k j f size off name lines
  printf 'op\tpath\tdetail\n' >"${log}"
  for ((k = 0; k < MUT_MODIFY && k * n < c; k++)); do
    f=${files[k * n]}
    size=$(stat -c %s "${data}/${f}")
    if ((k % 2 == 1 && size >= 16)); then
      off=$((size / 2))
      printf 'STRATA-V2-%06d' "${k}" | dd of="${data}/${f}" bs=1 seek="${off}" conv=notrunc status=none
      printf 'overwrite\t%s\t16 bytes at offset %d of %d\n' "${f}" "${off}" "${size}" >>"${log}"
    else
      printf 'strata-bench v2: appended line %d\n' "${k}" >>"${data}/${f}"
      printf 'append\t%s\tone line appended to %d bytes\n' "${f}" "${size}" >>"${log}"
    fi
  done
  for ((j = 0; j < MUT_DELETE; j++)); do
    k=$((15 * j + 7))
    ((k * n + 1 < c)) || continue
    f=${files[k * n + 1]}
    printf 'delete\t%s\t%d bytes\n' "${f}" "$(stat -c %s "${data}/${f}")" >>"${log}"
    rm -f -- "${data:?}/${f}"
  done
  for ((j = 0; j < MUT_ADD; j++)); do
    k=$((15 * j + 3))
    ((k * n < c)) || continue
    name=$(dirname "${files[k * n]}")/$(printf 'strata-bench-new-%02d.txt' "${j}")
    [[ ! -e "${data}/${name}" ]] || bench_die "mutation target ${name} already exists"
    lines=$((500 * (j + 1)))
    seq -f "strata-bench v2 new file ${j} line %.0f" 1 "${lines}" >"${data}/${name}"
    printf 'add\t%s\t%d lines, %d bytes\n' "${name}" "${lines}" "$(stat -c %s "${data}/${name}")" >>"${log}"
  done
}

# --- rounds -------------------------------------------------------------------
bench_log "results: ${OUT}"
bench_log "scratch: ${SCRATCH} ($(awk -F'\t' '$1 == "scratch_fs" { print $2 }' "${BENCH_META}"))"
bench_log "arms: ${ARMS[*]}; rounds: ${ROUNDS}; every timed import runs cold (sync; echo 3 > /proc/sys/vm/drop_caches)"

for ((round = 1; round <= ROUNDS; round++)); do
  # Rotate the arm order by one each round.
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  meta "order_r${round}" "${order[*]}"
  bench_log "round ${round}/${ROUNDS}: order ${order[*]}; copying ${DATA_SRC} (not timed)"

  rm -rf -- "${DATA}"
  cp -a -- "${DATA_SRC}" "${DATA}"
  read -r v1_files v1_bytes v1_dirs v1_links < <(tree_stats "${DATA}")
  meta "manifest_v1_r${round}" "$(tree_manifest "${DATA}")"
  if ((round == 1)); then
    meta v1_files "${v1_files}"; meta v1_bytes "${v1_bytes}"
    meta v1_dirs "${v1_dirs}"; meta v1_symlinks "${v1_links}"
    bench_log "data v1: copy of ${DATA_SRC}: ${v1_files} regular files, ${v1_bytes} bytes ($((v1_bytes / 1024 / 1024)) MiB), ${v1_dirs} dirs, ${v1_links} symlinks"
  fi

  for ((i = 0; i < ${#order[@]}; i++)); do
    arm_init "${order[i]}" "${SCRATCH}/r${round}/${order[i]}" >>"${OUT}/logs/r${round}-${order[i]}.log" 2>&1 ||
      bench_die "${order[i]} init failed; see ${OUT}/logs/r${round}-${order[i]}.log"
    measure "${round}" "$((i + 1))" "${order[i]}" v1
  done

  mutate_data "${DATA}" "${SCRATCH}/mutation-r${round}.tsv"
  if ((round == 1)); then
    cp "${SCRATCH}/mutation-r1.tsv" "${OUT}/mutation.tsv"
    read -r v2_files v2_bytes v2_dirs v2_links < <(tree_stats "${DATA}")
    meta v2_files "${v2_files}"; meta v2_bytes "${v2_bytes}"
    meta v2_dirs "${v2_dirs}"; meta v2_symlinks "${v2_links}"
    meta mut_append "$(grep -c '^append' "${OUT}/mutation.tsv" || true)"
    meta mut_overwrite "$(grep -c '^overwrite' "${OUT}/mutation.tsv" || true)"
    meta mut_add "$(grep -c '^add' "${OUT}/mutation.tsv" || true)"
    meta mut_delete "$(grep -c '^delete' "${OUT}/mutation.tsv" || true)"
    bench_log "data v2: $(cut -f1 "${OUT}/mutation.tsv" | tail -n +2 | sort | uniq -c | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }'); ${v2_files} files, ${v2_bytes} bytes (list in mutation.tsv)"
  elif ! cmp -s "${SCRATCH}/mutation-r1.tsv" "${SCRATCH}/mutation-r${round}.tsv"; then
    bench_die "v2 mutation differs between round 1 and round ${round}: the data is not deterministic"
  fi
  meta "manifest_v2_r${round}" "$(tree_manifest "${DATA}")"

  for ((i = 0; i < ${#order[@]}; i++)); do
    measure "${round}" "$((i + 1))" "${order[i]}" v2
  done

  # Repositories of a finished round are not needed any more; keep the disk free
  # (and the kept key of the round's store leaves the kernel keyring).
  if has_arm strata-enc-kept; then
    "${STRATA_BIN}" --store "${SCRATCH}/r${round}/strata-enc-kept/repo" key lock >/dev/null ||
      bench_log "warning: key lock failed in round ${round}"
  fi
  rm -rf -- "${SCRATCH:?}/r${round}"
done

python3 "${SCRIPT_DIR}/report.py" "${OUT}"
bench_log "done: ${OUT}/results.json, ${OUT}/table.md"
