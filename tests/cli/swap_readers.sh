#!/usr/bin/env bash
# Programs keep running across `strata reset --hard` and `strata rebase`: a
# reader loop (lstat of paths and a listing of a 1 500-entry directory, all
# present in both trees) runs on a real mount while the content is swapped
# back and forth. No lstat may fail and every listing must hold every name
# both trees have (a gap: ENOENT, or 0 or 1 226 of 1 500 entries, as before
# the swap kept the directories the kernel holds).
source "$(dirname "$0")/lib.sh"
use_mountpoint

SWAPS=${SWAPS:-12}
mkdir -p "$WORK/src/d/sub"
for i in $(seq 0 1499); do printf '%s\n' "$i" >"$WORK/src/d/f$i"; done
echo deep >"$WORK/src/d/sub/deep"
echo top >"$WORK/src/top"
expect_ok "$STRATA_BIN" init "$STORE"
c1=$(import_dir "$WORK/src" main c1)
echo changed >"$WORK/src/d/f7"
echo new >"$WORK/src/d/new"
echo changed >"$WORK/src/top"
c2=$(import_dir "$WORK/src" main c2)

expect_ok strata mount --branch main --name w "$MP"
expect_ok strata reset "$MP" --hard "$c1"

# The reader: until $WORK/stop exists, lstat every path of a rotating set and
# list d/; every failure is one line in $WORK/gaps.
cat >"$WORK/reader.py" <<'EOF'
import os, sys
mp, work = sys.argv[1], sys.argv[2]
both = {"f%d" % i for i in range(1500)} | {"sub"}
paths = ["top", "d", "d/sub", "d/sub/deep"] + ["d/f%d" % i for i in range(0, 1500, 37)]
rounds = 0
with open(os.path.join(work, "gaps"), "w") as gaps:
    while not os.path.exists(os.path.join(work, "stop")):
        for p in paths:
            try:
                os.lstat(os.path.join(mp, p))
            except OSError as e:
                gaps.write("lstat %s: %s\n" % (p, e.strerror))
        try:
            names = set(os.listdir(os.path.join(mp, "d")))
            missing = both - names
            if missing:
                gaps.write("listdir d: %d entries, %d of the common names missing\n" % (len(names), len(missing)))
        except OSError as e:
            gaps.write("listdir d: %s\n" % e.strerror)
        gaps.flush()
        rounds += 1
with open(os.path.join(work, "rounds"), "w") as f:
    f.write(str(rounds))
EOF
python3 "$WORK/reader.py" "$MP" "$WORK" &
reader=$!
BG_PIDS+=("$reader")

step "$SWAPS hard resets and $SWAPS rebases while the reader runs"
for i in $(seq "$SWAPS"); do
  expect_ok strata rebase "$MP"            # onto main's head: c2
  [[ $(cat "$MP/top") == changed ]] || fail "rebase $i did not install c2"
  expect_ok strata reset "$MP" --hard "$c1"
  [[ $(cat "$MP/top") == top ]] || fail "reset $i did not install c1"
done
touch "$WORK/stop"
wait "$reader" || fail "the reader failed"
rounds=$(cat "$WORK/rounds")
(( rounds > SWAPS )) || fail "the reader ran only $rounds rounds: it did not overlap the swaps"
if [[ -s $WORK/gaps ]]; then
  sort "$WORK/gaps" | uniq -c | sort -rn | head -20 >&2
  fail "paths in both trees vanished during the swaps ($(wc -l <"$WORK/gaps") failures in $rounds rounds)"
fi
echo "reader: $rounds rounds, no gap" >&2
expect_ok strata umount "$MP"
