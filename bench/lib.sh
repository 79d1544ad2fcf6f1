# shellcheck shell=bash
# bench/lib.sh — small helpers shared by the benchmark suites under bench/.
#
# Source it from a suite script that already runs with `set -euo pipefail`:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#   cleanup_install_trap                 # once, early
#   cleanup_register rm -rf -- "$dir"    # run at exit, also on failure / Ctrl-C
#   drop_caches                          # cold cache before a timed step
#   secs=$(timeit some command args)     # elapsed wall seconds on stdout
#
# Rules these helpers follow (see shared BENCHMARKING.md): wall time comes from
# `date +%s.%N`, a cold cache is made with `sync; echo 3 > drop_caches` and is
# verified, and nothing a suite creates outside its results folder is left behind.

# Guard against being sourced twice (two suites sourcing each other's helpers).
if [[ -n "${_BENCH_LIB_LOADED:-}" ]]; then
  return 0
fi
_BENCH_LIB_LOADED=1

# Print a message to stderr, prefixed so it stands out in long runs.
bench_log() {
  printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

# Print an error to stderr and exit non-zero (the EXIT trap still cleans up).
bench_die() {
  printf '[bench] ERROR: %s\n' "$*" >&2
  exit 1
}

# Exit with a clear message unless running as root: dropping the page cache
# and installing packages both need it.
require_root() {
  if [[ ${EUID} -ne 0 ]]; then
    bench_die "this benchmark must run as root (it drops the page cache via /proc/sys/vm/drop_caches)"
  fi
}

# Current time as seconds since the epoch with nanoseconds, e.g. 1700000000.123456789.
now() {
  date +%s.%N
}

# Kilobytes of page cache currently held ("Cached" in /proc/meminfo).
cached_kb() {
  awk '/^Cached:/ { print $2; exit }' /proc/meminfo
}

# Make the next step run cold: write back dirty pages, then drop the page cache,
# dentries and inodes. Sets BENCH_CACHED_KB to the "Cached" figure measured right
# after the drop, so a suite can record that the drop really happened (a drop that
# silently failed would otherwise turn a "cold" number into a warm one).
# shellcheck disable=SC2034  # read by the suites that source this file
BENCH_CACHED_KB=
drop_caches() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
  # shellcheck disable=SC2034
  BENCH_CACHED_KB=$(cached_kb)
}

# Run a command and print its elapsed wall time in seconds (3 decimals) on stdout.
# The command's own stdout is sent to stderr so that `secs=$(timeit cmd ...)`
# captures only the number; redirect stderr to a log to keep the command's output.
# Returns the command's exit status (and prints nothing on stdout if it failed).
timeit() {
  local start end rc=0
  start=$(now)
  "$@" >&2 || rc=$?
  end=$(now)
  if [[ ${rc} -ne 0 ]]; then
    return "${rc}"
  fi
  awk -v s="${start}" -v e="${end}" 'BEGIN { printf "%.3f\n", e - s }'
}

# --- cleanup at exit --------------------------------------------------------
# Commands registered here run in reverse order when the script exits, whether
# it finished, failed under `set -e`, or was stopped with Ctrl-C / SIGTERM.
_BENCH_CLEANUPS=()
_BENCH_MAIN_PID=

# Register a command (given as separate words, quoted as you would run it).
cleanup_register() {
  local cmd
  printf -v cmd '%q ' "$@"
  _BENCH_CLEANUPS+=("${cmd}")
}

_bench_run_cleanups() {
  # Subshells (e.g. command substitutions) must not run the parent's cleanups.
  [[ "${BASHPID}" == "${_BENCH_MAIN_PID}" ]] || return 0
  local i
  for ((i = ${#_BENCH_CLEANUPS[@]} - 1; i >= 0; i--)); do
    eval "${_BENCH_CLEANUPS[i]}" || true
  done
  _BENCH_CLEANUPS=()
}

# Install the traps once, early in the suite script. INT/TERM are turned into an
# exit with the conventional status so the single EXIT trap does the work.
cleanup_install_trap() {
  _BENCH_MAIN_PID=${BASHPID}
  trap '_bench_run_cleanups' EXIT
  trap 'bench_log "interrupted, cleaning up"; exit 130' INT
  trap 'bench_log "terminated, cleaning up"; exit 143' TERM
}
