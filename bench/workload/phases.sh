# shellcheck shell=bash
# FAILED is read by run.sh, TREE set there:
# shellcheck disable=SC2034,SC2153
# bench/workload/phases.sh — the timed phases of the workload suite, one arm at a
# time, and what is recorded around each: its wall seconds, the CPU seconds its
# FUSE daemon spent (utime + stime of /proc/PID/stat, every thread), and for
# strata the FUSE requests per opcode (`strata stats --json` before and after).
#
# Sourced by bench/workload/run.sh after bench/workload/inputs.sh; needs RAW,
# REQUESTS, OUT, TREE, the inputs' variables and git_q.

WORKLOAD_CLK_TCK=$(getconf CLK_TCK)
readonly WORKLOAD_CLK_TCK
# Fixed, documented benchmark password: restic always encrypts; the secret is irrelevant here.
readonly WORKLOAD_RESTIC_PASSWORD="strata-bench-not-a-secret"
FAILED=0

# daemon_cpu_ticks PID: utime + stime of PID in clock ticks (nothing without a PID).
daemon_cpu_ticks() {
  [[ -n "$1" ]] || return 0
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"${stat}"
  echo $((f[11] + f[12]))  # fields 14 and 15 of the whole line
}

# request_counts_delta BEFORE AFTER ROUND ARM PHASE: one requests.tsv line per
# opcode whose count grew between two `strata stats --json` files.
request_counts_delta() {
  python3 - "$@" >>"${REQUESTS}" <<'PY'
import json, sys
before, after, rnd, arm, phase = sys.argv[1:]
def counts(path):
    return {name: op["count"] for name, op in json.load(open(path))["operations"].items()}
b, a = counts(before), counts(after)
for name, n in sorted(a.items()):
    if n - b.get(name, 0) > 0:
        print(f"{rnd}\t{arm}\t{phase}\t{name}\t{n - b.get(name, 0)}")
PY
}

# timed_step ROUND POSITION ARM PHASE CACHE LOG CMD...: sync (not timed), then CMD
# timed; appends to raw.tsv (and requests.tsv for strata). ARM may be a snapshot
# peer (restic, borg) run beside the native arm: then no daemon is measured.
timed_step() {
  local round=$1 pos=$2 arm=$3 phase=$4 cache=$5 log=$6 secs cpu0 cpu1 cpu=
  shift 6
  local stats=${OUT}/logs/r${round}-${arm}-${phase}
  local daemon=${BENCH_ARM_PID}
  [[ "${arm}" == "${BENCH_ARM}" ]] || daemon=
  sync
  printf '\n=== %s: %s\n' "${phase}" "$*" >>"${log}"
  if [[ "${arm}" == strata ]]; then bench_strata_stats "${stats}-before.json"; fi
  cpu0=$(daemon_cpu_ticks "${daemon}")
  if ! secs=$(timeit "$@" 2>>"${log}"); then
    bench_log "FAILED: round ${round} ${arm} ${phase}; see ${log}"
    FAILED=1
    return 1
  fi
  cpu1=$(daemon_cpu_ticks "${daemon}")
  if [[ -n "${cpu0}" && -n "${cpu1}" ]]; then
    cpu=$(awk -v a="${cpu0}" -v b="${cpu1}" -v t="${WORKLOAD_CLK_TCK}" 'BEGIN { printf "%.2f", (b - a) / t }')
  fi
  if [[ "${arm}" == strata ]]; then
    bench_strata_stats "${stats}-after.json"
    request_counts_delta "${stats}-before.json" "${stats}-after.json" "${round}" "${arm}" "${phase}" ||
      bench_log "warning: no request counts for ${arm} ${phase}"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${round}" "${pos}" "${arm}" "${phase}" "${secs}" "${cache}" "${cpu}" >>"${RAW}"
  bench_log "round ${round} ${arm} ${phase}: ${secs} s${cpu:+ (daemon ${cpu} s CPU)}"
}

# --- the commands of the phases -----------------------------------------------------
untar() { tar -xf "${TARBALL}" -C "$1" && sync -f "$1"; }

# git_status_clean DIR: git status, failing when it reports any change.
git_status_clean() {
  local changes
  changes=$(git_q -C "$1" status --porcelain) || return 1
  if [[ -n "${changes}" ]]; then
    printf 'git status is not clean:\n%s\n' "$(head -n 20 <<<"${changes}")" >&2
    return 1
  fi
}

# The build runs the compiler itself: no compiler cache or flags from the caller.
build_env() {
  env -u CMAKE_C_COMPILER_LAUNCHER -u CMAKE_CXX_COMPILER_LAUNCHER -u CC -u CFLAGS -u CPPFLAGS -u LDFLAGS \
    -u MAKEFLAGS -u CMAKE_GENERATOR "$@"
}
build_configure() {
  build_env cmake -S "$1/${SRC_TOPDIR}/build/cmake" -B "$1/build" -G "Unix Makefiles" \
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
}
build_make() { build_env make -C "$1/build" -j2; }

count_files() { find "$1" | wc -l; }
dd_sync() { dd if="${DD_SOURCE}" of="$1/dd.bin" bs=1M status=none && sync -f "$1"; }
tar_xjf() { mkdir "$1/xjf" && tar -xjf "${BZ_ARCHIVE}" -C "$1/xjf"; }
rm_all() { find "$1" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +; }

restic_peer() { RESTIC_PASSWORD=${WORKLOAD_RESTIC_PASSWORD} RESTIC_CACHE_DIR=$1/cache restic -r "$1/repo" "${@:2}"; }
borg_peer() { BORG_BASE_DIR=$1/base BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes borg "${@:2}"; }
strata_commit() { "${STRATA_BIN}" --store "${BENCH_ARM_DIR}/store" commit "$1" -m workload --branch workload --json; }

# snapshot_peers ROUND POSITION LOG TREE: restic backup and borg create of the native
# arm's tree, each into a new repository (the initialisation not timed).
snapshot_peers() {
  local round=$1 pos=$2 log=$3 tree=$4 peers=${BENCH_ARM_DIR}/peers
  if command -v restic >/dev/null; then
    mkdir -p "${peers}/restic"
    restic_peer "${peers}/restic" init >>"${log}" 2>&1 || bench_die "restic init failed; see ${log}"
    timed_step "${round}" "${pos}" restic snapshot warm "${log}" restic_peer "${peers}/restic" backup --quiet "${tree}" || true
  fi
  if command -v borg >/dev/null; then
    mkdir -p "${peers}/borg"
    borg_peer "${peers}/borg" init -e none "${peers}/borg/repo" >>"${log}" 2>&1 || bench_die "borg init failed; see ${log}"
    timed_step "${round}" "${pos}" borg snapshot warm "${log}" \
      borg_peer "${peers}/borg" create --compression zstd,3 "${peers}/borg/repo::workload" "${tree}" || true
  fi
}

# measure ROUND POSITION ARM: every phase on a fresh filesystem of ARM. A failed
# phase is recorded (FAILED) and skips only the phases that need what it made.
measure() {
  local round=$1 pos=$2 arm=$3
  local log=${OUT}/logs/r${round}-${arm}.log
  bench_arm_up "${arm}" "${SCRATCH}/r${round}-${arm}" "${log}"
  local t=${BENCH_TARGET}
  step() { timed_step "${round}" "${pos}" "${arm}" "$@"; }

  cat "${TARBALL}" >/dev/null
  if step untar warm "${log}" untar "${t}"; then
    if step git-status-first warm "${log}" git_status_clean "${t}/tree" &&
      step git-status-warm warm "${log}" git_status_clean "${t}/tree"; then
      drop_caches
      step git-status-cold "cold (Cached ${BENCH_CACHED_KB} kB after drop)" "${log}" git_status_clean "${t}/tree" || true
    fi
  fi

  if step git-clone warm "${log}" git_q clone -q "${REPO_URL}" "${t}/clone" &&
    step git-checkout-other warm "${log}" git_q -C "${t}/clone" checkout -q other &&
    step git-checkout-back warm "${log}" git_q -C "${t}/clone" checkout -q main; then
    git_status_clean "${t}/clone" 2>>"${log}" || { bench_log "FAILED: ${arm}: the clone is not clean after the checkouts"; FAILED=1; }
  fi

  tar -xf "${SRC_ORIG}" -C "${t}"
  if step build-configure warm "${log}" build_configure "${t}"; then
    step build-make warm "${log}" build_make "${t}" || true
  fi

  step find warm "${log}" count_files "${t}" || true
  drop_caches
  step du-cold "cold (Cached ${BENCH_CACHED_KB} kB after drop)" "${log}" du -s "${t}" || true

  # The snapshot of everything made so far (strata's commit; restic and borg beside native).
  case "${arm}" in
    strata) step snapshot warm "${log}" strata_commit "${t}" || true ;;
    native) snapshot_peers "${round}" "${pos}" "${log}" "${t}" ;;
  esac

  step cp-tree warm "${log}" cp -a -- "${TREE}" "${t}/cp-tree" || true
  cat "${DD_SOURCE}" >/dev/null
  step dd-sync warm "${log}" dd_sync "${t}" || true
  cat "${BZ_ARCHIVE}" >/dev/null
  step tar-xjf warm "${log}" tar_xjf "${t}" || true
  step cp-etc warm "${log}" cp -a /etc "${t}/etc" || true
  step rm-all warm "${log}" rm_all "${t}" || true

  bench_strata_stats "${OUT}/logs/r${round}-${arm}-stats.json"
  bench_arm_down "${log}"
}
