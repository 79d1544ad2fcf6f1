#!/usr/bin/env python3
"""Summarises bench/commit/run.sh results: table.md on stdout, results.json beside raw.tsv.

Usage: report.py RESULTS_DIR DATA_MIB
"""
import csv
import json
import statistics
import sys


def main():
    out, data_mib = sys.argv[1], int(sys.argv[2])
    rows = list(csv.DictReader(open(f"{out}/raw.tsv"), delimiter="\t"))
    phases = ["all-files", "one-file", "new-files", "new-data"]
    by = {p: [r for r in rows if r["phase"] == p] for p in phases}
    secs = {p: [float(r["seconds"]) for r in by[p]] for p in phases}
    ratios = [float(a["seconds"]) / float(o["seconds"])
              for a, o in zip(by["all-files"], by["one-file"]) if float(o["seconds"]) > 0]
    meta = dict(line.rstrip("\n").split("\t", 1) for line in open(f"{out}/meta.tsv"))

    def rng(v, fmt="%.2f"):
        if not v:
            return "-"
        return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(v), min(v), max(v))

    lines = [f"Commit benchmark — strata {meta.get('strata_commit')}, {meta.get('files')} files, "
             f"{data_mib} MiB new data, {len(secs['all-files'])} round(s)", "",
             "| phase | seconds: median (min–max) | bytes hashed (median) | directories written | files captured |",
             "|---|---|---|---|---|"]
    for p in phases:
        med = lambda k: int(statistics.median([int(r[k]) for r in by[p]])) if by[p] else 0
        lines.append(f"| {p} | {rng(secs[p], '%.3f')} | {med('bytes_hashed')} | "
                     f"{med('directories_written')} | {med('files_captured')} |")
    mbps = [data_mib / s for s in secs["new-data"] if s > 0]
    lines += ["", f"- new data committed at {rng(mbps, '%.0f')} MiB/s",
              f"- all-files / one-file: {rng(ratios, '%.1f')}x "
              f"(target ≥ 20x: {'met' if ratios and min(ratios) >= 20 else 'not met'})"]
    print("\n".join(lines))
    json.dump({"meta": meta, "rows": rows, "ratio_all_to_one": ratios, "new_data_mib_per_s": mbps},
              open(f"{out}/results.json", "w"), indent=2)


if __name__ == "__main__":
    main()
