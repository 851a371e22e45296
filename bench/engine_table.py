#!/usr/bin/env python3
"""Prints the engine table from timersim_bench_engine JSON results.

    python3 bench/engine_table.py RUN1.json [RUN2.json ...]

Per benchmark: the median over the runs of the timer operations per second
(millions) and of ns per operation, with the range; for engine_memory the
resident set and bytes per timer.
"""
import json
import statistics
import sys


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    rows, order = {}, []
    for run in runs:
        for b in run["benchmarks"]:
            name = "/".join(p for p in b["name"].split("/")
                            if not p.startswith(("min_time:", "iterations:")))
            if name.startswith("clock_reference"):
                continue
            if name not in rows:
                rows[name] = []
                order.append(name)
            rows[name].append(b)
    loads = ["/".join(f"{x:.1f}" for x in r["context"].get("load_avg", [])) for r in runs]
    print(f"{len(runs)} runs; load average at each start: {'; '.join(loads)}")
    print()
    print("| benchmark | M ops/s, median (range) | ns/op, median | pending |")
    print("|---|---|---|---|")
    for name in order:
        bs = rows[name]
        if "ops_per_s" in bs[0]:
            m = [b["ops_per_s"] / 1e6 for b in bs]
            ns = statistics.median(1e9 / b["ops_per_s"] for b in bs)
            print(f"| {name} | {statistics.median(m):.1f} ({min(m):.1f}-{max(m):.1f}) | {ns:.1f} "
                  f"| {statistics.median(b['pending'] for b in bs):.0f} |")
    print()
    print("| benchmark | resident GiB (whole process) | B per timer | pending after 1000 ticks |")
    print("|---|---|---|---|")
    for name in order:
        bs = rows[name]
        if "rss_GiB" in bs[0]:
            print(f"| {name} | {statistics.median(b['rss_GiB'] for b in bs):.3f} "
                  f"| {statistics.median(b['B_per_timer'] for b in bs):.1f} "
                  f"| {statistics.median(b['pending'] for b in bs):.0f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
