"""Checks a timersim event log (--events FILE) against the report of the
same run (run or compare, --format json), for tests/cli/events.sh.

Usage: python3 event_log_check.py [--bounded] EVENTS.csv REPORT.json

What must hold, per design (docs/output.md, "the event log"):
  * the header is the documented one; rows are in time order;
  * the log's own counts are the report's: fire rows = fired, cancel rows =
    cancelled + re-arm dequeues (a re-arm into another bucket logs cancel
    then enqueue, as the kernel traces it), cascade rows = cascade moves, softirq_end
    rows = softirq runs, and the softirq_end rows' expired, cascade_moves
    and cost_ns add up to fired, cascade moves and softirq time;
  * every fire row's clk (the bucket's clock) is the bucket_expiry of the
    timer's last enqueue row (--bounded, a run with
    --max-expiries-per-softirq: on the modern wheel at least that and at
    most the fire's jiffies, as a carried-over level reads the kernel's
    baseclk when it starts, after a re-arm may have forwarded clk), every
    cascade row keeps that bucket_expiry,
    and fires and cascades happen inside a softirq run of their CPU;
  * placements are consistent: modern idx // 64 = level, a modern timer
    fires from the level it was enqueued at, a classic one from tv1, the
    heap has no level and its bucket_expiry is expires.
Prints one line of counts per design; exits non-zero on the first failure.
"""

import csv
import json
import sys

HEADER = ("design,cpu,time_ns,jiffies,event,timer,expires,level,idx,bucket_expiry,clk,name,label,"
          "from_level,from_idx,expired,cascade_moves,cost_ns")


def report_counts(report):
    """{design: counts} from a run or compare JSON report."""
    if report["schema"].startswith("timersim.compare"):
        return {d["name"]: {"fired": d["timers"]["fired"], "cancelled": d["timers"]["cancelled"],
                            "rearm_dequeues": d["timers"]["rearm_dequeues"], "moves": d["cascades"]["moves"],
                            "runs": d["softirq"]["runs"], "softirq_ns": d["timer_work_ns"]["softirq"]}
                for d in report["designs"]}
    t = report["total"]
    return {report["design"]: {"fired": t["timers"]["fired"], "cancelled": t["timers"]["cancelled"],
                               "rearm_dequeues": t["timers"]["rearm_dequeues"],
                               "moves": t["counters"]["cascade_moves"], "runs": t["softirq"]["duration_ns"]["count"],
                               "softirq_ns": t["timer_work_ns"]["softirq"]}}


def check(events_path, report_path, bounded=False):
    with open(events_path, newline="") as f:
        assert f.readline().rstrip("\n") == HEADER, "not the documented header"
        f.seek(0)
        rows = list(csv.DictReader(f))
    expected = report_counts(json.load(open(report_path)))
    by_design = {}
    for r in rows:
        by_design.setdefault(r["design"], []).append(r)
    assert sorted(by_design) == sorted(expected), (sorted(by_design), sorted(expected))
    for design, log in by_design.items():
        n = dict(fire=0, cancel=0, cascade=0, runs=0, expired=0, moves=0, cost=0, named=0)
        last_enqueue, in_softirq, last_time = {}, {}, 0
        running = {}  # taken off for its callback, then armed again before it ran
        for r in log:
            t, cpu, event = int(r["time_ns"]), r["cpu"], r["event"]
            assert t >= last_time, ("time goes back", r)
            last_time = t
            key = (cpu, r["timer"])
            if r["name"]:
                n["named"] += 1
            if event == "softirq_start":
                assert not in_softirq.get(cpu), ("nested softirq", r)
                in_softirq[cpu] = True
            elif event == "softirq_end":
                assert in_softirq.pop(cpu, False), ("softirq_end without start", r)
                n["runs"] += 1
                n["expired"] += int(r["expired"])
                n["moves"] += int(r["cascade_moves"])
                n["cost"] += int(r["cost_ns"])
            elif event == "enqueue":
                # Armed again while pending, only in one case: its CPU's
                # softirq has taken it off for its callback (the fire row
                # comes when the callback runs), and another CPU's mod_timer()
                # queued it anew meanwhile (6.1 expire_timers() detaches it
                # before dropping the lock).
                assert key not in last_enqueue or in_softirq.get(cpu), ("enqueued twice", r)
                if key in last_enqueue:
                    running[key] = last_enqueue[key]
                last_enqueue[key] = r
                if design == "modern":
                    assert int(r["idx"]) // 64 == int(r["level"]), r
                if design == "heap":
                    assert r["level"] == r["idx"] == r["clk"] == "" and r["bucket_expiry"] == r["expires"], r
                else:
                    assert r["clk"] != "", ("no base clock", r)
            elif event == "cascade":
                assert design == "classic", r
                assert in_softirq.get(cpu), ("cascade outside a softirq", r)
                e = last_enqueue[key]
                assert r["bucket_expiry"] == e["bucket_expiry"], ("a cascade moved the run jiffy", r, e)
                assert int(r["level"]) < int(r["from_level"]), ("not down a level", r)
                n["cascade"] += 1
            elif event == "fire":
                assert in_softirq.get(cpu), ("fire outside a softirq", r)
                e = running.pop(key, None) or last_enqueue.pop(key)
                if bounded and design == "modern":
                    assert int(e["bucket_expiry"]) <= int(r["clk"]) <= int(r["jiffies"]), (r, e)
                else:
                    assert r["clk"] == e["bucket_expiry"], ("fired from a bucket other than its enqueue's", r, e)
                if design == "modern":
                    assert r["level"] == e["level"] and r["idx"] == e["idx"], (r, e)
                if design == "classic":
                    assert r["level"] == "1", r
                n["fire"] += 1
            elif event == "cancel":
                e = last_enqueue.pop(key, None)
                assert e is not None, ("cancel of a timer not pending", r)
                assert (r["level"], r["idx"], r["bucket_expiry"]) == (e["level"], e["idx"], e["bucket_expiry"]) or \
                    design == "classic", ("cancelled from elsewhere than enqueued", r, e)
                n["cancel"] += 1
            else:
                raise AssertionError(("unknown event", r))
        x = expected[design]
        got = {"fired": n["fire"], "dequeues": n["cancel"], "moves": n["cascade"], "runs": n["runs"],
               "softirq_ns": n["cost"]}
        want = {"fired": x["fired"], "dequeues": x["cancelled"] + x["rearm_dequeues"], "moves": x["moves"],
                "runs": x["runs"], "softirq_ns": x["softirq_ns"]}
        assert got == want, (design, "log", got, "report", want)
        assert n["expired"] == x["fired"] and n["moves"] == x["moves"], (design, n, x)
        print(f"{design}: fired {n['fire']}, cancel rows {n['cancel']}, "
              f"cascade moves {n['cascade']}, softirq runs {n['runs']}, named rows {n['named']}")


if __name__ == "__main__":
    args = sys.argv[1:]
    bounded = args[:1] == ["--bounded"]
    check(*args[bounded:], bounded=bounded)
