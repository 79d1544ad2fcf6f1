#!/usr/bin/env bash
# Writes through a shared mapping and the commit's cut (docs/guarantees.md):
#  - an idle writer: a process maps an 8 MiB file MAP_SHARED, writes a
#    generation number into every page, never calls msync, and sleeps; every
#    page of the commit made then holds the last generation;
#  - a running writer: it keeps writing generation after generation; every
#    page of a commit holds a generation it wrote, at least the one it had
#    completed when `strata commit` started (pages may come from different
#    generations: the cut is per page for a mapping).
# The kernel starts writing dirty pages back on syncfs but does not wait for a
# FUSE daemon; before the fix the commit missed the pages still on the way.
source "$(dirname "$0")/lib.sh"
use_mountpoint

RUNS=${RUNS:-4}
PAGES=2048
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name w "$MP"
head -c $((PAGES * 4096)) /dev/zero >"$MP/mapped"
expect_ok strata commit "$MP" -m zeros --branch main

# writer.py FILE PROGRESS MODE [GENERATIONS]: writes generations into every
# page of FILE through a shared mapping; after each full pass stores the
# generation in PROGRESS (a file outside the mount). idle: GENERATIONS passes,
# then sleeps; run: passes until killed.
cat >"$WORK/writer.py" <<'EOF'
import mmap, os, struct, sys, time
path, progress, mode = sys.argv[1:4]
size = os.path.getsize(path)
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)  # the mapping keeps the file open
pfd = os.open(progress, os.O_RDWR | os.O_CREAT, 0o644)
def done(g):
    os.pwrite(pfd, struct.pack("<Q", g), 0)
def one(g):
    b = struct.pack("<Q", g)
    for off in range(0, size, 4096):
        m[off:off + 8] = b
if mode == "idle":
    start, count = int(sys.argv[4]), int(sys.argv[5])
    for g in range(start, start + count):
        one(g)
    done(start + count - 1)
    while True:
        time.sleep(1)
else:
    g = int(sys.argv[4])
    while True:
        g += 1
        one(g)
        done(g)
EOF
# generations FILE: "min max" of the generations in the pages of FILE.
generations() {
  python3 - "$1" "$PAGES" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
pages = int(sys.argv[2])
assert len(data) == pages * 4096, len(data)
g = [struct.unpack_from("<Q", data, p * 4096)[0] for p in range(pages)]
print(min(g), max(g), sum(1 for x in g if x != max(g)))
EOF
}
progress_of() { python3 -c 'import struct,sys; print(struct.unpack("<Q", open(sys.argv[1],"rb").read(8))[0])' "$1"; }
wait_progress() {  # FILE AT_LEAST
  for _ in $(seq 300); do
    [[ -s $1 ]] && (( $(progress_of "$1") >= $2 )) && return 0
    sleep 0.05
  done
  fail "the writer did not reach generation $2"
}

step "an idle writer: every page of the commit holds its last generation ($RUNS runs)"
for run in $(seq "$RUNS"); do
  rm -f "$WORK/progress"
  first=$((run * 100))
  python3 "$WORK/writer.py" "$MP/mapped" "$WORK/progress" idle "$first" 3 &
  writer=$!
  BG_PIDS+=("$writer")
  wait_progress "$WORK/progress" $((first + 2))
  sleep 1  # idle: nothing but dirty pages in the kernel
  expect_ok strata commit "$MP" -m "idle $run" --json
  c=$(json 'd["commit"]')
  expect_ok strata cat "$c:mapped"
  read -r lo hi stale <<<"$(generations "$OUT")"
  kill "$writer"
  wait "$writer" 2>/dev/null || true
  [[ $lo == $((first + 2)) && $hi == $((first + 2)) ]] ||
    fail "run $run: the commit holds generations $lo..$hi, $stale pages older than $hi; the writer's last was $((first + 2))"
done

step "a running writer: every page holds a generation at least as new as the one completed at the commit's start"
rm -f "$WORK/progress"
python3 "$WORK/writer.py" "$MP/mapped" "$WORK/progress" run 1000 &
writer=$!
BG_PIDS+=("$writer")
wait_progress "$WORK/progress" 1002
for run in $(seq "$RUNS"); do
  before=$(progress_of "$WORK/progress")
  expect_ok strata commit "$MP" -m "running $run" --json
  c=$(json 'd["commit"]')
  after=$(progress_of "$WORK/progress")
  expect_ok strata cat "$c:mapped"
  read -r lo hi stale <<<"$(generations "$OUT")"
  (( lo >= before && hi <= after + 1 )) ||
    fail "run $run: the commit holds generations $lo..$hi; $before was complete before the commit, $after after it"
  echo "run $run: generations $lo..$hi (complete before: $before, after: $after)" >&2
done
kill "$writer"
wait "$writer" 2>/dev/null || true
expect_ok strata umount "$MP"
