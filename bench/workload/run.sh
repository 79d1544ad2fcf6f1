#!/usr/bin/env bash
# bench/workload/run.sh — everyday work on each arm: untar, git, a real build, find/du, copies, dd, rm; and snapshots.
#
# Usage: bench/workload/run.sh [--quick] [--rounds N] [--out DIR] [--arms LIST] [--tree DIR] [--dd-mib N]
#
#   --quick       the tree /usr/include/c++ (~15 MB, ~1 600 files), dd of 64 MiB, a Debug
#                 build (-O0), 1 round
#   --rounds N    rounds (default 3, quick 1); arms interleaved, their order rotated each round
#   --out DIR     results folder (default bench/results/workload-<timestamp>)
#   --arms LIST   comma-separated subset of native,overlayfs,passthrough_ll,passthrough_ll-60s,
#                 passthrough_ll-60s-perm,fuse-overlayfs,strata
#                 (default native,overlayfs,fuse-overlayfs,passthrough_ll-60s,strata)
#   --tree DIR    the source tree (default /usr/include, ~130 MB, ~9 000 files)
#   --dd-mib N    MiB written by the dd phase (default 1024, quick 64)
#
# Environment: STRATA_BIN, or STRATA_BUILD (default <repo>/build): the strata binary.
# BENCH_WORKLOAD_CACHE: where the Debian source is kept (default bench/results/cache).
#
# Made once, not timed (bench/workload/inputs.sh): TREE with a .git of one commit
# packed in tree.tar; a repository of TREE with branches main and other (every
# 4th file changed, every 8th removed, 300 added); the Debian source of lz4
# (`apt-get source --download-only` with a sources list, package lists and cache
# of its own, kept in the cache folder: fetched once); TREE as a tar.bz2; DD_MIB
# MiB of data (half random, half base64 text). Then, for each arm, on a fresh,
# empty filesystem of that arm (bench/lib.sh: bench_arm_up), every phase after a
# sync (bench/workload/phases.sh):
#   untar               tar -xf tree.tar, then sync -f on the target (durable)
#   git-status-first    git status --porcelain right after (re-reads and re-hashes every file)
#   git-status-warm     the same again
#   git-status-cold     the same after sync; echo 3 > /proc/sys/vm/drop_caches
#   git-clone           git clone file://REPO (the pack transport, then the checkout of main)
#   git-checkout-other  git checkout other in the clone
#   git-checkout-back   git checkout main (then, not timed, git status must be clean)
#   build-configure     CMake configure of lz4 (build/cmake, Unix Makefiles, Release; quick
#                       Debug), no compiler launcher
#   build-make          make -j2 of it
#   find                find over everything made so far
#   du-cold             du -s over it after dropping the caches
#   snapshot            strata: `strata commit` of the workspace (everything made so far);
#                       beside the native arm, `restic backup` and `borg create` of its tree
#                       into new repositories (arms restic and borg)
#   cp-tree             cp -a TREE in
#   dd-sync             dd bs=1M of the DD_MIB MiB (read warm), then sync -f
#   tar-xjf             tar -xjf of TREE.tar.bz2
#   cp-etc              cp -a /etc in
#   rm-all              rm -rf of everything in the target
# Every git status must print nothing; otherwise the measurement fails. Lower is
# better for every phase. For each phase the daemon's CPU seconds are recorded
# (FUSE arms), and for strata the FUSE requests per opcode (`strata stats --json`
# just before and after the phase).
#
# Output: raw.tsv (round, position, arm, phase, seconds, cache, daemon_cpu_s),
# requests.tsv (round, arm, phase, opcode, count), meta.tsv, table.md (printed),
# logs/.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"
# shellcheck source-path=SCRIPTDIR source=inputs.sh
source "${SCRIPT_DIR}/inputs.sh"
# shellcheck source-path=SCRIPTDIR source=phases.sh
source "${SCRIPT_DIR}/phases.sh"

usage() { bench_usage 2 18; }

ARMS_CSV=native,overlayfs,fuse-overlayfs,passthrough_ll-60s,strata
TREE=
DD_MIB=
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
    --tree) TREE=$(bench_optarg "$@"); shift ;;
    --dd-mib) DD_MIB=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  ROUNDS=${ROUNDS:-1} TREE=${TREE:-/usr/include/c++} DD_MIB=${DD_MIB:-64} BUILD_TYPE=Debug
else
  ROUNDS=${ROUNDS:-3} TREE=${TREE:-/usr/include} DD_MIB=${DD_MIB:-1024} BUILD_TYPE=Release
fi
bench_check_int --rounds "${ROUNDS}" --dd-mib "${DD_MIB}"
[[ -d "${TREE}" ]] || bench_die "--tree ${TREE} is not a directory"
TREE=$(cd "${TREE}" && pwd -P)
bench_parse_arms "${BENCH_WRITABLE_ARMS}" "${ARMS_CSV}"

require_root
[[ -e /dev/fuse ]] || bench_die "/dev/fuse is missing: the FUSE arms cannot run"
bench_install git:git tar:tar bzip2:bzip2 cmake:cmake make:make gcc:gcc
if has_arm native; then bench_install restic:restic borg:borgbackup; fi
if has_arm fuse-overlayfs; then bench_install fuse-overlayfs:fuse-overlayfs fusermount3:fuse3; fi
if has_arm strata; then bench_find_bin STRATA_BIN src/cli/strata strata; fi

cleanup_install_trap
bench_results_dir workload
bench_scratch workload
RAW=${OUT}/raw.tsv
REQUESTS=${OUT}/requests.tsv
printf 'round\tposition\tarm\tphase\tseconds\tcache\tdaemon_cpu_s\n' >"${RAW}"
printf 'round\tarm\tphase\topcode\tcount\n' >"${REQUESTS}"
bench_meta_open "${OUT}/meta.tsv"
if has_arm passthrough_ll || has_arm passthrough_ll-60s || has_arm passthrough_ll-60s-perm; then
  BENCH_PT_BIN=${SCRATCH}/passthrough_ll
  bench_build_passthrough "${BENCH_PT_BIN}" "${OUT}/logs/passthrough_ll-build.log"
fi

# git with no user or system configuration, never a background gc.
export HOME=${SCRATCH}/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "${HOME}"
git_q() { git -c gc.auto=0 -c core.fsmonitor=false -c user.name=bench -c user.email=bench@localhost "$@"; }

# --- the inputs (not timed) -----------------------------------------------------------
workload_debian_source
workload_tarball
workload_repo
workload_archives

bench_meta_env
meta arms "${ARMS_CSV}"
meta tree "${TREE}"
meta tarball "${TREE_FILES} regular files (with .git), ${TREE_BYTES} bytes, $(stat -c %s "${TARBALL}") bytes of tar"
meta repo "${TREE} on branch main; branch other changes ${REPO_CHANGED} paths; cloned as ${REPO_URL}"
meta debian_source "$(basename "${SRC_ORIG}") ($(stat -c %s "${SRC_ORIG}") bytes), unpacked as ${SRC_TOPDIR}"
meta bz_archive "$(stat -c %s "${BZ_ARCHIVE}") bytes of tar.bz2 of ${TREE}"
meta dd_mib "${DD_MIB}"
meta git_version "$(git --version)"
meta tar_version "$(tar --version | head -n 1)"
meta cmake_version "$(cmake --version | head -n 1)"
meta gcc_version "$(gcc --version | head -n 1)"
if has_arm native; then
  meta restic_version "$(restic version)"
  meta borg_version "$(borg --version)"
fi
bench_meta_writable_arms
meta cmd_untar "tar -xf tree.tar -C TARGET && sync -f TARGET (timed together)"
meta cmd_git_status "git -C TARGET/tree status --porcelain (output must be empty)"
meta cmd_git "git clone -q file://REPO TARGET/clone; git -C TARGET/clone checkout -q other; ... checkout -q main"
meta cmd_build "cmake -S TARGET/${SRC_TOPDIR}/build/cmake -B TARGET/build -G 'Unix Makefiles' -DCMAKE_BUILD_TYPE=${BUILD_TYPE}; make -C TARGET/build -j2 (no compiler launcher)"
meta cmd_find_du "find TARGET | wc -l (warm); du -s TARGET (after drop_caches)"
meta cmd_snapshot "strata commit MP -m workload --branch workload --json; restic -r REPO backup --quiet TREE (restic 0.14 always encrypts: fixed password); borg create --compression zstd,3 REPO::workload TREE (borg init -e none); restic and borg of the native arm's tree, new repositories, caches in the arm's folder"
meta cmd_copies "cp -a TREE TARGET/cp-tree; dd if=DATA of=TARGET/dd.bin bs=1M && sync -f TARGET; tar -xjf TREE.tar.bz2 -C TARGET/xjf; cp -a /etc TARGET/etc; rm -rf TARGET/*"
meta cache_state "every phase after a sync; inputs read warm (cat before); git-status-cold and du-cold: sync; echo 3 > /proc/sys/vm/drop_caches just before (Cached kB in raw.tsv)"

# --- measurements -----------------------------------------------------------------
bench_log "results: ${OUT}; arms: ${ARMS[*]}; rounds: ${ROUNDS}; tree ${TREE}: ${TREE_FILES} files, ${TREE_BYTES} bytes"
for ((round = 1; round <= ROUNDS; round++)); do
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  meta "order_r${round}" "${order[*]}"
  for ((i = 0; i < ${#order[@]}; i++)); do
    measure "${round}" "$((i + 1))" "${order[i]}"
  done
done
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"

python3 "${SCRIPT_DIR}/report.py" "${OUT}" | tee "${OUT}/table.md"
((FAILED == 0)) || bench_die "some measurements failed (see the logs in ${OUT}/logs)"
