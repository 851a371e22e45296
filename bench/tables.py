#!/usr/bin/env python3
"""Turn timersim_bench JSON results into Markdown tables (medians and ranges).

    python3 bench/tables.py RUN.json [RUN.json ...]

Times are CPU time: the CPU column of the per-operation benchmarks (the median
of their repetitions) and the ns_per_timer counter of the expiry benchmarks.
With several runs, each figure is the median over the runs, followed by the
lowest and highest run in parentheses; ratios to the heap (below 1 = faster
than the heap) are taken between medians at the same number of pending
timers. Standard library only.
"""
import json
import re
import statistics
import sys

QUEUES = ("modern", "classic", "heap")
NAME = re.compile(r"^(?P<bench>[a-z_]+)/(?P<queue>[a-z]+)/pending:(?P<n>\d+)")
CLOCK = re.compile(r"^clock_reference/(?P<tag>[a-z]+)")
LATENCY = re.compile(r"^memory_latency/MiB:(?P<mib>\d+)")


def load(path):
    """{(bench, queue, pending): result} of one run, its context and machine readings."""
    with open(path) as f:
        data = json.load(f)
    results, machine = {}, {"GHz": [], "latency": {}}
    for r in data["benchmarks"]:
        if r.get("error_occurred"):
            continue
        name = r.get("run_name", r["name"])
        if CLOCK.match(name) and "GHz" in r:
            machine["GHz"].append(r["GHz"])
            continue
        m = LATENCY.match(name)
        if m and "ns_per_load" in r:
            machine["latency"][int(m["mib"])] = r["ns_per_load"]
            continue
        m = NAME.match(name)
        if not m:
            continue
        key = (m["bench"], m["queue"], int(m["n"]))
        # A repeated benchmark is represented by its median aggregate; one that
        # ran once by that run.
        if r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == "median":
                results[key] = r
        elif r.get("repetitions", 1) <= 1:
            results[key] = r
    return data.get("context", {}), results, machine


def cpu_ns(r):
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[r.get("time_unit", "ns")]
    return r["cpu_time"] * scale


def per_timer(r):
    return r["ns_per_timer"]


def pending_label(n):
    for div, suffix in ((1_000_000, "M"), (1_000, "K")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)


def fmt_ns(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


class Runs:
    def __init__(self, paths):
        self.paths = paths
        loaded = [load(p) for p in paths]
        self.contexts = [c for c, _, _ in loaded]
        self.runs = [r for _, r, _ in loaded]
        self.machine = [m for _, _, m in loaded]

    def sizes(self, bench):
        return sorted({n for run in self.runs for (b, _, n) in run if b == bench})

    def values(self, bench, queue, n, value):
        return [value(run[(bench, queue, n)]) for run in self.runs if (bench, queue, n) in run]

    def first(self, bench, queue, n):
        for run in self.runs:
            if (bench, queue, n) in run:
                return run[(bench, queue, n)]
        return None

    def cell(self, vals):
        if not vals:
            return "-", None
        med = statistics.median(vals)
        if len(vals) == 1:
            return fmt_ns(med), med
        return f"{fmt_ns(med)} ({fmt_ns(min(vals))}-{fmt_ns(max(vals))})", med


def time_table(runs, bench, value, extra=()):
    """One row per pending count: each wheel's time and its ratio to the heap.

    `extra` holds (title, cell) pairs; cell(first result by queue, pending) -> str.
    """
    head = ["pending", "modern ns", "modern/heap", "classic ns", "classic/heap", "heap ns"]
    head += [title for title, _ in extra]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in runs.sizes(bench):
        row = [pending_label(n)]
        heap_text, heap = runs.cell(runs.values(bench, "heap", n, value))
        for q in ("modern", "classic"):
            text, med = runs.cell(runs.values(bench, q, n, value))
            row.append(text)
            row.append(f"{med / heap:.2f}x" if med is not None and heap else "-")
        row.append(heap_text)
        first = {q: runs.first(bench, q, n) for q in QUEUES}
        row += [cell(first, n) for _, cell in extra]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def pct(r, key):
    return f"{100 * r[key]:.1f}%" if r and key in r else "-"


def memory_table(runs):
    sizes = runs.sizes("memory")
    head = ["queue", "node bytes"] + [f"resident B/timer at {pending_label(n)}" for n in sizes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for q in QUEUES:
        first = [runs.first("memory", q, n) for n in sizes]
        if not any(first):
            continue
        node = next(r["node_B"] for r in first if r)
        row = [q, f"{node:.0f}"]
        for n in sizes:
            vals = runs.values("memory", q, n, lambda r: r["rss_B"])
            row.append(f"{statistics.median(vals):.1f}" if vals else "-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def machine_table(runs):
    """Per run: when, the load average, the clock speed and the memory latency."""
    sizes = sorted({mib for m in runs.machine for mib in m["latency"]})
    head = ["run", "started", "load avg (1/5/15 min)", "GHz (start, end)"]
    head += [f"load latency {mib} MiB (ns)" for mib in sizes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, (c, m) in enumerate(zip(runs.contexts, runs.machine), 1):
        row = [str(i), c.get("date", "?"), " ".join(f"{x:.2f}" for x in c.get("load_avg", [])),
               ", ".join(f"{g:.2f}" for g in m["GHz"]) or "-"]
        row += [f"{m['latency'][mib]:.0f}" if mib in m["latency"] else "-" for mib in sizes]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = Runs(sys.argv[1:])
    out = []
    out.append(f"<!-- bench/tables.py {' '.join(runs.paths)} -->")
    out.append("### the runs\n")
    out.append(machine_table(runs))
    out.append("")
    out.append("### arm + cancel (ns per pair)\n")
    out.append(time_table(runs, "arm_cancel", cpu_ns))
    out.append("\n### re-arm to a random new expiry (ns per mod_timer)\n")
    out.append(time_table(runs, "rearm_random", cpu_ns, extra=(
        ("modern same bucket", lambda g, n: pct(g["modern"], "same_bucket")),
        ("classic same expiry", lambda g, n: pct(g["classic"], "same_expiry")),
    )))
    out.append("\n### re-arm within 16 jiffies of the filled expiry (ns per mod_timer)\n")
    out.append(time_table(runs, "rearm_nearby", cpu_ns, extra=(
        ("modern same bucket", lambda g, n: pct(g["modern"], "same_bucket")),
        ("modern same expiry", lambda g, n: pct(g["modern"], "same_expiry")),
        ("classic same expiry", lambda g, n: pct(g["classic"], "same_expiry")),
    )))
    out.append("\n### expiry, spread deadlines (ns per expired timer)\n")
    out.append(time_table(runs, "expire_spread", per_timer, extra=(
        ("classic cascade moves/timer",
         lambda g, n: f"{g['classic']['cascade_moves']:.2f}" if g["classic"] else "-"),
        ("ticks per timer (modern)",
         lambda g, n: f"{g['modern']['ticks'] / n:.3g}" if g["modern"] else "-"),
    )))
    out.append("\n### expiry, one deadline for all (ns per expired timer)\n")
    out.append(time_table(runs, "expire_burst", per_timer))
    out.append("\n### bytes per pending timer\n")
    out.append(memory_table(runs))
    print("\n".join(out))


if __name__ == "__main__":
    main()
