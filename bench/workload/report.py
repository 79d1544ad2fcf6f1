#!/usr/bin/env python3
"""bench/workload/report.py OUT: the workload suite's tables from OUT/raw.tsv and OUT/requests.tsv.

Three markdown tables on stdout, medians over the rounds:
  1. seconds per phase and arm, with min-max when there are several rounds;
  2. strata's ratio to each arm (the arm's seconds / strata's: above 1 strata is
     faster), the daemon CPU seconds of every FUSE arm;
  3. strata's FUSE requests per phase: the total and the opcodes that make up
     nine tenths of it.
"""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def fmt(x):
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def cell(values, unit=""):
    if not values:
        return "–"
    med = statistics.median(values)
    return fmt(med) + unit + (f" ({fmt(min(values))}–{fmt(max(values))})" if len(values) > 1 else "")


def main(out):
    rows = read_tsv(out / "raw.tsv")
    requests = read_tsv(out / "requests.tsv") if (out / "requests.tsv").exists() else []
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    secs = defaultdict(list)   # (arm, phase) -> seconds per round
    by_round = {}              # (round, arm, phase) -> seconds
    cpu = defaultdict(list)
    for r in rows:
        secs[(r["arm"], r["phase"])].append(float(r["seconds"]))
        by_round[(r["round"], r["arm"], r["phase"])] = float(r["seconds"])
        if r.get("daemon_cpu_s"):
            cpu[(r["arm"], r["phase"])].append(float(r["daemon_cpu_s"]))

    print("| phase (seconds) | " + " | ".join(arms) + " |")
    print("|---" * (len(arms) + 1) + "|")
    for p in phases:
        print(f"| {p} | " + " | ".join(cell(secs[(a, p)]) for a in arms) + " |")

    others = [a for a in arms if a != "strata"]
    if "strata" in arms:
        # Ratios per round (the arms of one round ran side by side), then their median.
        fuse = [a for a in arms if any(cpu[(a, p)] for p in phases)]
        print()
        print("| phase | " + " | ".join(f"vs {a}" for a in others) + " | " +
              " | ".join(f"{a} daemon CPU s" for a in fuse) + " |")
        print("|---" * (len(others) + len(fuse) + 1) + "|")
        rounds = sorted({r["round"] for r in rows}, key=int)
        for p in phases:
            ratios = []
            for a in others:
                v = [by_round[(n, a, p)] / by_round[(n, "strata", p)] for n in rounds
                     if (n, a, p) in by_round and by_round.get((n, "strata", p))]
                ratios.append(cell(v, "×"))
            print(f"| {p} | " + " | ".join(ratios) + " | " + " | ".join(cell(cpu[(a, p)]) for a in fuse) + " |")

    if requests:
        counts = defaultdict(lambda: defaultdict(list))  # phase -> opcode -> counts per round
        totals = defaultdict(lambda: defaultdict(int))   # phase -> round -> total
        for r in requests:
            counts[r["phase"]][r["opcode"]].append(int(r["count"]))
            totals[r["phase"]][r["round"]] += int(r["count"])
        print()
        print("| phase | strata FUSE requests | of which (median per opcode) |")
        print("|---|---|---|")
        for p in phases:
            if p not in counts:
                continue
            total = statistics.median(totals[p].values())
            ops = sorted(((statistics.median(v), op) for op, v in counts[p].items()), reverse=True)
            shown, acc = [], 0
            for n, op in ops:
                if acc >= 0.9 * total:
                    break
                shown.append(f"{op} {n:.0f}")
                acc += n
            print(f"| {p} | {total:.0f} | {', '.join(shown)} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
