# timersim compare: a small run on the simulated machine prints every design
# side by side, writes the JSON of docs/output.md (schema, keys, types),
# is deterministic, keeps -o atomic, logs a consistent event CSV, and
# rejects bad parameters.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

small=(--connections 500 --duration 40)

dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

run compare "${small[@]}"
expect_status 0
expect_stdout_line '^timersim compare: tcp-retransmit,socket-timeouts, 40 s at HZ=250 on 1 CPU$'
expect_stdout_line '^  machine   10,000 ticks, tick always on, '
expect_stdout_line '^ +classic +modern +heap$'
expect_stdout_line '^  p99 '
expect_stdout_line '^Precision error histogram'
expect_stdout_line '^Verdict: classic: '
expect_stdout_line '^  classic   slack kernel default \(delay/256\), tv1 of 256 slots'
[[ -z $err ]] || fail "stderr is not a terminal, so no progress should be drawn"
long=$(awk 'length($0) > 80' <<<"$out")
[[ -z $long ]] || fail "text report lines wider than 80 columns: $long"

# The JSON report: the documented schema, field by field, with the heap
# exact and only the classic wheel cascading.
run compare "${small[@]}" --format json -o "$dir/a.json"
expect_status 0
expect_empty_stdout
[[ $(ls -A "$dir") == a.json ]] || fail "temporary files left next to the output"
python3 - "$dir/a.json" <<'PY' || fail "JSON report does not follow docs/output.md"
import json, sys
d = json.load(open(sys.argv[1]))
def typed(obj, spec, where):
    for key, kind in spec.items():
        assert key in obj, f"{where}: no {key}"
        value = obj[key]
        if kind is int:
            assert isinstance(value, int) and not isinstance(value, bool) and value >= 0, (where, key, value)
        elif kind is float:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), (where, key, value)
        else:
            assert isinstance(value, kind), (where, key, value)
assert d["schema"] == "timersim.compare.v2", d["schema"]
typed(d, {"workload": dict, "machine": dict, "cost_model_ns": dict, "designs": list, "verdict": str}, "top")
typed(d["workload"], {"name": str, "description": str, "params": dict}, "workload")
assert d["workload"]["name"] == "tcp-retransmit,socket-timeouts"
m = d["machine"]
typed(m, {"hz": int, "cpus": int, "ticks": int, "duration_s": float, "start_jiffies": int, "end_ns": int,
          "nohz_idle": bool, "ksoftirqd_delay_ns": int, "tick_jitter_ns": int, "jitter_seed": int,
          "max_expiries_per_softirq": int, "classic_slack": dict, "classic_geometry": str}, "machine")
assert (m["hz"], m["cpus"], m["ticks"], m["duration_s"]) == (250, 1, 10000, 40), m
assert m["classic_slack"] == {"mode": "default", "jiffies": None}, m["classic_slack"]
typed(d["cost_model_ns"], {k: int for k in ("enqueue", "dequeue", "cascade_move", "bucket_scan", "expiry",
                                            "callback", "next_expiry_step", "softirq_entry")}, "cost_model_ns")
assert [x["name"] for x in d["designs"]] == ["classic", "modern", "heap"]
stats = ("mean", "min", "p50", "p90", "p99", "p99.9", "max")
for x in d["designs"]:
    w = x["name"]
    typed(x, {"timers": dict, "error_jiffies": dict, "error_ms": dict, "error_ns": dict, "cascades": dict,
              "softirq": dict, "timer_work_ns": dict, "memory": dict, "counters": dict, "per_cpu": list,
              "series": dict}, w)
    typed(x["timers"], {k: int for k in ("arms", "rearm_dequeues", "fired", "cancelled", "pending_at_end", "early")}, w)
    e = x["error_jiffies"]
    typed(e, {"count": int, "early": int, "histogram": list, "mean": float, **{k: float for k in stats}}, w)
    assert all(isinstance(v, int) for k, v in e.items() if k not in ("mean", "histogram")), e
    assert sum(c for _, c in e["histogram"]) == e["count"] == x["timers"]["fired"] > 0, w
    assert e["histogram"] == sorted(e["histogram"]), w
    typed(x["error_ms"], {k: float for k in stats}, w)
    assert x["error_ms"]["max"] == e["max"] * 1000 / m["hz"], w
    typed(x["error_ns"], {"count": int, **{k: float for k in stats}}, w)
    typed(x["cascades"], {"moves": int, "cascades": int, "max_moves_per_softirq": int}, w)
    typed(x["softirq"], {"runs": int, "runs_irq_exit": int, "runs_ksoftirqd": int, "restarts": int, "deferrals": int,
                         "per_tick_mean_ns": float, "per_tick_p99_ns": int, "max_stall_ns": int,
                         "max_expired_per_run": int, "run_ns": dict}, w)
    assert x["softirq"]["per_tick_p99_ns"] <= x["softirq"]["max_stall_ns"] == x["softirq"]["run_ns"]["max"], w
    typed(x["timer_work_ns"], {"total": int, "softirq": int, "task": int, "cascades": int, "cpu_share_percent": float}, w)
    t = x["timer_work_ns"]
    assert t["total"] == t["softirq"] + t["task"] and t["cascades"] <= t["softirq"], t
    mem = x["memory"]
    typed(mem, {"bytes_per_timer": int, "peak_pending": int, "peak_bytes": int}, w)
    assert mem["peak_bytes"] == mem["bytes_per_timer"] * mem["peak_pending"] > 0, mem
    assert len(x["per_cpu"]) == 1 and x["per_cpu"][0]["fired"] == x["timers"]["fired"], w
    s = x["series"]
    typed(s, {"window_ticks": int, "start_ns": list, "softirq_ns": list, "max_softirq_ns": list,
              "cascade_moves": list, "expired": list}, w)
    n = len(s["start_ns"])
    assert n > 1 and all(len(s[k]) == n for k in ("softirq_ns", "max_softirq_ns", "cascade_moves", "expired")), w
    assert sum(s["cascade_moves"]) == x["cascades"]["moves"], w
    assert sum(s["softirq_ns"]) == t["softirq"], (w, sum(s["softirq_ns"]), t["softirq"])
by = {x["name"]: x for x in d["designs"]}
assert by["heap"]["error_jiffies"]["min"] == by["heap"]["error_jiffies"]["max"] == 0, by["heap"]["error_jiffies"]
assert by["classic"]["cascades"]["moves"] > 0, by["classic"]["cascades"]
assert by["modern"]["cascades"]["moves"] == 0 and by["heap"]["cascades"]["moves"] == 0
assert by["modern"]["error_jiffies"]["p99"] > 0 and by["modern"]["error_jiffies"]["min"] >= 0
assert d["verdict"].startswith("classic: ") and "modern: 0 cascade moves" in d["verdict"], d["verdict"]
PY

# Determinism: the same seed gives a byte-identical report, another seed does not.
run compare "${small[@]}" --format json -o "$dir/b.json"
expect_status 0
cmp -s "$dir/a.json" "$dir/b.json" || fail "two runs with the same seed differ"
run compare "${small[@]}" --format json --seed 2 -o "$dir/c.json"
expect_status 0
! cmp -s "$dir/a.json" "$dir/c.json" || fail "another seed gives the same report"
rm -f -- "$dir"/*.json

# --design chooses and orders; the CSV has the documented rows.
run compare "${small[@]}" --design modern,heap --format csv
expect_status 0
expect_stdout_line '^design,metric,value$'
expect_stdout_line '^modern,cascade_moves,0$'
expect_stdout_line '^heap,error_max_jiffies,0$'
expect_stdout_line '^modern,softirq_per_tick_p99_ns,[0-9]+$'
[[ $(head -2 <<<"$out" | tail -1) == modern,arms,* ]] || fail "designs not in the order asked for"
grep -q '^classic,' <<<"$out" && fail "a design that was not asked for"
# Without the classic wheel, the header does not describe its slack and geometry.
run compare "${small[@]}" --design modern,heap
expect_status 0
expect_stdout_line '^  costs     ns: '
grep -q '^  classic ' <<<"$out" && fail "the header describes the classic wheel, which is not in the comparison"

# Machine options pass through: HZ, NOHZ, costs, slack.
run compare --connections 200 --duration 20 --hz 1000 --nohz --zero-cost --slack off --format json
expect_status 0
python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
m = d["machine"]
assert m["hz"] == 1000 and m["nohz_idle"] is True and m["ticks"] == 20000, m
assert m["classic_slack"]["mode"] == "off"
assert all(v == 0 for v in d["cost_model_ns"].values())
for x in d["designs"]:
    assert x["timer_work_ns"]["total"] == 0, x["name"]
' <<<"$out" || fail "machine options did not reach the report"

# Bad input: one line naming the option, exit 2.
run compare --hz 0
expect_usage_error '--hz' "try 'timersim compare --help'"
run compare --design classic,wheels
expect_usage_error "unknown design 'wheels'" "try 'timersim compare --help'"
run compare --design classic,wheel:modern,wheel:modern
expect_usage_error "'wheel:modern' given twice" "try 'timersim compare --help'"
run compare --design modern,modern
expect_usage_error "--design: 'modern' given twice" "try 'timersim compare --help'"
run compare --slack lots
expect_usage_error '--slack' "try 'timersim compare --help'"
run compare --duration -5
expect_usage_error '--duration' "try 'timersim compare --help'"
run compare --cpus 0
expect_usage_error '--cpus' "try 'timersim compare --help'"
run compare --format yaml
expect_usage_error '--format' "try 'timersim compare --help'"
run compare --cost-callback-ns 2000000000
expect_usage_error '--cost-callback-ns' "try 'timersim compare --help'"

# -o is all or nothing: no file when the run fails, before or after the
# simulation, and none when the output cannot be written.
run compare "${small[@]}" --hz 0 -o "$dir/out.json"
expect_status 2
run compare "${small[@]}" --events "$dir/no/such/dir/events.csv" -o "$dir/out.json"
expect_file_error "^timersim: $dir/no/such/dir/events\.csv: cannot create file \(No such file or directory\)\$"
run compare "${small[@]}" -o "$dir/no/such/dir/out.txt"
expect_file_error "^timersim: $dir/no/such/dir/out\.txt: cannot create file \(No such file or directory\)\$"
[[ -z $(ls -A "$dir") ]] || fail "a failed run left files: $(ls -A "$dir")"

# The event log (tests/cli/event_log_check.py: the documented header, the
# report's counts, fire rows at their enqueue's bucket, ...). On top of it:
# the modern wheel without NOHZ collects each bucket exactly at its expiry,
# so every modern fire row's jiffy is its enqueue's bucket_expiry too.
run compare --connections 300 --duration 30 --events "$dir/events.csv" --format json -o "$dir/report.json"
expect_status 0
python3 "$(dirname -- "${BASH_SOURCE[0]}")/event_log_check.py" "$dir/events.csv" "$dir/report.json" >/dev/null ||
  fail "event log is inconsistent"
python3 - "$dir/events.csv" <<'PY' || fail "a modern fire row is not at its bucket's expiry"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
order, last_enqueue = [], {}
for r in rows:
    if not order or order[-1] != r["design"]:
        assert r["design"] not in order, ("designs interleave", r)
        order.append(r["design"])
    if r["design"] == "modern" and r["event"] == "enqueue":
        last_enqueue[r["timer"]] = r
    if r["design"] == "modern" and r["event"] == "fire":
        assert r["jiffies"] == last_enqueue[r["timer"]]["bucket_expiry"], r
assert order == ["classic", "modern", "heap"], order
PY
