#!/usr/bin/env python3
# A commit of a workspace with a long-lived writer open (docs/passthrough.md, "The point-in-time cut").
# One writer per mount (a 4 MiB file rewritten in place, then a log line appended, every 10 ms), a
# commit of each mount in turn, rounds interleaved. Prints per commit: its exit status and wall time,
# and the longest single write of the writer while the commit ran (how long the cut held it).
# Usage: held_writer.py STRATA_BIN STORE MOUNTPOINT[,MOUNTPOINT...] ROUNDS
#   (each workspace commits to the branch named like its mountpoint's last component)
import os, subprocess, sys, threading, time
strata, store = sys.argv[1], sys.argv[2]
mps = sys.argv[3].split(",")
rounds = int(sys.argv[4])
class Writer:
    def __init__(self, mp):
        self.log = os.open(mp + "/log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        self.db = os.open(mp + "/db", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.n = 0; self.stop = False; self.lat = []
        self.t = threading.Thread(target=self.run); self.t.start()
    def run(self):
        while not self.stop:
            t0 = time.monotonic()
            os.pwrite(self.db, bytes([self.n % 251]) * (4 << 20), 0)
            os.write(self.log, b"line %06d\n" % self.n)
            self.lat.append((t0, time.monotonic() - t0))
            self.n += 1
            time.sleep(0.01)
writers = {mp: Writer(mp) for mp in mps}
time.sleep(1)
for r in range(rounds):
    for mp in mps:
        w = writers[mp]
        t0 = time.monotonic()
        c = subprocess.run([strata, "--store", store, "commit", "--branch", os.path.basename(mp), "-m", f"round {r}", mp], capture_output=True, text=True)
        t1 = time.monotonic()
        during = [l for (s, l) in w.lat if s + l >= t0 and s <= t1]
        print(f"{mp} round {r}: rc={c.returncode} commit {t1 - t0:.3f} s, longest write during it {max(during, default=0) * 1000:.0f} ms, {len(during)} writes"
              + ("" if c.returncode == 0 else " : " + c.stderr.strip()), flush=True)
        time.sleep(1)
for w in writers.values():
    w.stop = True; w.t.join(); os.close(w.log); os.close(w.db)
