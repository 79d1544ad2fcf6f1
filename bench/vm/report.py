#!/usr/bin/env python3
"""Summarises bench/vm/run.sh results: table.md on stdout, results.json beside raw.tsv.

Usage: report.py RESULTS_DIR

Per phase: each arm's value, median (min-max) over rounds, and each strata
arm's ratio to native and to passthrough_ll (strata / arm for higher-is-better
phases, arm / strata for lower-is-better ones: above 1 strata did better). The
commit phases are the strata arms' alone. Standard library only.
"""
import csv
import json
import statistics
import sys
from pathlib import Path

ARMS = ["native", "passthrough_ll", "strata", "strata-kernel"]
OTHERS = ["native", "passthrough_ll"]


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def fmt(s):
    if s is None:
        return "–"
    v = "%.3g" % s["median"] if s["median"] < 100 else "%.0f" % s["median"]
    if s["n"] > 1 and s["min"] != s["max"]:
        v += " (%.3g–%.3g)" % (s["min"], s["max"])
    return v


def main(out):
    out = Path(out)
    rows = list(csv.DictReader(open(out / "raw.tsv"), delimiter="\t"))
    phases, units, better, values = [], {}, {}, {}
    for r in rows:
        if r["phase"] not in phases:
            phases.append(r["phase"])
        units[r["phase"]], better[r["phase"]] = r["unit"], r["better"]
        values.setdefault((r["phase"], r["arm"]), {})[r["round"]] = float(r["value"])
    failed = set()
    if (out / "failed.tsv").exists():
        failed = {(line.split("\t")[2].strip(), line.split("\t")[1]) for line in open(out / "failed.tsv") if line.strip()}
        for p, _ in sorted(failed):
            if p not in phases:
                phases.append(p)
                units.setdefault(p, "")
                better.setdefault(p, "higher")
    doc = {"phases": {}, "failed": sorted("%s %s" % f for f in failed)}
    arms = [a for a in ARMS if any(arm == a for _, arm in values) or any(arm == a for _, arm in failed)]
    mine_arms = [a for a in arms if a.startswith("strata")]
    pairs = [(m, o) for m in mine_arms for o in OTHERS if o in arms]
    lines = ["| phase | unit | " + " | ".join(arms) + "".join(" | %s/%s" % p for p in pairs) + " |",
             "|---|---|" + "---|" * (len(arms) + len(pairs))]
    for p in phases:
        cells, entry = [], {"unit": units[p], "better": better[p], "arms": {}, "ratios": {}}
        for a in arms:
            v = values.get((p, a))
            s = spread(list(v.values())) if v else None
            entry["arms"][a] = s
            cells.append("failed" if s is None and (p, a) in failed else fmt(s))
        for me, other in pairs:
            mine, theirs = values.get((p, me), {}), values.get((p, other), {})
            ratios = [(mine[k] / theirs[k] if better[p] == "higher" else theirs[k] / mine[k])
                      for k in mine if k in theirs and theirs[k] > 0 and mine[k] > 0]
            s = spread(ratios) if ratios else None
            entry["ratios"]["%s/%s" % (me, other)] = s
            cells.append(fmt(s) + ("x" if s else ""))
        doc["phases"][p] = entry
        lines.append("| %s | %s | %s |" % (p, units[p], " | ".join(cells)))
    (out / "results.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
