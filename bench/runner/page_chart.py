#!/usr/bin/env python3
"""The chart of docs/benchmarks.md, drawn from the tables on that page.

Usage: page_chart.py PAGE.md OUT.svg [--rounds N]

bench/run writes chart.svg beside its results; the page keeps only the tables
of the run it shows (their ratios written "median× (min–max)"). This draws the
same chart (chart.svg's layout) from those tables, so the picture on the page
cannot drift from its numbers: re-run it whenever the tables change.
A table counts when its header is "| phase | unit | strata | vs ARM | ...";
its suite is the nearest heading of level 3 or deeper above it.
Standard library only.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chart  # noqa: E402

RATIO = re.compile(r"^\s*([0-9.]+)×\s*\(([0-9.]+)–([0-9.]+)\)\s*$")


def summaries_from_page(text, rounds):
    """One summary per table row, as chart.svg() takes them."""
    out = []
    suite = None
    header = None
    for line in text.splitlines():
        if line.startswith("###"):
            suite = line.lstrip("#").split("(")[0].strip()
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:3] == ["phase", "unit", "strata"]:
            header = [c[3:] if c.startswith("vs ") else None for c in cells]
            continue
        if header is None or set(cells[0]) <= set("-: "):
            continue
        ratios = {}
        for arm, cell in zip(header, cells):
            m = RATIO.match(cell) if arm else None
            if m:
                ratios[arm] = {"median": float(m.group(1)), "min": float(m.group(2)),
                               "max": float(m.group(3)), "n": rounds}
        if ratios:
            out.append({"suite": suite or "", "phase": cells[0], "unit": cells[1], "ratios": ratios})
    return out


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--rounds"):
        sys.exit("usage: page_chart.py PAGE.md OUT.svg [--rounds N]")
    rounds = int(argv[4]) if len(argv) == 5 else 3
    rows = summaries_from_page(Path(argv[1]).read_text(), rounds)
    if not rows:
        sys.exit(f"{argv[1]}: no table of ratios found")
    Path(argv[2]).write_text(chart.svg(rows, "strata against every arm: the run on docs/benchmarks.md",
                                       f"{len(rows)} phases, {rounds} rounds each"))


if __name__ == "__main__":
    main(sys.argv)
