#!/usr/bin/env python3
"""Summarise one import-benchmark run (bench/import/run.sh) into results.json and table.md.

Usage: report.py RESULTS_DIR

Reads RESULTS_DIR/meta.tsv (key<TAB>value), RESULTS_DIR/raw.tsv (one line per timed
import) and RESULTS_DIR/strata-stats/r<N>-<phase>.json, writes results.json and
table.md there, and prints the table. Standard library only, so it runs anywhere
the benchmark runs. It can be re-run on an old results folder.

Ratios are taken per round (other arm's time / strata's time in the same round,
the arms interleaved) and then summarised as median and min–max over the rounds:
on a shared 2-core machine a ratio within a round is the number that holds, an
absolute time is not.
"""

import csv
import json
import statistics
import sys
from pathlib import Path

ARM_ORDER = ["strata", "strata-enc", "strata-enc-kept", "restic", "borg"]
PHASES = ["v1", "v2"]
# An encrypted store's import may take at most 15 % longer than a plain one's.
ENCRYPTION_TARGET = 1.15


def read_meta(path):
    meta = {}
    for line in path.read_text().splitlines():
        if "\t" in line:
            key, value = line.split("\t", 1)
            meta[key] = value
    return meta


def read_raw(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def summary(values):
    """median/min/max of a list, or None when empty."""
    if not values:
        return None
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def mib(n):
    return f"{n / 1048576:.1f} MiB"


def fmt_range(s, digits=2, unit=""):
    """'median (min–max)'; just the value when there is a single measurement."""
    if s is None:
        return "—"
    med = f"{s['median']:.{digits}f}{unit}"
    if s["min"] == s["max"]:
        return med
    return f"{med} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    meta = read_meta(out / "meta.tsv")
    rows = read_raw(out / "raw.tsv")
    rounds = int(meta.get("rounds", "0"))
    arms = [a for a in ARM_ORDER if any(r["arm"] == a for r in rows)]

    # measurements[arm][phase][round] = row
    measurements = {}
    for r in rows:
        measurements.setdefault(r["arm"], {}).setdefault(r["phase"], {})[int(r["round"])] = r
    done_rounds = sorted({int(r["round"]) for r in rows if r["phase"] == "v2"})

    arms_json = {}
    for arm in arms:
        arms_json[arm] = {}
        for phase in PHASES:
            per = measurements.get(arm, {}).get(phase, {})
            rnds = sorted(per)
            secs = [float(per[i]["seconds"]) for i in rnds]
            stored = [int(per[i]["stored_bytes"]) for i in rnds]
            arms_json[arm][phase] = {
                "rounds": rnds,
                "seconds": secs,
                "stored_bytes": stored,
                "seconds_summary": summary(secs),
                "stored_bytes_summary": summary(stored),
                "position_in_round": [int(per[i]["position"]) for i in rnds],
                "cached_kb_after_drop": [int(per[i]["cached_kb_after_drop"]) for i in rnds],
                "warnings": [per[i]["warning"] for i in rnds if per[i]["warning"]],
            }

    # Same-round ratios against strata.
    ratios = {}
    if "strata" in arms:
        for arm in arms:
            if arm == "strata":
                continue
            ratios[arm] = {}
            for phase in PHASES:
                s = measurements["strata"].get(phase, {})
                o = measurements.get(arm, {}).get(phase, {})
                common = sorted(set(s) & set(o))
                per_round = [float(o[i]["seconds"]) / float(s[i]["seconds"]) for i in common]
                ratios[arm][phase] = {"rounds": common, "per_round": per_round, "summary": summary(per_round)}

    # Storage: v2 increment and logical/stored (logical = bytes of regular files imported so far).
    v1_bytes = int(meta.get("v1_bytes", "0"))
    v2_bytes = int(meta.get("v2_bytes", "0"))
    logical = {"v1": v1_bytes, "v2": v1_bytes + v2_bytes}
    storage = {}
    for arm in arms:
        per1 = measurements[arm].get("v1", {})
        per2 = measurements[arm].get("v2", {})
        common = sorted(set(per1) & set(per2))
        inc = [int(per2[i]["stored_bytes"]) - int(per1[i]["stored_bytes"]) for i in common]
        st = {p: arms_json[arm][p]["stored_bytes_summary"] for p in PHASES}
        storage[arm] = {
            "v2_increment_bytes": inc,
            "v2_increment_summary": summary(inc),
            "logical_over_stored": {
                p: (logical[p] / st[p]["median"]) if st[p] and st[p]["median"] else None for p in PHASES
            },
        }

    strata_stats = {}
    for f in sorted((out / "strata-stats").glob("r*-v*.json")):
        rnd, phase = f.stem.split("-", 1)
        try:
            strata_stats.setdefault(rnd, {})[phase] = json.loads(f.read_text())
        except ValueError as e:
            strata_stats.setdefault(rnd, {})[phase] = {"error": f"not JSON: {e}"}

    # Every round must have imported the same bytes.
    manifests = {p: {k: v for k, v in meta.items() if k.startswith(f"manifest_{p}_")} for p in PHASES}
    identical = all(len(set(m.values())) <= 1 for m in manifests.values())

    results = {
        "suite": "import",
        "date_utc": meta.get("date_utc"),
        "environment": {
            k: meta.get(k)
            for k in [
                "kernel", "cpu_model", "nproc", "mem_total_kb", "scratch_dir", "scratch_fs",
                "restic_version", "borg_version", "strata_bin", "strata_version", "strata_commit",
            ]
        },
        "data": {
            "source": meta.get("data_source"),
            "v1": {k: int(meta.get(f"v1_{k}", "0")) for k in ["files", "bytes", "dirs", "symlinks"]},
            "v2": {k: int(meta.get(f"v2_{k}", "0")) for k in ["files", "bytes", "dirs", "symlinks"]},
            "mutation": {
                "appended_one_line": int(meta.get("mut_append", "0")),
                "overwrote_16_bytes_mid_file": int(meta.get("mut_overwrite", "0")),
                "added_files": int(meta.get("mut_add", "0")),
                "deleted_files": int(meta.get("mut_delete", "0")),
                "list": "mutation.tsv",
            },
            "identical_across_rounds": identical,
            "manifests": manifests,
        },
        "method": {
            "rounds": rounds,
            "rounds_completed": done_rounds,
            "quick": meta.get("quick") == "1",
            "order_per_round": {k[len("order_"):]: v.split() for k, v in meta.items() if k.startswith("order_r")},
            "cache_state": meta.get("cache_state"),
            "timing": meta.get("timing"),
            "stored": meta.get("stored"),
            "commands": {a: meta.get(f"cmd_{a}") for a in arms},
        },
        "arms": arms_json,
        "ratios_vs_strata": ratios,
        "storage": storage,
        "logical_bytes": logical,
        "strata_stats": strata_stats,
    }
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")

    # ---- markdown ----
    md = []
    md.append("# Import and dedup: strata vs restic vs borg\n")
    mut = results["data"]["mutation"]
    md.append(
        f"- data: copy of `{meta.get('data_source')}`; v1 {meta.get('v1_files')} regular files, "
        f"{mib(v1_bytes)}; v2 = v1 with {mut['appended_one_line']} files given one appended line, "
        f"{mut['overwrote_16_bytes_mid_file']} with 16 bytes overwritten mid-file, "
        f"{mut['added_files']} text files added, {mut['deleted_files']} deleted "
        f"(v2: {meta.get('v2_files')} files, {mib(v2_bytes)}; list in mutation.tsv)"
        + ("" if identical else " — **WARNING: data differed between rounds**")
    )
    max_cached = max((int(r["cached_kb_after_drop"]) for r in rows), default=0)
    md.append(
        "- cache: **cold** before every timed import (`sync; echo 3 > /proc/sys/vm/drop_caches`; "
        f"page cache right after the drop ≤ {max_cached / 1024:.0f} MiB)"
    )
    md.append(
        f"- {len(done_rounds)} round(s), arms interleaved, order rotated each round; "
        f"strata commit `{meta.get('strata_commit')}`; {meta.get('restic_version', 'restic: not run')}; "
        f"{meta.get('borg_version', 'borg: not run')}"
    )
    md.append(
        f"- machine: {meta.get('cpu_model')}, {meta.get('nproc')} CPUs, kernel {meta.get('kernel')}; "
        f"repositories on {meta.get('scratch_fs')}; {meta.get('date_utc')}"
    )
    md.append(
        "- times: wall seconds, median (min–max) over rounds; ratio = other arm's time / strata's time "
        "in the same round (> 1: strata faster); stored = `du -sb` of the repository after the phase"
    )
    md.append(
        "- note: for v2, restic (parent snapshot) and borg (files cache) skip reading files whose "
        "size/mtime/ctime/inode are unchanged; init of each repository is not timed\n"
    )

    others = [a for a in arms if a != "strata"]
    head = ["phase"] + [f"{a} s" for a in arms]
    if "strata" in arms:
        head += [f"{a}/strata" for a in others]
    head += [f"{a} stored" for a in arms]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for phase in PHASES:
        cells = [phase]
        cells += [fmt_range(arms_json[a][phase]["seconds_summary"]) for a in arms]
        if "strata" in arms:
            cells += [fmt_range(ratios[a][phase]["summary"]) for a in others]
        for a in arms:
            st = arms_json[a][phase]["stored_bytes_summary"]
            cells.append(mib(st["median"]) if st else "—")
        md.append("| " + " | ".join(cells) + " |")
    encrypted = [a for a in ("strata-enc", "strata-enc-kept") if a in arms]
    if "strata" in arms and encrypted:
        md.append("")
        for enc_arm in encrypted:
            for phase in PHASES:
                enc = ratios[enc_arm][phase]["summary"]
                if enc:
                    verdict = "met" if enc["max"] <= ENCRYPTION_TARGET else (
                        "met at the median" if enc["median"] <= ENCRYPTION_TARGET else "missed")
                    md.append(f"- encryption, {phase}: {enc_arm}/strata {fmt_range(enc)} "
                              f"(target ≤ {ENCRYPTION_TARGET:.2f}: {verdict})")

    md.append("")
    md.append("| arm | stored after v1 | stored after v2 | v2 increment | logical/stored after v1 | logical/stored after v2 |")
    md.append("|---|---|---|---|---|---|")
    for a in arms:
        s1 = arms_json[a]["v1"]["stored_bytes_summary"]
        s2 = arms_json[a]["v2"]["stored_bytes_summary"]
        inc = storage[a]["v2_increment_summary"]
        los = storage[a]["logical_over_stored"]
        md.append(
            "| "
            + " | ".join(
                [
                    a,
                    mib(s1["median"]) if s1 else "—",
                    mib(s2["median"]) if s2 else "—",
                    mib(inc["median"]) if inc else "—",
                    f"{los['v1']:.2f}" if los["v1"] else "—",
                    f"{los['v2']:.2f}" if los["v2"] else "—",
                ]
            )
            + " |"
        )
    md.append(
        f"\nlogical = bytes of regular files imported so far ({mib(logical['v1'])} after v1, "
        f"{mib(logical['v2'])} after v1+v2)."
    )
    last = strata_stats.get(f"r{done_rounds[-1]}", {}).get("v2") if done_rounds else None
    if isinstance(last, dict) and "error" not in last:
        keys = ["stored_bytes", "logical_bytes", "dedup_ratio", "compression_ratio", "packs"]
        md.append(
            "strata's own `stats --json` after v2 (last round): "
            + ", ".join(f"{k} {last[k]}" for k in keys if k in last)
            + "."
        )
    warns = [(a, p, w) for a in arms for p in PHASES for w in arms_json[a][p]["warnings"]]
    for a, p, w in warns:
        md.append(f"\n**warning**: {a} {p}: {w} (snapshot kept; see logs/)")
    text = "\n".join(md) + "\n"
    (out / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
