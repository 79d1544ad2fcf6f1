#!/usr/bin/env python3
"""Summarise one mount-benchmark run (bench/mount/run.sh) into results.json, table.md and SVG charts.

Usage: report.py RESULTS_DIR

Reads RESULTS_DIR/meta.tsv (key<TAB>value), RESULTS_DIR/raw.tsv (one line per
measurement: round, position, arm, suite, config, phase, procs, value, unit, cache)
and RESULTS_DIR/failures.tsv; writes results.json, table.md, ratios-metadata.svg and
ratios-data.svg there, and prints the table. Standard library only. It can be re-run
on an old results folder.

Every value is "higher is better" (ops/s, MB/s, IOPS). Ratios are strata / other arm,
taken per round (the arms interleaved within the round) and then summarised as median
and min–max over the rounds: on a shared 2-core machine a ratio within a round is the
number that holds, an absolute figure is not.
"""

import csv
import json
import math
import statistics
import sys
from pathlib import Path

ARM_ORDER = ["native", "overlayfs", "passthrough_ll", "passthrough_ll-60s", "passthrough_ll-60s-perm", "fuse-overlayfs",
             "strata"]
MD_CONFIGS = {
    "dirs-1p": "1 proc",
    "dirs-2p": "2 procs, dir each",
    "shared-2p": "2 procs, shared dir",
    "dirs-1p-cold": "1 proc, caches dropped before each phase",
}
MD_PHASES = [
    "dir-create", "dir-stat", "dir-rename", "dir-remove",
    "file-create", "file-stat", "file-read", "file-remove",
    "tree-create", "tree-remove",
]
DATA_ROWS = [
    ("1j", "seq-write"), ("1j", "seq-read-warm"), ("1j", "seq-read-cold"),
    ("1j", "rand-read"), ("2j", "rand-read"), ("1j", "rand-write"), ("2j", "rand-write"),
]
DATA_LABELS = {
    "seq-write": "seq write 1 MiB, end_fsync",
    "seq-read-warm": "seq read 1 MiB, warm",
    "seq-read-cold": "seq read 1 MiB, cold",
    "rand-read": "rand read 4 KiB, warm",
    "rand-write": "rand write 4 KiB, end_fsync",
}

# The targets: (id, text, arm, threshold, applies(suite, config, phase)). A target
# holds when strata's value / the arm's value in the same round is >= threshold.
TARGETS = [
    ("md-pt60", "every metadata phase: strata ≥ 1.5× passthrough_ll-60s (same 60 s timeout)",
     "passthrough_ll-60s", 1.5, lambda s, c, p: s == "metadata"),
    ("md-fov", "every metadata phase: strata ≥ 1.0× fuse-overlayfs",
     "fuse-overlayfs", 1.0, lambda s, c, p: s == "metadata"),
    ("create-ovl", "file-create: strata ≥ 0.5× kernel overlayfs",
     "overlayfs", 0.5, lambda s, c, p: s == "metadata" and p == "file-create"),
    ("seqw-pt", "sequential write: strata ≥ 1.0× passthrough_ll",
     "passthrough_ll", 1.0, lambda s, c, p: s == "data" and p == "seq-write"),
    ("seqr-native", "warm sequential read: strata ≥ 0.8× native",
     "native", 0.8, lambda s, c, p: s == "data" and p == "seq-read-warm"),
]

ARM_COLOURS = {
    "native": "#4c72b0", "overlayfs": "#55a868", "passthrough_ll": "#c44e52",
    "passthrough_ll-60s": "#8172b2", "passthrough_ll-60s-perm": "#3f3275",
    "fuse-overlayfs": "#ccb974", "strata": "#64b5cd",
}


# meta.tsv is read as bench/run reads it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runner"))
from results import read_meta  # noqa: E402


def read_tsv(path):
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def summary(values):
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def fmt_num(v):
    if v >= 100:
        return f"{v:,.0f}".replace(",", " ")
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_range(s, fmt=fmt_num):
    if s is None:
        return "—"
    if s["n"] == 1 or s["min"] == s["max"]:
        return fmt(s["median"])
    return f"{fmt(s['median'])} ({fmt(s['min'])}–{fmt(s['max'])})"


def fmt_ratio(v):
    return f"{v:.2f}"


def row_label(suite, config, phase):
    if suite == "metadata":
        return f"{config} {phase}"
    return f"{DATA_LABELS.get(phase, phase)}, {config[:-1]} job{'s' if config != '1j' else ''}"


def target_status(ratio_summary, threshold):
    if ratio_summary is None:
        return "n/a"
    if ratio_summary["min"] >= threshold:
        return "met"
    if ratio_summary["median"] >= threshold:
        return "met on median only"
    return "not met"


def svg_chart(title, rows, ratios, others, path):
    """Horizontal bars of strata/arm (log scale, 1 = parity) for each row, one bar per arm."""
    if not rows or not others:
        return False
    lo, hi = -5.0, 5.0  # log2 range: 1/32 .. 32
    left, width, bar, gap, top = 330, 560, 9, 10, 60
    group = bar * len(others) + gap
    height = top + group * len(rows) + 60

    def x(r):
        v = max(lo, min(hi, math.log2(r)))
        return left + (v - lo) / (hi - lo) * width

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{title}</text>',
        '<text x="10" y="38">strata / arm, median over rounds (log scale; right of 1 = strata faster; '
        'bars are clipped at 1/32 and 32)</text>',
    ]
    for e in range(int(lo), int(hi) + 1):
        gx = left + (e - lo) / (hi - lo) * width
        out.append(f'<line x1="{gx:.1f}" y1="{top - 5}" x2="{gx:.1f}" y2="{height - 50}" '
                   f'stroke="{"#000" if e == 0 else "#ddd"}"/>')
        label = f"{2 ** e:g}" if e >= 0 else f"1/{2 ** -e:g}"
        out.append(f'<text x="{gx:.1f}" y="{height - 38}" text-anchor="middle">{label}</text>')
    for i, key in enumerate(rows):
        y0 = top + i * group
        out.append(f'<text x="{left - 6}" y="{y0 + group / 2:.1f}" text-anchor="end" '
                   f'dominant-baseline="middle">{row_label(*key)}</text>')
        for j, arm in enumerate(others):
            s = ratios.get(arm, {}).get(key)
            if s is None:
                continue
            r = s["median"]
            x1, x0 = x(r), x(1.0)
            out.append(f'<rect x="{min(x0, x1):.1f}" y="{y0 + j * bar}" width="{abs(x1 - x0):.1f}" '
                       f'height="{bar - 1}" fill="{ARM_COLOURS.get(arm, "#999")}">'
                       f'<title>strata/{arm} {r:.2f}</title></rect>')
    lx = 10
    for arm in others:
        out.append(f'<rect x="{lx}" y="{height - 22}" width="10" height="10" fill="{ARM_COLOURS.get(arm, "#999")}"/>')
        out.append(f'<text x="{lx + 14}" y="{height - 13}">strata/{arm}</text>')
        lx += 30 + 7 * len(arm) + 40
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    meta = read_meta(out / "meta.tsv")
    rows = read_tsv(out / "raw.tsv")
    failures = read_tsv(out / "failures.tsv")
    arms = [a for a in ARM_ORDER if any(r["arm"] == a for r in rows) or a in meta.get("arms", "").split(",")]
    others = [a for a in arms if a != "strata"]

    # values[(suite, config, phase)][arm][round] = float
    values, units, caches = {}, {}, {}
    for r in rows:
        key = (r["suite"], r["config"], r["phase"])
        values.setdefault(key, {}).setdefault(r["arm"], {})[int(r["round"])] = float(r["value"])
        units[key] = r["unit"]
        caches.setdefault(key, set()).add(r["cache"].split(" (")[0])

    md_keys = [("metadata", c, p) for c in MD_CONFIGS for p in MD_PHASES if ("metadata", c, p) in values]
    data_keys = [("data", c, p) for c, p in DATA_ROWS if ("data", c, p) in values]
    keys = md_keys + data_keys

    per_arm = {}
    for key in keys:
        for arm in arms:
            per = values[key].get(arm, {})
            per_arm.setdefault(arm, {})[key] = {
                "rounds": sorted(per), "values": [per[i] for i in sorted(per)],
                "summary": summary([per[i] for i in sorted(per)]),
            }

    ratios, ratios_raw = {}, {}
    if "strata" in arms:
        for arm in others:
            for key in keys:
                s, o = values[key].get("strata", {}), values[key].get(arm, {})
                common = sorted(i for i in set(s) & set(o) if o[i] > 0)
                per_round = [s[i] / o[i] for i in common]
                ratios.setdefault(arm, {})[key] = summary(per_round)
                ratios_raw.setdefault(arm, {})[key] = {"rounds": common, "per_round": per_round}

    targets = []
    for tid, text, arm, threshold, applies in TARGETS:
        checks = []
        for key in keys:
            if not applies(*key):
                continue
            s = ratios.get(arm, {}).get(key)
            checks.append({"row": row_label(*key), "key": list(key), "ratio": s,
                           "status": target_status(s, threshold)})
        targets.append({"id": tid, "text": text, "arm": arm, "threshold": threshold, "checks": checks})

    def key_str(k):
        return "/".join(k)

    results = {
        "suite": "mount",
        "date_utc": meta.get("date_utc"),
        "environment": {k: meta.get(k) for k in [
            "kernel", "cpu_model", "nproc", "mem_total_kb", "loadavg_start", "loadavg_end", "scratch_dir",
            "scratch_fs", "scratch_mount_options", "disk", "strata_commit", "strata_bin", "strata_version", "libfuse_version",
            "fio_version", "fuse_overlayfs_version"]},
        "method": {
            "rounds": int(meta.get("rounds", "0")),
            "quick": meta.get("quick") == "1",
            "items_per_process": meta.get("items"),
            "fio_size": meta.get("fio_size"),
            "fio_runtime_s": meta.get("fio_runtime_s"),
            "order_per_round": {k[len("order_"):]: v.split() for k, v in meta.items() if k.startswith("order_r")},
            "cache_metadata": meta.get("cache_metadata"),
            "cache_data": meta.get("cache_data"),
            "commands": {k[len("cmd_"):]: v for k, v in meta.items() if k.startswith("cmd_")},
        },
        "units": {key_str(k): units[k] for k in keys},
        "arms": {a: {key_str(k): v for k, v in per_arm.get(a, {}).items()} for a in arms},
        "ratios_strata_over": {a: {key_str(k): {"summary": ratios[a][k], **ratios_raw[a][k]} for k in keys}
                               for a in ratios},
        "targets": targets,
        "failures": failures,
    }
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")

    # ---- markdown ----
    md = ["# Mount benchmark: strata against native, overlayfs, passthrough_ll, fuse-overlayfs\n"]
    n_rounds = len({int(r["round"]) for r in rows})
    md.append(f"- {meta.get('date_utc')}; strata commit `{meta.get('strata_commit')}`; {n_rounds} round(s), "
              "arms interleaved, order rotated each round; every measurement on a fresh, empty filesystem")
    md.append(f"- machine: {meta.get('cpu_model')}, {meta.get('nproc')} CPUs, kernel {meta.get('kernel')}; "
              f"all arms on {meta.get('scratch_fs')} ({meta.get('disk')}"
              + (f"; mounted {meta['scratch_mount_options']}" if meta.get("scratch_mount_options") else "")
              + "); load average at start "
              f"{meta.get('loadavg_start')}, at end {meta.get('loadavg_end', '?')}")
    md.append(f"- versions: libfuse {meta.get('libfuse_version')}; fuse-overlayfs "
              f"{meta.get('fuse_overlayfs_version', '—')}; {meta.get('fio_version', 'fio: not run')}")
    md.append(f"- metadata: mdbench, {meta.get('items')} items per process; ops/s; cache warm except "
              "the `dirs-1p-cold` rows (caches dropped before every phase)")
    md.append(f"- data: fio psync, file {meta.get('fio_size')}, read phases bounded to "
              f"{meta.get('fio_runtime_s')} s, random phases {meta.get('fio_runtime_s')} s; seq in MB/s "
              "(10^6 bytes), random in IOPS; warm = file read once just before, cold = caches dropped just before")
    md.append("- passthrough_ll is libfuse's example with its default 1 s entry/attr timeout; passthrough_ll-60s "
              "uses `-o timeout=60`, the same as strata's kernel cache timeout: that is the like-for-like FUSE "
              "baseline (the targets are against it); passthrough_ll-60s-perm adds `-o default_permissions`, the "
              "permission model strata mounts with: the kernel checks permissions itself and fetches a directory's "
              "attributes from the daemon again after every change in it (one more round trip per create, rename "
              "or removal); passthrough_ll-60s-perm against passthrough_ll-60s is what that model costs, strata "
              "against passthrough_ll-60s-perm is strata's own work with that cost on both sides")
    md.append("- values: median (min–max) over rounds; ratio = strata / arm in the same round, then median "
              "(min–max); > 1 means strata is faster. On a shared 2-core machine a difference under ~30 % "
              "in one run means nothing\n")

    def value_table(title, ks):
        if not ks:
            return
        md.append(f"### {title}: values\n")
        head = ["row", "unit"] + arms
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "---|" * len(head))
        for k in ks:
            cells = [row_label(*k), units[k]] + [fmt_range(per_arm[a][k]["summary"]) for a in arms]
            md.append("| " + " | ".join(cells) + " |")
        md.append("")

    def ratio_table(title, ks):
        if not ks or "strata" not in arms or not others:
            return
        md.append(f"### {title}: strata / arm, and the targets\n")
        head = ["row"] + [f"strata/{a}" for a in others] + ["targets"]
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "---|" * len(head))
        for k in ks:
            cells = [row_label(*k)] + [fmt_range(ratios[a][k], fmt_ratio) for a in others]
            marks = []
            for t in targets:
                for c in t["checks"]:
                    if tuple(c["key"]) == k:
                        marks.append(f"≥{t['threshold']}× {t['arm']}: **{c['status']}**")
            cells.append("; ".join(marks) if marks else "")
            md.append("| " + " | ".join(cells) + " |")
        md.append("")

    for cfg, label in MD_CONFIGS.items():
        ks = [k for k in md_keys if k[1] == cfg]
        value_table(f"Metadata, {label} (`{cfg}`, ops/s)", ks)
        ratio_table(f"Metadata, {label} (`{cfg}`)", ks)
    value_table("Data (fio)", data_keys)
    ratio_table("Data (fio)", data_keys)

    if "strata" in arms:
        md.append("### Targets\n")
        md.append("| target | rows met | rows not met | not met |")
        md.append("|---|---|---|---|")
        for t in targets:
            met = [c for c in t["checks"] if c["status"].startswith("met")]
            notmet = [c for c in t["checks"] if c["status"] == "not met"]
            na = [c for c in t["checks"] if c["status"] == "n/a"]
            if not t["checks"] or len(na) == len(t["checks"]):
                md.append(f"| {t['text']} | — | — | not measured ({t['arm']} or strata not run) |")
                continue
            worst = ", ".join(f"{c['row']} {c['ratio']['median']:.2f}" for c in notmet[:12])
            if len(notmet) > 12:
                worst += f", … ({len(notmet) - 12} more)"
            md.append(f"| {t['text']} | {len(met)} / {len(t['checks'])} | {len(notmet)} | {worst or '—'} |")
        md.append("\n\"met\" = every round at or above the threshold; \"met on median only\" = the median is, "
                  "some round is not.")
    if failures:
        md.append("\n### Failed measurements\n")
        for f in failures:
            md.append(f"- round {f['round']} {f['arm']} {f['suite']} {f['config']}: {f['what']} ({f['log']})")
    charts = []
    if svg_chart("Metadata: strata / arm", md_keys, ratios, others, out / "ratios-metadata.svg"):
        charts.append("ratios-metadata.svg")
    if svg_chart("Data: strata / arm", data_keys, ratios, others, out / "ratios-data.svg"):
        charts.append("ratios-data.svg")
    if charts:
        md.append("\nCharts: " + ", ".join(charts))
    text = "\n".join(md) + "\n"
    (out / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
