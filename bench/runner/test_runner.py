#!/usr/bin/env python3
"""Tests of bench/run's own logic: parsing the suites' results, medians, ratios, ranges, the report.

Run: python3 bench/runner/test_runner.py   (CTest: bench_runner_unit). No benchmark runs.
"""

import json
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chart  # noqa: E402
import page_chart  # noqa: E402
import report  # noqa: E402
import results  # noqa: E402


def write_tsv(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(header)] + ["\t".join(str(c) for c in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")


MOUNT_HEADER = ["round", "position", "arm", "suite", "config", "phase", "procs", "value", "unit", "cache"]
COMMIT_HEADER = ["round", "position", "arm", "phase", "seconds", "bytes_hashed", "directories_written",
                 "files_captured", "changed_inodes"]


class ParseTest(unittest.TestCase):
    def test_mount_keeps_its_suite_and_names_phases_with_their_config(self):
        rows = [
            dict(zip(MOUNT_HEADER, ["1", "1", "native", "metadata", "dirs-1p", "file-create", "1", "5000.0", "ops/s",
                                    "warm"])),
            dict(zip(MOUNT_HEADER, ["1", "2", "strata", "data", "2j", "rand-read", "2", "12000", "IOPS", "warm"])),
        ]
        md = results.parse_mount(rows, "metadata", 3)
        self.assertEqual(md, [{"suite": "metadata", "round": "3", "arm": "native", "phase": "file-create dirs-1p",
                               "value": 5000.0, "unit": "ops/s", "better": "higher"}])
        data = results.parse_mount(rows, "data", 1)
        self.assertEqual([(r["phase"], r["unit"], r["value"]) for r in data], [("rand-read 2j", "IOPS", 12000.0)])

    def test_a_suite_run_with_rounds_of_its_own_keeps_them_apart(self):
        rows = [dict(zip(MOUNT_HEADER, [k, "1", "native", "metadata", "dirs-1p", "dir-stat", "1", "1", "ops/s", ""]))
                for k in ("1", "2")]
        self.assertEqual([r["round"] for r in results.parse_mount(rows, "metadata", 4)], ["4", "4.2"])

    def test_commit_is_seconds_per_arm_lower_is_better(self):
        rows = [dict(zip(COMMIT_HEADER, ["1", "1", "restic", "one-file", "1.500", "", "", "1", ""])),
                dict(zip(COMMIT_HEADER, ["1", "2", "borg", "one-file", "2.400", "", "", "", ""])),
                dict(zip(COMMIT_HEADER, ["1", "3", "strata", "one-file", "0.120", "22", "2", "1", "1"]))]
        got = [(r["arm"], r["phase"], r["value"], r["unit"], r["better"], r["round"])
               for r in results.parse_commit(rows, "commit", 2)]
        self.assertEqual(got, [("restic", "one-file", 1.5, "s", "lower", "2"),
                               ("borg", "one-file", 2.4, "s", "lower", "2"),
                               ("strata", "one-file", 0.12, "s", "lower", "2")])
        (s,) = results.summarise(results.parse_commit(rows, "commit", 2))
        # The arm's seconds / strata's: strata 12.5x faster than restic, 20x than borg.
        self.assertAlmostEqual(s["ratios"]["restic"]["median"], 12.5)
        self.assertAlmostEqual(s["ratios"]["borg"]["median"], 20.0)

    def test_commit_results_without_an_arm_column_are_strata(self):
        rows = [{"round": "1", "phase": "one-file", "seconds": "0.120", "bytes_hashed": "22"}]
        (r,) = results.parse_commit(rows, "commit", 2)
        self.assertEqual((r["arm"], r["phase"], r["value"], r["unit"], r["better"]),
                         ("strata", "one-file", 0.12, "s", "lower"))

    def test_import_gives_times_stored_bytes_and_what_v2_added(self):
        mib = 1048576
        rows = [
            {"round": "1", "arm": "restic", "phase": "v1", "seconds": "10", "stored_bytes": str(100 * mib)},
            {"round": "1", "arm": "restic", "phase": "v2", "seconds": "4", "stored_bytes": str(103 * mib)},
        ]
        got = {r["phase"]: (r["value"], r["unit"], r["better"]) for r in results.parse_import(rows, "import", 1)}
        self.assertEqual(got, {
            "import v1": (10.0, "s", "lower"), "import v2": (4.0, "s", "lower"),
            "stored v1+v2": (103.0, "MiB", "lower"), "stored added by v2": (3.0, "MiB", "lower"),
        })

    def test_read_and_workload(self):
        (r,) = results.parse_read([{"round": "1", "arm": "squashfuse", "phase": "cold-seq-1m-1j", "value": "250.5",
                                    "unit": "MB/s"}], "read", 1)
        self.assertEqual((r["arm"], r["better"], r["value"]), ("squashfuse", "higher", 250.5))
        (w,) = results.parse_workload([{"round": "1", "arm": "overlayfs", "phase": "untar", "seconds": "1.5"}],
                                      "workload", 2)
        self.assertEqual((w["round"], w["unit"], w["better"]), ("2", "s", "lower"))

    def test_exec_takes_the_median_of_each_arms_runs_in_a_round(self):
        rows = [{"round": "1", "phase": "start", "arm": a, "ms": v}
                for a, v in (("strata", "30"), ("bwrap-overlay", "20"), ("strata", "90"), ("bwrap-overlay", "40"),
                             ("strata", "40"))]
        rows.append({"round": "1", "phase": "cycle", "arm": "bwrap-copy", "ms": "700"})
        got = sorted((r["phase"], r["arm"], r["value"], r["unit"], r["better"], r["round"])
                     for r in results.parse_exec(rows, "exec", 2))
        self.assertEqual(got, [("fork + run + keep", "bwrap-copy", 700.0, "ms", "lower", "2"),
                               ("start-up (/bin/true)", "bwrap-overlay", 30.0, "ms", "lower", "2"),
                               ("start-up (/bin/true)", "strata", 40.0, "ms", "lower", "2")])
        (start,) = [s for s in results.summarise(results.parse_exec(rows, "exec", 2)) if s["phase"].startswith("start")]
        # bwrap-overlay's 30 ms / strata's 40 ms: strata's start-up is 1.33x the reference's.
        self.assertAlmostEqual(start["ratios"]["bwrap-overlay"]["median"], 0.75)

    def test_retention_gives_wall_busy_requests_and_bytes_deleted_per_arm(self):
        rows = [{"round": "1", "arm": "strata", "seconds": "8.5", "busy_seconds": "3.5", "requests": "300",
                 "bytes_deleted": str(3 * 1048576)},
                {"round": "1", "arm": "restic", "seconds": "7", "busy_seconds": "7", "requests": "450",
                 "bytes_deleted": str(4 * 1048576)}]
        got = sorted((r["arm"], r["phase"], r["value"], r["unit"], r["better"], r["round"])
                     for r in results.parse_suite_dir_rows("retention", rows, 2))
        self.assertEqual(got, [("restic", "busy", 7.0, "s", "lower", "2"), ("restic", "deleted", 4.0, "MiB", "higher", "2"),
                               ("restic", "requests", 450.0, "requests", "lower", "2"),
                               ("restic", "wall", 7.0, "s", "lower", "2"),
                               ("strata", "busy", 3.5, "s", "lower", "2"), ("strata", "deleted", 3.0, "MiB", "higher", "2"),
                               ("strata", "requests", 300.0, "requests", "lower", "2"),
                               ("strata", "wall", 8.5, "s", "lower", "2")])
        (busy,) = [s for s in results.summarise(results.parse_suite_dir_rows("retention", rows, 2))
                   if s["phase"] == "busy"]
        # restic's 7 s busy against strata's 3.5 s: strata is twice as fast.
        self.assertAlmostEqual(busy["ratios"]["restic"]["median"], 2.0)

    def test_unknown_suite_uses_the_generic_columns(self):
        with tempfile.TemporaryDirectory() as d:
            write_tsv(Path(d) / "raw.tsv", ["round", "arm", "phase", "value", "unit", "better"],
                      [[1, "strata", "p", 3, "s", "lower"]])
            (r,) = results.parse_suite_dir("fake", d, 5)
            self.assertEqual((r["suite"], r["round"], r["better"]), ("fake", "5", "lower"))

    def test_a_missing_raw_file_gives_no_records(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(results.parse_suite_dir("metadata", d, 1), [])

    def test_bad_direction_is_refused(self):
        with self.assertRaises(ValueError):
            results.record("s", 1, "a", "p", 1, "s", "faster")


def rec(arm, rnd, value, phase="p", better="higher", unit="ops/s", suite="s"):
    return results.record(suite, rnd, arm, phase, value, unit, better)


class SummaryTest(unittest.TestCase):
    def test_advantage_is_above_one_when_strata_does_better_in_both_directions(self):
        self.assertAlmostEqual(results.advantage(200, 100, "higher"), 2.0)
        self.assertAlmostEqual(results.advantage(1, 3, "lower"), 3.0)
        self.assertAlmostEqual(results.advantage(4, 2, "lower"), 0.5)
        self.assertIsNone(results.advantage(5, 0, "higher"))
        self.assertIsNone(results.advantage(0, 5, "lower"))

    def test_median_and_range_of_values_and_of_per_round_ratios(self):
        recs = [rec("strata", 1, 100), rec("native", 1, 50),
                rec("strata", 2, 300), rec("native", 2, 200),
                rec("strata", 3, 200), rec("native", 3, 400)]
        (s,) = results.summarise(recs)
        self.assertEqual(s["spread"]["strata"], {"median": 200, "min": 100, "max": 300, "n": 3})
        # Ratios per round: 2.0, 1.5, 0.5 — not the ratio of the medians (200/200 = 1).
        r = s["ratios"]["native"]
        self.assertEqual(r["per_round"], {"1": 2.0, "2": 1.5, "3": 0.5})
        self.assertEqual((r["median"], r["min"], r["max"], r["n"]), (1.5, 0.5, 2.0, 3))

    def test_ratios_only_from_rounds_where_both_arms_were_measured(self):
        recs = [rec("strata", 1, 10), rec("fuse", 1, 5), rec("strata", 2, 10), rec("fuse", 3, 1)]
        (s,) = results.summarise(recs)
        self.assertEqual(s["ratios"]["fuse"]["per_round"], {"1": 2.0})
        self.assertEqual(s["rounds"], ["1", "2", "3"])

    def test_lower_is_better_phases(self):
        recs = [rec("strata", 1, 2.0, better="lower", unit="s"), rec("restic", 1, 6.0, better="lower", unit="s")]
        (s,) = results.summarise(recs)
        self.assertAlmostEqual(s["ratios"]["restic"]["median"], 3.0)

    def test_arm_order_and_strata_last(self):
        recs = [rec("strata", 1, 1), rec("zeta", 1, 1), rec("native", 1, 1), rec("overlayfs", 1, 1)]
        (s,) = results.summarise(recs, ["native", "overlayfs"])
        self.assertEqual(s["arms"], ["native", "overlayfs", "zeta", "strata"])

    def test_no_strata_means_values_but_no_ratios(self):
        (s,) = results.summarise([rec("restic", 1, 1), rec("borg", 1, 2)])
        self.assertEqual(s["ratios"], {})
        self.assertEqual(s["spread"]["borg"]["median"], 2)

    def test_phases_keep_their_first_order_and_rounds_sort_numerically(self):
        recs = [rec("strata", 10, 1, phase="b"), rec("strata", 2, 1, phase="a"), rec("strata", 1, 1, phase="b")]
        out = results.summarise(recs)
        self.assertEqual([s["phase"] for s in out], ["b", "a"])
        self.assertEqual(out[0]["rounds"], ["1", "10"])

    def test_inconsistent_input_is_an_error(self):
        with self.assertRaises(ValueError):
            results.summarise([rec("strata", 1, 1), rec("strata", 1, 2)])
        with self.assertRaises(ValueError):
            results.summarise([rec("strata", 1, 1), rec("native", 1, 2, unit="MB/s")])

    def test_formatting(self):
        self.assertEqual(results.fmt_spread(None), "–")
        self.assertEqual(results.fmt_spread(results.spread([1234.4])), "1 234")
        self.assertEqual(results.fmt_spread(results.spread([1.0, 2.0, 3.0])), "2.00 (1.00–3.00)")
        self.assertEqual(results.fmt_ratio(results.spread([0.5, 1.25])), "0.88× (0.50–1.25)")
        self.assertEqual(results.fmt_value(42.42), "42.4")


class ReportTest(unittest.TestCase):
    def make_run(self, d):
        out = Path(d)
        (out / "env.tsv").write_text("strata_commit\tabc1234\nkernel\t6.18\nrounds\t2\nquick\t1\n"
                                     "date_utc\t2026-12-01T00:00:00Z\n")
        write_tsv(out / "runs.tsv", ["round", "suite", "status", "rc", "seconds", "dir"], [
            [1, "metadata", "ok", 0, 10.0, "suites/metadata/r1"],
            [1, "import", "ok", 0, 5.0, "suites/import/r1"],
            [1, "commit", "ok", 0, 3.0, "suites/commit/r1"],
            [2, "metadata", "ok", 0, 11.0, "suites/metadata/r2"],
            [2, "import", "failed", 1, 2.0, "suites/import/r2"],
            [2, "commit", "ok", 0, 3.0, "suites/commit/r2"],
        ])
        for rnd, (s, r, b) in ((1, (0.1, 1.0, 3.0)), (2, (0.2, 1.0, 1.0))):
            write_tsv(out / f"suites/commit/r{rnd}/raw.tsv", COMMIT_HEADER, [
                [1, 1, "restic", "one-file", r, "", "", 1, ""],
                [1, 2, "borg", "one-file", b, "", "", "", ""],
                [1, 3, "strata", "one-file", s, 22, 2, 1, 1],
            ])
        for rnd, (s, n) in ((1, (1000, 500)), (2, (900, 900))):
            write_tsv(out / f"suites/metadata/r{rnd}/raw.tsv", MOUNT_HEADER, [
                [1, 1, "native", "metadata", "dirs-1p", "file-create", 1, n, "ops/s", "warm"],
                [1, 2, "strata", "metadata", "dirs-1p", "file-create", 1, s, "ops/s", "warm"],
            ])
            (out / f"suites/metadata/r{rnd}/meta.tsv").write_text("cache_metadata\twarm\n")
        write_tsv(out / "suites/import/r1/raw.tsv",
                  ["round", "position", "arm", "phase", "seconds", "stored_bytes", "cached_kb_after_drop", "warning"],
                  [[1, 1, "strata", "v1", 2.0, 1048576, 0, ""], [1, 2, "borg", "v1", 4.0, 2097152, 0, ""]])
        return out

    def test_report_files(self):
        with tempfile.TemporaryDirectory() as d:
            out = self.make_run(d)
            text = report.build(out)
            doc = json.loads((out / "results.json").read_text())
            md = next(p for p in doc["phases"] if p["phase"] == "file-create dirs-1p")
            self.assertEqual(md["ratios"]["native"]["per_round"], {"1": 2.0, "2": 1.0})
            self.assertEqual(md["spread"]["strata"]["median"], 950)
            imp = next(p for p in doc["phases"] if p["phase"] == "import v1")
            self.assertEqual(imp["ratios"]["borg"]["median"], 2.0)
            self.assertEqual(doc["cache_state"], {"metadata": {"cache_metadata": "warm"}})
            self.assertEqual(doc["env"]["strata_commit"], "abc1234")
            self.assertIn("| file-create dirs-1p | ops/s | 950 (900–1 000) | 1.50× (1.00–2.00) |", text)
            self.assertIn("round 2 import: failed (exit 1)", text)
            # commit: restic 10x and 5x slower than strata (median 7.5x), borg 30x and 5x (17.5x).
            com = next(p for p in doc["phases"] if p["suite"] == "commit")
            self.assertEqual(com["ratios"]["restic"]["per_round"], {"1": 10.0, "2": 5.0})
            self.assertIn("| one-file | s | 0.15 (0.10–0.20) | 7.50× (5.00–10.00) | 17.50× (5.00–30.00) |", text)
            self.assertIn("- cache state, metadata: cache_metadata: warm", text)
            self.assertEqual((out / "table.md").read_text(), text)
            svg = ET.parse(out / "chart.svg").getroot()
            self.assertTrue(svg.tag.endswith("svg"))
            self.assertIn("vs native", (out / "chart.svg").read_text())


class ChartTest(unittest.TestCase):
    def test_valid_svg_with_clipped_and_empty_input(self):
        recs = [rec("strata", 1, 1000), rec("native", 1, 1), rec("strata", 1, 1, phase="q"),
                rec("native", 1, 1000, phase="q")]
        text = chart.svg(results.summarise(recs), "t & <title>")
        root = ET.fromstring(text)
        xs = [float(c.get("cx")) for c in root.iter("{http://www.w3.org/2000/svg}circle") if c.get("r") != "4"]
        self.assertTrue(all(300 <= x <= 860 for x in xs), xs)
        ET.fromstring(chart.svg([], "nothing"))


class PageChartTest(unittest.TestCase):
    PAGE = """#### data (fio)

| phase | unit | strata | vs native | vs fuse-overlayfs |
|---|---|---|---|---|
| seq-write 1j | MB/s | 708 (214–783) | 0.69× (0.21–1.22) | 0.89× (0.33–0.97) |

Some text | with a bar.

#### commit

| phase | unit | strata | vs restic |
|---|---|---|---|
| one-file | s | 0.13 (0.09–0.31) | 45.48× (27.58–62.20) |
| broken | s | 1 | n/a |
"""

    def test_tables_become_rows_with_their_suite_and_ratios(self):
        rows = page_chart.summaries_from_page(self.PAGE, 3)
        self.assertEqual([(r["suite"], r["phase"]) for r in rows], [("data", "seq-write 1j"), ("commit", "one-file")])
        self.assertEqual(rows[0]["ratios"]["fuse-overlayfs"], {"median": 0.89, "min": 0.33, "max": 0.97, "n": 3})
        self.assertEqual(list(rows[1]["ratios"]), ["restic"])
        ET.fromstring(chart.svg(rows, "page"))

    def test_the_page_itself_parses(self):
        page = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
        rows = page_chart.summaries_from_page(page.read_text(), 3)
        self.assertGreater(len(rows), 10)
        self.assertTrue(all(r["suite"] for r in rows))


if __name__ == "__main__":
    unittest.main()
