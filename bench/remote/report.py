#!/usr/bin/env python3
"""Table for bench/remote/run.sh: push, pull, cold read of a remote branch against curl GETs of its packs.

Usage: report.py RESULTS_DIR   (reads raw.tsv, meta.tsv, logs/; writes results.json; prints markdown)
"""
import csv
import json
import os
import statistics
import sys

ARMS = ["push", "pull", "strata-read", "curl-get", "curl-get-par4"]
TARGET = 0.7  # issue 8: a cold read of a remote branch at >= 0.7x the raw GET rate


def spread(values, digits=None):
    """'median (min–max)' of a list of numbers."""
    if not values:
        return "–"
    if digits is None:
        digits = 0 if max(values) >= 100 else 2 if max(values) < 10 else 1
    fmt = lambda v: f"{v:,.{digits}f}".replace(",", " ")
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})"


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def main():
    out = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(out, "raw.tsv")), delimiter="\t"))
    meta = dict(line.rstrip("\n").split("\t", 1) for line in open(os.path.join(out, "meta.tsv")) if "\t" in line)
    rounds = sorted({r["round"] for r in rows}, key=int)
    by = {(r["arm"], r["round"]): r for r in rows}

    def series(arm, key="value"):
        return [num(by[(arm, k)][key]) for k in rounds if (arm, k) in by and num(by[(arm, k)][key]) is not None]

    def per_round(f):
        vals = []
        for k in rounds:
            try:
                v = f(k)
            except (KeyError, TypeError, ZeroDivisionError):
                continue
            if v is not None:
                vals.append(v)
        return vals

    pack_bytes = {k: num(by[("curl-get", k)]["bytes"]) for k in rounds if ("curl-get", k) in by}
    sec = lambda arm, k: num(by[(arm, k)]["seconds"])
    val = lambda arm, k: num(by[(arm, k)]["value"])

    store = {}
    p = os.path.join(out, "logs", "strata-store-stats.json")
    if os.path.exists(p):
        store = json.load(open(p))

    print(f"# Remote store on S3 (Ceph RGW): push, pull, cold read ({meta.get('size_mib', '?')} MiB: "
          f"{meta.get('data', '').split('; sha256')[0]})\n")
    print(f"strata {meta.get('strata_commit', '?')}, {meta.get('date_utc', '?')}, kernel {meta.get('kernel', '?')}, "
          f"{meta.get('nproc', '?')} CPUs, {len(rounds)} round(s); load average {meta.get('loadavg_start', '?')} at "
          f"the start, {meta.get('loadavg_end', '?')} at the end; {meta.get('ceph_version', '?')}, memstore OSD "
          "(objects in RAM), radosgw on 127.0.0.1. Values: median (min–max) over rounds.\n")
    if pack_bytes:
        pb = statistics.median(pack_bytes.values())
        print(f"The remote prefix held {pb / 1048576:.0f} MiB of packs for the {meta.get('size_mib', '?')} MiB file "
              f"({len(open(os.path.join(out, 'logs', 'r' + rounds[0] + '-packs.tsv')).read().split(chr(10))) - 1} "
              "packs).\n")

    what = {
        "push": "`strata push` into an empty prefix: chunk data / wall time",
        "pull": "`strata pull` into an empty store: chunk data / wall time",
        "strata-read": "`mount --read-only REMOTE/BRANCH` + cold `dd bs=1M` of the file: file bytes / wall time of both",
        "curl-get": "curl GET of every pack, whole, one after another: pack bytes / wall time",
        "curl-get-par4": "the same, 4 GETs at once (`--parallel-max 4`)",
    }
    results = {"meta": meta, "arms": {}, "ratios": {}, "targets": [], "counters": []}
    print("| arm | what | MiB/s | seconds |")
    print("|---|---|---|---|")
    for arm in ARMS:
        v, s = series(arm), series(arm, "seconds")
        if not v:
            continue
        print(f"| {arm} | {what[arm]} | {spread(v)} | {spread(s, 1)} |")
        results["arms"][arm] = {"unit": "MiB/s", "values": v, "seconds": s, "median": statistics.median(v),
                                "min": min(v), "max": max(v)}
        if arm == "strata-read":
            m, d = series(arm, "mount_seconds"), series(arm, "read_seconds")
            size = num(by[(arm, rounds[0])]["bytes"])
            if m and d and size:
                dv = [size / x / 1048576 for x in d]
                print(f"| (strata-read, dd alone) | the same dd, the mount's {spread(m, 2)} s left out | {spread(dv)} "
                      f"| {spread(d, 1)} |")
                results["arms"][arm].update({"mount_seconds": m, "read_seconds": d, "dd_only_values": dv})

    ratios = {
        "strata-read / curl-get (MiB/s of the file ÷ MiB/s of its packs)":
            per_round(lambda k: val("strata-read", k) / val("curl-get", k)),
        "strata-read / curl-get, same bytes (curl-get's time ÷ strata-read's time)":
            per_round(lambda k: sec("curl-get", k) / sec("strata-read", k)),
        "strata-read / curl-get-par4 (MiB/s of the file ÷ MiB/s of its packs)":
            per_round(lambda k: val("strata-read", k) / val("curl-get-par4", k)),
        "strata-read / curl-get-par4, same bytes (time ÷ time)":
            per_round(lambda k: sec("curl-get-par4", k) / sec("strata-read", k)),
        "pull / curl-get (MiB/s of chunk data ÷ MiB/s of packs)":
            per_round(lambda k: val("pull", k) / val("curl-get", k)),
    }
    print("\nRatios, per round (median (min–max)):\n")
    print("| ratio | value |")
    print("|---|---|")
    for name, r in ratios.items():
        if r:
            print(f"| {name} | {spread(r, 2)} |")
            results["ratios"][name] = r

    same = ratios["strata-read / curl-get, same bytes (curl-get's time ÷ strata-read's time)"]
    file_rate = ratios["strata-read / curl-get (MiB/s of the file ÷ MiB/s of its packs)"]
    if same:
        met = min(same) >= TARGET
        verdict = "met in every round" if met else (
            "met in the median" if statistics.median(same) >= TARGET else "not met")
        print(f"\nTarget (issue 8): a cold read of a remote branch at ≥ {TARGET}× the raw GET rate (curl-get). "
              f"Same bytes: {spread(same, 2)}; per file MiB/s: {spread(file_rate, 2)} → **{verdict}** "
              "(judged on the same-bytes ratio, the stricter one).")
        results["targets"].append({"target": f"strata-read >= {TARGET}x curl-get", "same_bytes": same,
                                   "file_rate": file_rate, "verdict": verdict})

    # The daemon's counters after each cold read, and what RGW and the block cache saw.
    print("\nCounters of each cold read (`strata stats MP --json` after the read; RGW's `perf dump` around it; the "
          "block cache's files afterwards):\n")
    print("| round | demands | fetches | at once (max) | read-ahead issued | used | wasted | skipped | bytes verified "
          "| pread ms | decode ms | block-cache blocks (by the mount) | block-cache MiB | RGW GETs | RGW MiB sent |")
    print("|" + "---|" * 15)
    for k in rounds:
        if ("strata-read", k) not in by:
            continue
        r = by[("strata-read", k)]
        rp, st = {}, {}
        if r["stats"] not in ("", "-") and os.path.exists(os.path.join(out, r["stats"])):
            j = json.load(open(os.path.join(out, r["stats"])))
            rp = j.get("workspace_counters", {}).get("read_path", {})
            st = rp.get("store", {})
        cache = {}
        cp = os.path.join(out, "logs", f"r{k}-strata-read-cache.tsv")
        if os.path.exists(cp):
            cache = dict(line.rstrip("\n").split("\t", 1) for line in open(cp) if "\t" in line)
        c = {
            "round": int(k), "demands": rp.get("demands"), "fetches": rp.get("fetches"),
            "fetches_in_flight_max": rp.get("fetches_in_flight_max"), "readahead_issued": rp.get("readahead_issued"),
            "readahead_used": rp.get("readahead_used"), "readahead_wasted": rp.get("readahead_wasted"),
            "readahead_skipped": rp.get("readahead_skipped"), "bytes_verified": st.get("bytes_verified"),
            "pread_ms": st["pread_us"] / 1000 if "pread_us" in st else None,
            "decode_ms": st["decode_us"] / 1000 if "decode_us" in st else None,
            "block_cache_files": num(cache.get("block_cache_files")),
            "block_cache_bytes": num(cache.get("block_cache_bytes")),
            "blocks_fetched_by_mount": num(cache.get("blocks_fetched_by_mount")),
            "rgw_gets": num(r["rgw_gets"]), "rgw_bytes_sent": num(r["rgw_bytes_sent"]),
        }
        results["counters"].append(c)
        f = lambda v, d=0: "–" if v is None else f"{v:,.{d}f}".replace(",", " ")
        print(f"| {k} | {f(c['demands'])} | {f(c['fetches'])} | {f(c['fetches_in_flight_max'])} | "
              f"{f(c['readahead_issued'])} | {f(c['readahead_used'])} | {f(c['readahead_wasted'])} | "
              f"{f(c['readahead_skipped'])} | {f(c['bytes_verified'])} | {f(c['pread_ms'])} | {f(c['decode_ms'])} | "
              f"{f(c['block_cache_files'])} ({f(c['blocks_fetched_by_mount'])}) | "
              f"{f(c['block_cache_bytes'] / 1048576 if c['block_cache_bytes'] is not None else None, 1)} | "
              f"{f(c['rgw_gets'])} | {f(c['rgw_bytes_sent'] / 1048576 if c['rgw_bytes_sent'] is not None else None, 1)} |")
    curl_rgw = [(k, by[(a, k)]) for k in rounds for a in ("curl-get", "curl-get-par4") if (a, k) in by]
    if curl_rgw:
        print("\nRGW for the curl arms: " + "; ".join(
            f"r{k} {r['arm']}: {r['rgw_gets']} GETs, {num(r['rgw_bytes_sent']) / 1048576:.1f} MiB sent"
            if num(r["rgw_bytes_sent"]) is not None else f"r{k} {r['arm']}: –" for k, r in curl_rgw) + ".")
    if store:
        results["store"] = store
    json.dump(results, open(os.path.join(out, "results.json"), "w"), indent=2)


if __name__ == "__main__":
    main()
