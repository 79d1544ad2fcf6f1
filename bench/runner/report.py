#!/usr/bin/env python3
"""The report of one bench/run: table.md (also printed), results.json and chart.svg.

Usage: report.py OUT_DIR

Reads OUT_DIR/env.tsv (the machine and versions, key<TAB>value), OUT_DIR/runs.tsv
(one line per suite and round: round, suite, status, rc, seconds, dir) and, for
every run listed there, the suite's own results folder (raw.tsv, meta.tsv).
Standard library only; it can be re-run on an old results folder.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chart  # noqa: E402
import results  # noqa: E402

# Arms in the order tables show them (strata is always last).
ARM_ORDER = ["native", "overlayfs", "passthrough_ll", "passthrough_ll-60s", "passthrough_ll-60s-perm", "fuse-overlayfs",
             "squashfuse", "restic", "borg", "strata-enc"]
SUITE_TITLES = {
    "metadata": "metadata (mdbench, mdtest phases; config: dirs-1p = 1 process, dirs-2p = 2 processes with a "
                "directory each, shared-2p = 2 processes in one directory, dirs-1p-cold = caches dropped before "
                "each phase)",
    "data": "data (fio, psync; 1j/2j = jobs)",
    "read": "cold read from a commit (fio; 1j/4j = readers)",
    "commit": "commit (seconds of the snapshot after each change: strata commit, restic backup, borg create; "
              "warm)",
    "import": "import and dedup (cold cache)",
    "workload": "real workload (untar, git status, clone and checkout, a build, find/du, snapshots, copies, dd, rm)",
    "vm": "VM image (qemu-img, qemu-io -t none|writeback, fio --direct=1 iodepth 16, dd; then strata's commit "
          "after scattered 4 KiB writes: seconds, MiB hashed, hashed per byte written)",
    "exec": "sandboxes (strata exec against bubblewrap on an overlayfs or a copy of the tree; median of each arm's "
            "interleaved runs; strata-mounted = a workspace already mounted)",
    "retention": "retention on a remote (Ceph RGW): strata forget + gc --remote against restic forget --prune of "
                 "the same daily history; busy = wall less gc's grace wait, during which other machines may push",
}


def load(out):
    """(env, runs, records, suite metas) of a bench/run results folder."""
    out = Path(out)
    env = results.read_meta(out / "env.tsv")
    runs = results.read_tsv(out / "runs.tsv")
    records = []
    metas = {}
    for run in runs:
        d = out / run["dir"]
        records.extend(results.parse_suite_dir(run["suite"], d, run["round"]))
        metas.setdefault(run["suite"], {})[run["round"]] = results.read_meta(d / "meta.tsv")
    return env, runs, records, metas


def cache_states(metas):
    """The cache state each suite recorded (its meta.tsv keys starting with 'cache'), from its first round."""
    out = {}
    for suite, by_round in metas.items():
        first = by_round[min(by_round, key=int)] if by_round else {}
        states = {k: v for k, v in first.items() if k.startswith("cache")}
        # bench/mount/run.sh records both of its suites' cache states: keep this one's.
        if f"cache_{suite}" in states:
            states = {f"cache_{suite}": states[f"cache_{suite}"]}
        if states:
            out[suite] = states
    return out


def markdown(env, runs, summaries, caches=None):
    lines = [f"# bench/run — strata {env.get('strata_commit', '?')}, {env.get('date_utc', '?')}"
             f"{' (--quick)' if env.get('quick') == '1' else ''}", ""]
    lines.append(f"Kernel {env.get('kernel', '?')}, {env.get('cpu_model', '?')}, {env.get('nproc', '?')} CPUs, "
                 f"{env.get('rounds', '?')} round(s), suites interleaved, arms rotated each round; load average "
                 f"{env.get('loadavg_start', '?')} at the start, {env.get('loadavg_end', '?')} at the end. "
                 "strata: median (min–max) over rounds. vs ARM: strata's advantage in the same round "
                 "(strata/arm for ops/s, MB/s, IOPS; arm/strata for seconds and bytes), median (min–max) over "
                 "rounds: above 1× strata did better. A difference under ~30 % is noise on this machine.")
    by_suite = {}
    for s in summaries:
        by_suite.setdefault(s["suite"], []).append(s)
    for suite, rows in by_suite.items():
        others = []
        for s in rows:
            for a in s["arms"]:
                if a != results.STRATA and a not in others:
                    others.append(a)
        lines += ["", f"## {SUITE_TITLES.get(suite, suite)}", ""]
        has_strata = any(results.STRATA in s["arms"] for s in rows)
        head = ["phase", "unit"] + (["strata"] if has_strata else []) + [f"vs {a}" for a in others]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|---" * len(head) + "|")
        for s in rows:
            cells = [s["phase"], s["unit"]]
            if has_strata:
                cells.append(results.fmt_spread(s["spread"].get(results.STRATA)))
            for a in others:
                if a in s["ratios"]:
                    cells.append(results.fmt_ratio(s["ratios"][a]))
                elif a in s["spread"] and s["spread"][a] is not None:
                    cells.append(f"({results.fmt_spread(s['spread'][a])} {s['unit']})")
                else:
                    cells.append("–")
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Environment", ""]
    pkgs = ", ".join(f"{k[4:]} {v}" for k, v in env.items() if k.startswith("pkg_"))
    for label, value in (("strata", f"{env.get('strata_commit', '?')} ({env.get('strata_bin', '?')})"),
                         ("packages", pkgs), ("scratch", env.get("scratch_fs")), ("python", env.get("python")),
                         ("command", env.get("command"))):
        if value:
            lines.append(f"- {label}: {value}")
    for suite, states in (caches or {}).items():
        lines.append(f"- cache state, {suite}: " + "; ".join(f"{k}: {v}" for k, v in states.items()))
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        lines += ["", "## Failed suite runs", ""]
        for r in failed:
            lines.append(f"- round {r['round']} {r['suite']}: {r['status']} (exit {r['rc']}), see "
                         f"logs/{r['suite']}-r{r['round']}.log")
    return "\n".join(lines) + "\n"


def build(out):
    out = Path(out)
    env, runs, records, metas = load(out)
    summaries = results.summarise(records, ARM_ORDER)
    doc = {
        "env": env,
        "cache_state": cache_states(metas),
        "ratio": "strata's advantage over the arm in the same round: strata/arm when higher is better, "
                 "arm/strata when lower is better; > 1 means strata did better",
        "runs": runs,
        "phases": [{k: s[k] for k in ("suite", "phase", "unit", "better", "arms", "rounds", "values", "spread",
                                      "ratios")} for s in summaries],
        "suite_meta": metas,
    }
    (out / "results.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    text = markdown(env, runs, summaries, doc["cache_state"])
    (out / "table.md").write_text(text)
    title = f"strata {env.get('strata_commit', '?')} against the other arms"
    subtitle = (f"{env.get('date_utc', '?')}, kernel {env.get('kernel', '?')}, {env.get('nproc', '?')} CPUs (shared), "
                f"{env.get('rounds', '?')} round(s){', --quick' if env.get('quick') == '1' else ''}")
    (out / "chart.svg").write_text(chart.svg(summaries, title, subtitle))
    return text


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.stdout.write(build(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
