#!/usr/bin/env bash
# bench/vm/run.sh — a VM disk image on a workspace: qemu-img, qemu-io, fio and dd
# on native, passthrough_ll and strata (two transports) in one run, then strata's commit of the
# image after scattered 4 KiB writes.
#
# Usage: bench/vm/run.sh [--quick] [--size-gib G] [--ops N] [--runtime S] [--scatter-mib M]
#                        [--arms LIST] [--rounds R] [--out DIR]
#
#   --size-gib G     image size (default 10; quick 1)
#   --ops N          qemu-io operations per random phase (default 4000; quick 500)
#   --runtime S      seconds of each fio phase (default 20; quick 3)
#   --scatter-mib M  MiB of random 4 KiB writes before the measured commit (default 100; quick 16)
#   --arms LIST      comma-separated subset of native,passthrough_ll,strata,strata-kernel (default all)
#   --rounds R       rounds (default 1); each round starts from fresh arms
#   --out DIR        results folder (default bench/results/vm-<timestamp>)
#
# Environment: STRATA_BIN, or STRATA_BUILD (default <repo>/build): the strata binary.
#
# Arms, each on a fresh filesystem (bench_arm_up), in turn, the order rotated each round:
#   native           a plain directory
#   passthrough_ll   libfuse 3.14's example with its defaults, built with one change:
#                    its backing files are opened without O_DIRECT. As shipped it
#                    opens them with the caller's flags and writes from its request
#                    buffer, which is not aligned, so every O_DIRECT write fails with
#                    EINVAL (the example has no option for it). Changed, the FUSE side
#                    stays direct (the kernel sends each O_DIRECT request to the daemon,
#                    past its page cache) and the daemon writes through the page cache
#                    of its backing file, as strata's daemon does with its data files
#   strata           a new workspace, `strata mount` with its defaults (the libfuse
#                    transport: the daemon serves every read and write)
#   strata-kernel    the same with --transport strata: FUSE passthrough on, so an image
#                    whose bytes are all local is read and written by the kernel itself
#                    (docs/passthrough.md); after a commit the daemon serves it
# Phases, in order:
#   create-raw, create-qcow2     `qemu-img create -f raw|qcow2 IMG G`: seconds
#   qio-{none,wb}-{randwrite,randread}-4k
#                                `qemu-io -f raw -t none|writeback` on the raw image,
#                                N writes (then reads) of 4 KiB at random 4 KiB offsets,
#                                commands on stdin: IOPS = N / wall time
#   qio-{none,wb}-seq{write,read}-1m
#                                the first 1 GiB (quick 256 MiB) in 1 MiB writes, then reads: MiB/s
#   fio-{libaio,io_uring}-{randwrite,randread}-4k
#                                `fio --direct=1 --ioengine=E --iodepth=16 --bs=4k` on the raw image: IOPS
#   dd-direct-write, dd-sync-write, dd-direct-read
#                                `dd bs=1M count=256 oflag=direct|oflag=sync` into a new file,
#                                `iflag=direct` reading it back: MiB/s
# strata arms only, on the same raw image after all the above:
#   commit-first        seconds of the first `strata commit` (the image as the phases left it)
#   committed-fio-libaio-randread-4k
#                       the fio random read phase again, on the committed image (its
#                       bytes now the base commit's: the daemon serves them)
#   commit-scattered    M MiB of 4 KiB writes at random offsets (fio, direct, libaio,
#                       iodepth 16: their IOPS as committed-scatter-randwrite-4k), then
#                       the timed commit: seconds, bytes hashed, and hashed / written. An image
#                       that was content-defined turns fixed here (one pass over its data,
#                       docs/format/chunking.md)
#   commit-scattered-again
#                       the same again: the commit of an image already cut at fixed offsets
#   full-read           seconds to read the whole image once (caches dropped), the
#                       reference "a full re-read" the commit must stay well under
# The machine may be shared: ratios between arms of one run are what to read.
#
# Output: raw.tsv (round, arm, phase, value, unit, better), meta.tsv, table.md (printed),
# logs/. Images live in /var/tmp/strata-bench-vm-<pid>, removed at exit.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${SCRIPT_DIR}/../lib.sh"

usage() { bench_usage 2 46; }

SIZE_GIB='' OPS='' RUNTIME='' SCATTER_MIB=''
ARMS_CSV="native,passthrough_ll,strata,strata-kernel"
while [[ $# -gt 0 ]]; do
  if bench_common_opt "$@"; then shift "${BENCH_SHIFT}"; continue; fi
  case "$1" in
    --size-gib) SIZE_GIB=$(bench_optarg "$@"); shift ;;
    --ops) OPS=$(bench_optarg "$@"); shift ;;
    --runtime) RUNTIME=$(bench_optarg "$@"); shift ;;
    --scatter-mib) SCATTER_MIB=$(bench_optarg "$@"); shift ;;
    --arms) ARMS_CSV=$(bench_optarg "$@"); shift ;;
    *) usage >&2; bench_die "unknown argument: $1" ;;
  esac
  shift
done
if ((QUICK)); then
  SIZE_GIB=${SIZE_GIB:-1} OPS=${OPS:-500} RUNTIME=${RUNTIME:-3} SCATTER_MIB=${SCATTER_MIB:-16} SEQ_MIB=256
else
  SIZE_GIB=${SIZE_GIB:-10} OPS=${OPS:-4000} RUNTIME=${RUNTIME:-20} SCATTER_MIB=${SCATTER_MIB:-100} SEQ_MIB=1024
fi
ROUNDS=${ROUNDS:-1}
bench_check_int --size-gib "${SIZE_GIB}" --ops "${OPS}" --runtime "${RUNTIME}" --scatter-mib "${SCATTER_MIB}" \
  --rounds "${ROUNDS}"
bench_parse_arms "native,passthrough_ll,strata,strata-kernel" "${ARMS_CSV}"

require_root
bench_install qemu-img:qemu-utils qemu-io:qemu-utils fio:fio
if has_arm strata || has_arm strata-kernel; then
  [[ -e /dev/fuse ]] || bench_die "no /dev/fuse: strata's workspace is a FUSE mount"
  bench_find_bin STRATA_BIN src/cli/strata strata
fi

cleanup_install_trap
bench_results_dir vm
bench_scratch vm
if has_arm passthrough_ll; then
  BENCH_PT_BIN=${SCRATCH}/passthrough_ll
  pt_src=${SCRATCH}/passthrough_ll.c
  sed -e 's/(fi->flags | O_CREAT) & ~O_NOFOLLOW/(fi->flags | O_CREAT) \& ~(O_NOFOLLOW | O_DIRECT)/' \
    -e 's/open(buf, fi->flags & ~O_NOFOLLOW)/open(buf, fi->flags \& ~(O_NOFOLLOW | O_DIRECT))/' \
    "${BENCH_PASSTHROUGH_SRC}" >"${pt_src}"
  [[ $(grep -c 'O_NOFOLLOW | O_DIRECT' "${pt_src}") == 2 ]] ||
    bench_die "${BENCH_PASSTHROUGH_SRC} changed: its two backing opens were not found to drop O_DIRECT from"
  bench_build_passthrough "${BENCH_PT_BIN}" "${OUT}/logs/passthrough_ll-build.log" "${pt_src}"
fi
mkdir -p "${OUT}/logs"

RAW=${OUT}/raw.tsv
printf 'round\tarm\tphase\tvalue\tunit\tbetter\n' >"${RAW}"
bench_meta_open "${OUT}/meta.tsv"
bench_meta_env
bench_meta_writable_arms
meta arms "${ARMS_CSV}"
meta size_gib "${SIZE_GIB}"
meta ops "${OPS}"
meta runtime_s "${RUNTIME}"
meta scatter_mib "${SCATTER_MIB}"
meta cmd_passthrough_ll "passthrough_ll -f -o source=SRC MP, built from ${BENCH_PASSTHROUGH_SRC} with O_DIRECT dropped from its two backing opens (fi->flags & ~(O_NOFOLLOW | O_DIRECT))"
meta cmd_strata-kernel "as strata, with strata mount --transport strata (FUSE passthrough on by default)"
meta qemu_version "$(qemu-img --version | head -n 1)"
meta fio_version "$(fio --version)"
meta disk "$(df -h --output=source,fstype "${SCRATCH}" | tail -n 1)"
meta cache_state "qemu-io and fio phases run right after the image was written (warm); full-read drops caches first"

# record ROUND ARM PHASE VALUE UNIT BETTER
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"${RAW}"; bench_log "round $1 $2 $3: $4 $5"; }
# measure ROUND ARM PHASE UNIT BETTER CMD...: CMD prints the value; a phase an
# arm refuses (passthrough_ll fails every O_DIRECT request with EINVAL) is
# listed in failed.tsv and shown as such, and the run goes on.
measure() {
  local r=$1 arm=$2 phase=$3 unit=$4 better=$5 v
  shift 5
  if v=$("$@") && [[ -n ${v} ]]; then
    record "${r}" "${arm}" "${phase}" "${v}" "${unit}" "${better}"
  else
    printf '%s\t%s\t%s\n' "${r}" "${arm}" "${phase}" >>"${OUT}/failed.tsv"
    bench_log "round ${r} ${arm} ${phase}: FAILED (see logs/r${r}-${arm}.log)"
  fi
}
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s }'; }

# qio_random IMG CACHE KIND LOG: N qemu-io commands at random 4 KiB offsets on stdin; prints the seconds.
qio_random() {
  local img=$1 cache=$2 kind=$3 log=$4
  python3 - "${OPS}" $((SIZE_GIB << 18)) "${kind}" >"${SCRATCH}/cmds" <<'PY'
import random, sys
n, blocks, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(42)  # the same offsets on every arm
for i in range(n):
    off = rnd.randrange(blocks) * 4096
    print("write -P %d %d 4k" % (1 + i % 255, off) if kind == "write" else "read %d 4k" % off)
PY
  qio_rate "${OPS}" "${img}" "${cache}" "${log}"
}

qio_run() { qemu-io -f raw -t "$1" "$2" <"${SCRATCH}/cmds" >"${SCRATCH}/qio.out"; }
# qio_rate N IMG CACHE LOG: N / seconds of the commands in cmds; fails if any command did.
qio_rate() {
  local secs
  secs=$(timeit qio_run "$3" "$2" 2>>"$4") || return 1
  cat "${SCRATCH}/qio.out" >>"$4"
  ! grep -q failed "${SCRATCH}/qio.out" || return 1
  rate "$1" "${secs}"
}

# qio_seq IMG CACHE KIND MIB LOG: MIB 1 MiB commands from offset 0; prints the seconds.
qio_seq() {
  local img=$1 cache=$2 kind=$3 mib=$4 log=$5 i
  for ((i = 0; i < mib; i++)); do
    if [[ ${kind} == write ]]; then echo "write -P 7 ${i}M 1M"; else echo "read ${i}M 1M"; fi
  done >"${SCRATCH}/cmds"
  qio_rate "${mib}" "${img}" "${cache}" "${log}"
}

# fio_iops IMG ENGINE RW LOG [FIO_ARGS...]: fio's IOPS of one phase (RUNTIME
# seconds, unless FIO_ARGS bound it by --io_size).
fio_iops() {
  local img=$1 engine=$2 rw=$3 log=$4 json=${SCRATCH}/fio.json
  shift 4
  local -a bound=(--time_based --runtime="${RUNTIME}" --randrepeat=1)
  if (($# > 0)); then bound=("$@"); fi
  fio --name=vm --filename="${img}" --direct=1 --ioengine="${engine}" --iodepth=16 --bs=4k --rw="${rw}" \
    "${bound[@]}" --output-format=json --output="${json}" >>"${log}" 2>&1 || return 1
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]; print("%.1f" % (j["write"]["iops"] + j["read"]["iops"]))' "${json}"
}

# dd_mibs LOG ARGS...: dd's MiB/s for 256 MiB.
dd_mibs() {
  local log=$1 secs
  shift
  secs=$(timeit dd bs=1M count=256 status=none "$@" 2>>"${log}") || return 1
  rate 256 "${secs}"
}

# arm_phases ROUND ARM: every phase on the arm's filesystem (BENCH_TARGET).
arm_phases() {
  local r=$1 arm=$2 log=${OUT}/logs/r$1-$2.log t=${BENCH_TARGET} secs cache tag kind engine rw
  secs=$(timeit qemu-img create -f raw "${t}/disk.raw" "${SIZE_GIB}G" 2>>"${log}") || bench_die "qemu-img create failed"
  record "${r}" "${arm}" create-raw "${secs}" s lower
  secs=$(timeit qemu-img create -f qcow2 "${t}/disk.qcow2" "${SIZE_GIB}G" 2>>"${log}") || bench_die "qemu-img create failed"
  record "${r}" "${arm}" create-qcow2 "${secs}" s lower
  for cache in none writeback; do
    tag=$([[ ${cache} == none ]] && echo none || echo wb)
    for kind in write read; do
      measure "${r}" "${arm}" "qio-${tag}-rand${kind}-4k" IOPS higher qio_random "${t}/disk.raw" "${cache}" "${kind}" "${log}"
    done
    for kind in write read; do
      measure "${r}" "${arm}" "qio-${tag}-seq${kind}-1m" MiB/s higher qio_seq "${t}/disk.raw" "${cache}" "${kind}" "${SEQ_MIB}" "${log}"
    done
  done
  for engine in libaio io_uring; do
    for rw in randwrite randread; do
      measure "${r}" "${arm}" "fio-${engine}-${rw}-4k" IOPS higher fio_iops "${t}/disk.raw" "${engine}" "${rw}" "${log}"
    done
  done
  measure "${r}" "${arm}" dd-direct-write MiB/s higher dd_mibs "${log}" if=/dev/zero of="${t}/dd-direct" oflag=direct
  measure "${r}" "${arm}" dd-sync-write MiB/s higher dd_mibs "${log}" if=/dev/zero of="${t}/dd-sync" oflag=sync
  # Read back what the buffered dd wrote: a file the direct dd may have failed to write.
  measure "${r}" "${arm}" dd-direct-read MiB/s higher dd_mibs "${log}" if="${t}/dd-sync" of=/dev/null iflag=direct
  rm -f -- "${t}/dd-direct" "${t}/dd-sync"
  if [[ ${arm} == strata* ]]; then strata_commits "${r}" "${arm}" "${log}"; fi
}

# strata_commits ROUND ARM LOG: the commit phases of a strata arm.
strata_commits() {
  local r=$1 arm=$2 log=$3 t=${BENCH_TARGET} store=${BENCH_ARM_DIR}/store json=${OUT}/logs/r$1-$2-commit.json secs hashed
  vm_commit() { "${STRATA_BIN}" --store "${store}" commit "${t}" -m "$1" --branch vm --json >"${json}" 2>>"${log}"; }
  secs=$(timeit vm_commit first) || bench_die "strata commit failed; see ${log}"
  record "${r}" "${arm}" commit-first "${secs}" s lower
  measure "${r}" "${arm}" committed-fio-libaio-randread-4k IOPS higher fio_iops "${t}/disk.raw" libaio randread "${log}"
  local pass seed=1 iops
  for pass in scattered scattered-again; do
    iops=$(fio_iops "${t}/disk.raw" libaio randwrite "${log}" --io_size="${SCATTER_MIB}M" --randseed="${seed}") ||
      bench_die "fio scatter failed; see ${log}"
    if [[ ${pass} == scattered ]]; then record "${r}" "${arm}" committed-scatter-randwrite-4k "${iops}" IOPS higher; fi
    seed=$((seed + 1))
    secs=$(timeit vm_commit "${pass}") || bench_die "strata commit failed; see ${log}"
    hashed=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stats"]["bytes_hashed"])' "${json}")
    record "${r}" "${arm}" "commit-${pass}" "${secs}" s lower
    record "${r}" "${arm}" "commit-${pass}-hashed-mib" "$(rate "${hashed}" $((1 << 20)))" MiB lower
    record "${r}" "${arm}" "commit-${pass}-hashed-per-written" "$(rate "${hashed}" $((SCATTER_MIB << 20)))" x lower
  done
  drop_caches
  secs=$(timeit dd if="${t}/disk.raw" of=/dev/null bs=1M status=none 2>>"${log}") || bench_die "full read failed"
  record "${r}" "${arm}" full-read "${secs}" s lower
}

bench_log "results: ${OUT}; arms: ${ARMS[*]}; ${SIZE_GIB} GiB images, ${OPS} qemu-io ops, ${RUNTIME} s fio, ${SCATTER_MIB} MiB scattered"
for ((round = 1; round <= ROUNDS; round++)); do
  mapfile -t order < <(bench_rotate "${round}" "${ARMS[@]}")
  meta "order_r${round}" "${order[*]}"
  for arm in "${order[@]}"; do
    BENCH_STRATA_MOUNT_ARGS=()
    [[ ${arm} == strata-kernel ]] && BENCH_STRATA_MOUNT_ARGS=(--transport strata)
    bench_arm_up "$([[ ${arm} == strata* ]] && echo strata || echo "${arm}")" "${SCRATCH}/r${round}-${arm}" \
      "${OUT}/logs/r${round}-${arm}.log"
    arm_phases "${round}" "${arm}"
    bench_strata_stats "${OUT}/logs/r${round}-${arm}-stats.json"
    bench_arm_down "${OUT}/logs/r${round}-${arm}.log"
  done
done

python3 "${SCRIPT_DIR}/report.py" "${OUT}" | tee "${OUT}/table.md"
