#!/usr/bin/env python3
"""Checks that a bench/run produced what it promises, asserting no figure:
results.md and results.json exist, every profiling method gave numbers
(samples and a judged chain count) on the split workload, every
post-mortem tool gave a line for every core, and every plot named is a
well-formed SVG. TAP on stdout.

Usage: check-results.py DIR
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

n = 0
failed = 0


def check(ok, what):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print(("ok" if ok else "not ok") + f" {n} - {what}")
    return ok


def main():
    if len(sys.argv) != 2:
        print("usage: check-results.py DIR", file=sys.stderr)
        return 64
    d = sys.argv[1]
    print("TAP version 13")
    check(os.path.getsize(os.path.join(d, "results.md")) > 0, "results.md written")
    try:
        with open(os.path.join(d, "results.json"), encoding="utf-8") as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        check(False, f"results.json loads ({e})")
        print(f"1..{n}")
        return 1
    check(True, "results.json loads")
    methods = res.get("methods", {})
    for run in res.get("runs", []):
        k = run["kernel"]
        split = [r for r in run["profiling"] if r["workload"] == "split"]
        fails = {f["method"]: f["why"] for f in run["failures"] if f["workload"] == "split"}
        for m in methods:
            rows = [r for r in split if r["method"] == m]
            if not rows and m in fails and k == "reference" and m in ("gcsprof-perf", "gcsprof-perf-defer", "perf-fp-gcs"):
                # Upstream has no GCS call chains: these two must say so.
                check("GCS" in fails[m], f"{k}: {m} says why it cannot run ({fails[m]})")
                continue
            if not rows and m == "eu-stackprof" and m in fails:
                # Another project's tool, which fails now and then (it
                # said why): its line is what the pipeline owes.
                check(bool(fails[m]), f"{k}: {m} failed and said why ({fails[m]})")
                continue
            check(rows and all(r["samples"] > 0 and r["in_scope"] >= r["exact"] >= 0 for r in rows),
                  f"{k}: {m} gave samples and judged chains on split"
                  + (f" (failed: {fails[m]})" if m in fails else ""))
        pm = run["postmortem"]
        for where in ("guest", "host"):
            cores = {r["core"] for r in pm if r["where"] == where}
            tools = {r["tool"] for r in pm if r["where"] == where}
            check(len(cores) >= 3 and len(tools) >= 3,
                  f"{k}: post-mortem lines from the {where} ({len(cores)} cores, {len(tools)} tools)")
            check(all(r["time_ns"] > 0 and r["total"] > 0 for r in pm if r["where"] == where),
                  f"{k}: every {where} post-mortem line has a time and a thread count")
    check(len(res.get("plots", [])) >= 4, f"at least 4 plots ({len(res.get('plots', []))})")
    for p in res.get("plots", []):
        try:
            root = ET.parse(os.path.join(d, p)).getroot()
            check(root.tag.endswith("svg"), f"{p} is an SVG")
        except (OSError, ET.ParseError) as e:
            check(False, f"{p} is a well-formed SVG ({e})")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
