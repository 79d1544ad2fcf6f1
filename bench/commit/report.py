#!/usr/bin/env python3
"""Summarises bench/commit/run.sh results: table.md on stdout, results.json beside raw.tsv.

Usage: report.py RESULTS_DIR DATA_MIB

Per phase: each arm's seconds, median (min–max) over rounds, and strata's
advantage over every other arm taken round by round (the arm's seconds /
strata's seconds in the same round, the arms interleaved: above 1 strata was
faster), median (min–max) over rounds; then strata's own counters and its
target (one-file at least 20x faster than all-files). A raw.tsv without an arm
column (before restic and borg were arms) is read as strata's. Standard
library only; it can be re-run on an old results folder.
"""
import csv
import json
import statistics
import sys

ARM_ORDER = ["strata", "restic", "borg"]
PHASES = ["all-files", "one-file", "new-files", "new-data"]
TARGET = 20.0  # all-files / one-file for strata


def spread(values):
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def rng(s, fmt="%.2f", suffix=""):
    """'median (min–max)', just the value for a single measurement, '–' for none."""
    if s is None:
        return "–"
    if s["min"] == s["max"]:
        return (fmt % s["median"]) + suffix
    return (fmt + suffix + " (" + fmt + "–" + fmt + ")") % (s["median"], s["min"], s["max"])


def secs_fmt(v):
    return "%.3f" % v if v < 10 else "%.1f" % v


def rng_secs(s):
    if s is None:
        return "–"
    if s["min"] == s["max"]:
        return secs_fmt(s["median"])
    return f"{secs_fmt(s['median'])} ({secs_fmt(s['min'])}–{secs_fmt(s['max'])})"


def read_meta(path):
    meta = {}
    for line in open(path):
        if "\t" in line:
            k, v = line.rstrip("\n").split("\t", 1)
            meta[k] = v
    return meta


def summarise(rows, data_mib):
    """The results.json body (without meta and rows)."""
    # values[phase][arm][round] = seconds
    values = {p: {} for p in PHASES}
    for r in rows:
        if r["phase"] in values:
            values[r["phase"]].setdefault(r.get("arm") or "strata", {})[r["round"]] = float(r["seconds"])
    arms = [a for a in ARM_ORDER if any(a in values[p] for p in PHASES)]
    phases = {}
    for p in PHASES:
        strata = values[p].get("strata", {})
        ratios = {}
        for a in arms:
            if a == "strata" or a not in values[p] or not strata:
                continue
            per_round = {k: v / strata[k] for k, v in values[p][a].items() if k in strata and strata[k] > 0}
            ratios[a] = {"per_round": per_round, "spread": spread(list(per_round.values()))}
        phases[p] = {
            "seconds": {a: {"per_round": values[p][a], "spread": spread(list(values[p][a].values()))}
                        for a in arms if a in values[p]},
            "ratio_arm_over_strata": ratios,
        }
    # Each arm's all-files / one-file (how much cheaper its snapshot of one change is) and new-data MiB/s.
    incremental = {}
    mib_per_s = {}
    for a in arms:
        full, one = values["all-files"].get(a, {}), values["one-file"].get(a, {})
        incremental[a] = spread([full[k] / one[k] for k in full if k in one and one[k] > 0])
        mib_per_s[a] = spread([data_mib / s for s in values["new-data"].get(a, {}).values() if s > 0])
    return arms, {"phases": phases, "all_files_over_one_file": incremental, "new_data_mib_per_s": mib_per_s}


def main():
    out, data_mib = sys.argv[1], int(sys.argv[2])
    rows = list(csv.DictReader(open(f"{out}/raw.tsv"), delimiter="\t"))
    meta = read_meta(f"{out}/meta.tsv")
    arms, body = summarise(rows, data_mib)
    phases = body["phases"]
    others = [a for a in arms if a != "strata"]
    has_strata = "strata" in arms
    nrounds = len({r["round"] for r in rows})

    lines = [f"Commit benchmark — strata {meta.get('strata_commit')}, {meta.get('files')} files, "
             f"{data_mib} MiB new data, {nrounds} round(s), arms {', '.join(arms)} "
             f"(interleaved, order rotated each round); load average {meta.get('loadavg_start', '?')} at the start",
             "",
             "Wall seconds of the snapshot after each change (strata commit, restic backup, borg create), "
             "median (min–max) over rounds; ARM/strata = the arm's seconds / strata's in the same round, "
             "median (min–max): above 1 strata was faster.", ""]
    head = ["phase"] + [f"{a} s" for a in arms] + ([f"{a}/strata" for a in others] if has_strata else [])
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in PHASES:
        cells = [p] + [rng_secs(phases[p]["seconds"].get(a, {}).get("spread")) for a in arms]
        if has_strata:
            cells += [rng(phases[p]["ratio_arm_over_strata"].get(a, {}).get("spread"), "%.2f", "×")
                      for a in others]
        lines.append("| " + " | ".join(cells) + " |")

    def med(p, arm, key):
        v = [int(r[key]) for r in rows if r["phase"] == p and (r.get("arm") or "strata") == arm and r.get(key)]
        return str(int(statistics.median(v))) if v else "–"

    counters = []
    if has_strata:
        counters.append("strata")
    if "restic" in arms:
        counters.append("restic")
    if counters:
        lines += ["", "Counters, median over rounds (strata commit --json; restic: files new or changed "
                  "in its --json summary):", ""]
        head = ["phase"]
        if has_strata:
            head += ["strata bytes hashed", "strata directories written", "strata files captured",
                     "strata rebase ms"]
        if "restic" in arms:
            head += ["restic files new or changed"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for p in PHASES:
            cells = [p]
            if has_strata:
                cells += [med(p, "strata", k)
                          for k in ("bytes_hashed", "directories_written", "files_captured", "rebase_ms")]
            if "restic" in arms:
                cells.append(med(p, "restic", "files_captured"))
            lines.append("| " + " | ".join(cells) + " |")

    lines.append("")
    for a in arms:
        lines.append(f"- {a}: all-files / one-file {rng(body['all_files_over_one_file'][a], '%.1f', '×')}; "
                     f"new data at {rng(body['new_data_mib_per_s'][a], '%.0f')} MiB/s")
    if has_strata:
        inc = body["all_files_over_one_file"]["strata"]
        met = inc is not None and inc["min"] >= TARGET
        lines.append(f"- target: strata's one-file at least {TARGET:.0f}x faster than its all-files: "
                     f"{'met' if met else 'not met'} (min {inc['min']:.1f}x)" if inc else
                     "- target: not measured")
        body["target_all_over_one"] = {"at_least": TARGET, "met": met}
    print("\n".join(lines))
    json.dump({"meta": meta, "arms": arms, "data_mib": data_mib, **body, "rows": rows},
              open(f"{out}/results.json", "w"), indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
