#!/usr/bin/env python3
"""Prints the cost-model table from timersim_bench_costs JSON results.

    python3 bench/cost_table.py RUN1.json [RUN2.json ...]

For every benchmark: the median of the runs' ns_per_op and, in
parentheses, the range, then the load average and clock each run started at.
Several runs because the machine is shared: the median is the figure to use.
"""
import json
import statistics
import sys


def fmt(x):
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    rows = {}
    order = []
    ghz = []
    for run in runs:
        for b in run["benchmarks"]:
            name = b["name"].replace("/manual_time", "")
            name = "/".join(p for p in name.split("/") if not p.startswith("iterations:"))
            if name.startswith("clock_reference"):
                ghz.append(f"{b.get('GHz', 0):.2f}")
                continue
            if "error_occurred" in b and b["error_occurred"]:
                continue
            if name not in rows:
                rows[name] = []
                order.append(name)
            rows[name].append(b)
    loads = [" ".join(f"{x:.2f}" for x in r["context"].get("load_avg", [])) for r in runs]
    print(f"{len(runs)} runs; started {runs[0]['context']['date']}; load average (1/5/15 min) at each start: "
          + "; ".join(loads))
    print("clock (GHz, start/end of each run): " + " ".join(ghz))
    print()
    print("| benchmark | ns per counted event, median (range) | other counters (median) |")
    print("|---|---|---|")
    for name in order:
        vals = [b["ns_per_op"] for b in rows[name]]
        extra = []
        for key in ("steps_per_scan", "steps_per_search"):
            if key in rows[name][0]:
                extra.append(f"{key} {statistics.median(b[key] for b in rows[name]):.1f}")
        print(f"| {name} | {fmt(statistics.median(vals))} ({fmt(min(vals))}-{fmt(max(vals))}) | {', '.join(extra)} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
