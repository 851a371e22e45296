# timersim run: the simulated machine on each design prints its report, is
# deterministic, writes JSON with the metrics that the engine promises, and
# rejects bad parameters.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

small=(--connections 2000 --duration 10)

for design in classic modern heap; do
  run run "${small[@]}" --design "$design"
  expect_status 0
  expect_stdout_line "^timersim run: $design design, HZ=250, 2500 ticks"
  expect_stdout_line '^Precision error \(fired - requested\)$'
  expect_stdout_line '^  fired +[1-9][0-9]*$'
  expect_stdout_line '^  from irq_exit +[1-9][0-9]*$'
done

run run "${small[@]}" --design classic --tick-jitter-ns 1000
expect_status 0
first=$out
run run "${small[@]}" --design classic --tick-jitter-ns 1000
[[ $out == "$first" ]] || fail "two runs with the same seeds differ"

dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

# Zero cost: the heap fires every timer exactly on its requested tick.
run run "${small[@]}" --design heap --zero-cost --format json -o "$dir/heap.json"
expect_status 0
expect_empty_stdout
# A long callback makes softirqs long; an override shows in the report.
run run "${small[@]}" --design modern --cost-callback-ns 100000 --format json -o "$dir/slow.json"
expect_status 0
python3 - "$dir/heap.json" "$dir/slow.json" <<'PY' || fail "JSON reports are not what was asked for"
import json, sys
heap = json.load(open(sys.argv[1]))
assert heap["schema"] == "timersim.run.v1" and heap["design"] == "heap", heap["design"]
cpu = heap["cpus"][0]
assert cpu["timers"]["fired"] > 0, cpu["timers"]
assert cpu["error_jiffies"]["min"] == 0 and cpu["error_jiffies"]["max"] == 0, cpu["error_jiffies"]
assert cpu["error_ns"]["max"] == 0 and cpu["error_ns"]["min"] == 0, cpu["error_ns"]
assert cpu["timer_work_ns"]["total"] == 0, cpu["timer_work_ns"]
assert all(v == 0 for v in heap["cost_model_ns"].values()), heap["cost_model_ns"]
slow = json.load(open(sys.argv[2]))
assert slow["cost_model_ns"]["callback"] == 100000
s = slow["cpus"][0]
assert s["softirq"]["max_ns"] >= 100000 * s["softirq"]["max_expired"], s["softirq"]
assert s["error_ns"]["max"] > s["error_jiffies"]["max"] * 4000000, (s["error_ns"], s["error_jiffies"])
PY

# NOHZ idle on a sparse workload: most ticks are skipped, and the classic
# wheel pays for walking the missed jiffies when it wakes.
run run --design classic --workload connection-churn --connections 50 --churn-message-interval-ms 20000 --duration 300 --nohz --format json -o "$dir/nohz.json"
expect_status 0
python3 - "$dir/nohz.json" <<'PY' || fail "NOHZ report is not what was expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["machine"]["nohz_idle"] is True
t = d["cpus"][0]["ticks"]
assert t["skipped"] > 10 * t["total"], t
assert t["tick_stops"] > 0 and t["wakeups_by_timer"] > 0 and t["wakeups_by_action"] > 0, t
assert d["cpus"][0]["counters"]["jiffies_walked"] > t["total"], d["cpus"][0]["counters"]
PY

run run --ticks 100 --connections 100 --hz 300
expect_status 0
expect_stdout_line 'HZ=300, 100 ticks'

run run --design wheels
expect_usage_error "--design: expected classic, modern, modern-6.9, heap, scheme1, scheme2, scheme4, scheme5, scheme6, netty, cog, wheel:SPEC, got 'wheels'" "try 'timersim run --help'"
run run --design wheel
expect_usage_error "--design: wheel: empty wheel spec" "try 'timersim run --help'"
run run --duration 5 --ticks 100
expect_usage_error '--duration and --ticks' "try 'timersim run --help'"
run run --hz 0
expect_usage_error '--hz' "try 'timersim run --help'"
run run --tick-jitter-ns 4000000
expect_usage_error '--tick-jitter-ns' "try 'timersim run --help'"
run run --cost-expiry-ns 2000000000
expect_usage_error '--cost-expiry-ns' "try 'timersim run --help'"
run run --format xml
expect_usage_error "--format: expected text, json, csv, got 'xml'" "try 'timersim run --help'"
# CSV is the group table (docs/output.md, tests/cli/groups.sh).
run run --ticks 500 --format csv
expect_status 0
expect_stdout_line '^design,by,group,arms,fired,cancelled,cancelled_share,early,error_p50_jiffies,'
run run --help
expect_status 0
expect_stdout_line '--ksoftirqd-delay-ns'
expect_stdout_line '--cost-bucket-scan-ns'

# Any workload: a generator by name, a recorded trace, several CPUs.
run run --workload keepalive --connections 20 --duration 10 --format json -o "$dir/ka.json"
expect_status 0
python3 - "$dir/ka.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["workload"]["name"] == "keepalive", r["workload"]
PY
run gen --workload tcp-retransmit --connections 50 --duration 20 -o "$dir/tcp.trace"
expect_status 0
run run --trace "$dir/tcp.trace" --design classic --format json -o "$dir/replay.json"
expect_status 0
python3 - "$dir/replay.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["workload"]["name"] == "trace", r["workload"]
assert r["total"]["timers"]["fired"] > 0, r["total"]["timers"]
PY
run run --cpus 2 --connections 200 --duration 10 --format json -o "$dir/two.json"
expect_status 0
python3 - "$dir/two.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["machine"]["cpus"] == 2 and len(r["cpus"]) == 2, r["machine"]
fired = [c["timers"]["fired"] for c in r["cpus"]]
assert all(f > 0 for f in fired), fired  # connections are spread over both CPUs
PY
printf '# timersim-trace v1 hz=250\n0 arm t1 in=zz\n' > "$dir/bad.trace"
run run --trace "$dir/bad.trace" -o "$dir/bad.json"
expect_status 2
expect_empty_stdout
[[ $err =~ ^timersim:\ .*/bad.trace:2:\ .*\(in\)$ ]] || fail "expected one FILE:LINE: ... (in) line"
[[ ! -e $dir/bad.json ]] || fail "a failed run left an output file"

# A kernel trace replays directly, on as many CPUs as it names (unless --cpus says otherwise).
data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
run run --ftrace "$data/kernel/small-6.1-hz250.txt" --format json -o "$dir/kernel.json"
expect_status 0
python3 - "$dir/kernel.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["workload"]["name"] == "ftrace" and r["machine"]["cpus"] == 2, (r["workload"], r["machine"])
assert r["machine"]["hz"] == 250 and r["total"]["timers"]["fired"] > 0, r["total"]["timers"]
PY
run run --ftrace "$data/kernel/small-6.1-hz250.txt" --cpus 1
expect_status 2
[[ $err == *"small-6.1-hz250.txt:"*"(cpu)" ]] || fail "expected the FILE:LINE: ... (cpu) error"
