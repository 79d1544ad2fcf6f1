"""Results of the benchmark suites, read into one shape and summarised (bench/run).

Each suite under bench/ writes its own raw.tsv; the parsers here turn one suite's
results folder (one round of bench/run) into records of one shape:

    {"suite", "round", "arm", "phase", "value", "unit", "better"}

where better is "higher" (ops/s, MB/s, IOPS) or "lower" (seconds, bytes).
summarise() then groups them by (suite, phase) and computes, for every phase,
strata's median with its min–max over rounds, and for every other arm the ratio
of strata to that arm taken round by round (the arms were interleaved within a
round, so a ratio within a round is the number that holds on a noisy machine)
and summarised as median and min–max over the rounds.

A ratio is always "strata's advantage": strata / arm for higher-is-better
values, arm / strata for lower-is-better ones, so above 1 means strata did
better in both cases.

Standard library only.
"""

import csv
import statistics
from pathlib import Path

HIGHER = "higher"
LOWER = "lower"
STRATA = "strata"


def read_tsv(path):
    """Rows of a tab-separated file with a header line, as dicts; [] when it does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_meta(path):
    """key<TAB>value lines (meta.tsv) as a dict; {} when the file does not exist."""
    path = Path(path)
    meta = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "\t" in line:
                key, value = line.split("\t", 1)
                meta[key] = value
    return meta


def _round_key(runner_round, suite_round):
    """The round of a record: bench/run's round; a suite run with several rounds of its own adds its own."""
    if suite_round in (None, "", "1", 1):
        return str(runner_round)
    return f"{runner_round}.{suite_round}"


def record(suite, rnd, arm, phase, value, unit, better):
    if better not in (HIGHER, LOWER):
        raise ValueError(f"better must be '{HIGHER}' or '{LOWER}', got {better!r}")
    return {"suite": suite, "round": str(rnd), "arm": arm, "phase": phase, "value": float(value), "unit": unit,
            "better": better}


def parse_mount(rows, suite, runner_round):
    """bench/mount/run.sh raw.tsv: its metadata or data lines (ops/s, MB/s, IOPS: higher is better)."""
    out = []
    for r in rows:
        if r["suite"] != suite:
            continue
        # metadata: "file-create dirs-1p"; data: "rand-read 2j".
        phase = f"{r['phase']} {r['config']}"
        out.append(record(suite, _round_key(runner_round, r["round"]), r["arm"], phase, r["value"], r["unit"],
                          HIGHER))
    return out


def parse_read(rows, suite, runner_round):
    """bench/read/run.sh raw.tsv: MB/s or IOPS per phase and arm."""
    return [record(suite, _round_key(runner_round, r["round"]), r["arm"], r["phase"], r["value"], r["unit"], HIGHER)
            for r in rows]


def parse_commit(rows, suite, runner_round):
    """bench/commit/run.sh raw.tsv: seconds of each snapshot phase per arm (strata commit, restic backup,
    borg create); lower is better, so the ratio is the arm's seconds / strata's. A raw.tsv from before the
    arm column is strata's alone."""
    return [record(suite, _round_key(runner_round, r["round"]), r.get("arm") or STRATA, r["phase"], r["seconds"],
                   "s", LOWER)
            for r in rows]


def parse_import(rows, suite, runner_round):
    """bench/import/run.sh raw.tsv: import time of v1 and v2, stored bytes, and what v2 added (the dedup)."""
    out = []
    stored = {}
    for r in rows:
        rnd = _round_key(runner_round, r["round"])
        out.append(record(suite, rnd, r["arm"], f"import {r['phase']}", r["seconds"], "s", LOWER))
        stored[(rnd, r["arm"], r["phase"])] = float(r["stored_bytes"])
    for (rnd, arm, phase), value in stored.items():
        if phase != "v2":
            continue
        out.append(record(suite, rnd, arm, "stored v1+v2", value / 1048576, "MiB", LOWER))
        if (rnd, arm, "v1") in stored:
            added = value - stored[(rnd, arm, "v1")]
            out.append(record(suite, rnd, arm, "stored added by v2", added / 1048576, "MiB", LOWER))
    return out


def parse_workload(rows, suite, runner_round):
    """bench/workload/run.sh raw.tsv: seconds of untar and git status."""
    return [record(suite, _round_key(runner_round, r["round"]), r["arm"], r["phase"], r["seconds"], "s", LOWER)
            for r in rows]


EXEC_PHASES = {"start": "start-up (/bin/true)", "cycle": "fork + run + keep"}


def parse_exec(rows, suite, runner_round):
    """bench/exec/run.sh raw.tsv: one line per timed run (ms, lower is better); a round's value for an arm is
    the median of its runs in that round (they were interleaved with the other arms' runs)."""
    runs = {}
    for r in rows:
        key = (_round_key(runner_round, r["round"]), EXEC_PHASES.get(r["phase"], r["phase"]), r["arm"])
        runs.setdefault(key, []).append(float(r["ms"]))
    return [record(suite, rnd, arm, phase, statistics.median(values), "ms", LOWER)
            for (rnd, phase, arm), values in runs.items()]


def parse_retention(rows, suite, runner_round):
    """bench/retention/run.sh raw.tsv: per arm, wall and busy seconds, requests made and MiB deleted."""
    out = []
    for r in rows:
        rnd = _round_key(runner_round, r["round"])
        out.append(record(suite, rnd, r["arm"], "wall", r["seconds"], "s", LOWER))
        out.append(record(suite, rnd, r["arm"], "busy", r["busy_seconds"], "s", LOWER))
        out.append(record(suite, rnd, r["arm"], "requests", r["requests"], "requests", LOWER))
        out.append(record(suite, rnd, r["arm"], "deleted", float(r["bytes_deleted"]) / 1048576, "MiB", HIGHER))
    return out


def parse_generic(rows, suite, runner_round):
    """Any suite whose raw.tsv has the columns round, arm, phase, value, unit, better."""
    return [record(suite, _round_key(runner_round, r.get("round")), r["arm"], r["phase"], r["value"], r["unit"],
                   r["better"]) for r in rows]


# The suites bench/run knows, and the parser of each one's raw.tsv.
PARSERS = {
    "metadata": lambda rows, rnd: parse_mount(rows, "metadata", rnd),
    "data": lambda rows, rnd: parse_mount(rows, "data", rnd),
    "read": lambda rows, rnd: parse_read(rows, "read", rnd),
    "commit": lambda rows, rnd: parse_commit(rows, "commit", rnd),
    "import": lambda rows, rnd: parse_import(rows, "import", rnd),
    "workload": lambda rows, rnd: parse_workload(rows, "workload", rnd),
    "exec": lambda rows, rnd: parse_exec(rows, "exec", rnd),
    "retention": lambda rows, rnd: parse_retention(rows, "retention", rnd),
}


def parse_suite_dir(suite, path, runner_round):
    """Records from one suite's results folder (PATH/raw.tsv) of one round of bench/run."""
    return parse_suite_dir_rows(suite, read_tsv(Path(path) / "raw.tsv"), runner_round)


def parse_suite_dir_rows(suite, rows, runner_round):
    """Records from the rows of one suite's raw.tsv."""
    parser = PARSERS.get(suite)
    if parser is None:
        return parse_generic(rows, suite, runner_round)
    return parser(rows, runner_round)


def spread(values):
    """{"median", "min", "max", "n"} of a list of numbers, or None when empty."""
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def advantage(strata_value, arm_value, better):
    """strata's advantage over an arm for one round: > 1 means strata did better; None when undefined."""
    if better == HIGHER:
        return strata_value / arm_value if arm_value > 0 else None
    return arm_value / strata_value if strata_value > 0 else None


def _round_sort_key(rnd):
    return tuple(int(p) for p in rnd.split(".")) if all(p.isdigit() for p in rnd.split(".")) else (10 ** 9, rnd)


def summarise(records, arm_order=None):
    """One summary per (suite, phase), in the order the phases first appear.

    Each summary: suite, phase, unit, better, rounds (sorted), arms (in arm_order,
    then by first appearance; strata last), values {arm: {round: value}},
    spread {arm: spread of its values}, ratios {arm: {"per_round": {round: r},
    **spread of those}} for every arm other than strata measured in the same
    round as strata.
    """
    groups = {}
    for r in records:
        key = (r["suite"], r["phase"])
        g = groups.setdefault(key, {"suite": r["suite"], "phase": r["phase"], "unit": r["unit"],
                                    "better": r["better"], "values": {}})
        if r["unit"] != g["unit"] or r["better"] != g["better"]:
            raise ValueError(f"{key}: mixed units or directions ({g['unit']}/{g['better']} and "
                             f"{r['unit']}/{r['better']})")
        per_arm = g["values"].setdefault(r["arm"], {})
        if r["round"] in per_arm:
            raise ValueError(f"{key}: two values for arm {r['arm']} in round {r['round']}")
        per_arm[r["round"]] = r["value"]
    order = list(arm_order or [])
    out = []
    for g in groups.values():
        arms = [a for a in order if a in g["values"]] + [a for a in g["values"] if a not in order]
        if STRATA in arms:
            arms = [a for a in arms if a != STRATA] + [STRATA]
        rounds = sorted({rnd for v in g["values"].values() for rnd in v}, key=_round_sort_key)
        g["arms"] = arms
        g["rounds"] = rounds
        g["spread"] = {a: spread([g["values"][a][k] for k in rounds if k in g["values"][a]]) for a in arms}
        g["ratios"] = {}
        strata = g["values"].get(STRATA, {})
        for a in arms:
            if a == STRATA:
                continue
            per_round = {}
            for k in rounds:
                if k in strata and k in g["values"][a]:
                    r = advantage(strata[k], g["values"][a][k], g["better"])
                    if r is not None:
                        per_round[k] = r
            s = spread(list(per_round.values()))
            if s is not None:
                g["ratios"][a] = {"per_round": per_round, **s}
        out.append(g)
    return out


def fmt_value(v):
    """A value for a table: no more digits than the noise deserves."""
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:,.0f}".replace(",", " ")
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_spread(s, fmt=fmt_value, suffix=""):
    """'median (min–max)', or the single value when there was one round."""
    if s is None:
        return "–"
    if s["n"] == 1 or s["min"] == s["max"]:
        return f"{fmt(s['median'])}{suffix}"
    return f"{fmt(s['median'])}{suffix} ({fmt(s['min'])}–{fmt(s['max'])})"


def fmt_ratio(s):
    return fmt_spread(s, fmt=lambda v: f"{v:.2f}", suffix="×")
