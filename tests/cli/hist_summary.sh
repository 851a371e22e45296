# timersim run/compare --hist and the relative summary: the rtla-style
# histogram parses and its buckets plus over: are each CPU's fired timers;
# the summary's ratios are the JSON's numbers; a run where nothing fires
# says n/a, null or nothing, and no verdict it cannot support; compare
# --help says what is the same for every design. (--by: tests/cli/groups.sh.)
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

small=(--connections 200 --duration 10)

# The rtla-style histogram: parsed, every CPU's buckets plus under:/over:
# are its fired timers (count:), in jiffies and in us.
check_hist() {
  python3 - "$1" "$2" <<'PY' || fail "the histogram does not parse or does not add up"
import json, sys
blocks = open(sys.argv[1]).read().split("\n\n")
d = json.load(open(sys.argv[2]))
runs = d["designs"] if "designs" in d else [dict(d, name=d["design"])]
assert len(blocks) == len(runs), (len(blocks), len(runs))
for text, run in zip(blocks, runs):
    lines = [l for l in text.splitlines() if l]
    assert lines[0].startswith("# timersim latency histogram: " + run["name"] + " design")
    header = [l for l in lines if l.startswith("# Index")]
    assert len(header) == 1
    cpus = header[0].split()[2:]
    assert cpus == [f"CPU-{c:03}" for c in range(len(cpus))]
    sums = [0] * len(cpus)
    stats = {}
    bucket = None
    for l in lines:
        if l.startswith("#"):
            if "bucket size" in l:
                bucket = int(l.split("bucket size ")[1].split(",")[0])
            continue
        f = l.split()
        assert len(f) == len(cpus) + 1, l
        if f[0].endswith(":"):
            stats[f[0]] = f[1:]
        else:
            assert int(f[0]) % bucket == 0
            for c in range(len(cpus)):
                sums[c] += int(f[c + 1])
    per_cpu = run["per_cpu"] if "per_cpu" in run else run["cpus"]
    for c in range(len(cpus)):
        extra = int(stats["over:"][c]) + (int(stats["under:"][c]) if "under:" in stats else 0)
        fired = per_cpu[c]["fired"] if "fired" in per_cpu[c] else per_cpu[c]["timers"]["fired"]
        assert sums[c] + extra == int(stats["count:"][c]) == fired, (c, sums[c], extra, stats["count:"][c], fired)
        for k in ("min:", "avg:", "max:"):
            assert (stats[k][c] == "-") == (fired == 0)
print("ok")
PY
}
run compare "${small[@]}" --cpus 3 --format json -o "$dir/h.json"
expect_status 0
for args in "" "--bucket-size 3 --entries 8" "--hist-unit us --bucket-size 500 --entries 40" "--entries 1"; do
  # shellcheck disable=SC2086
  run compare "${small[@]}" --cpus 3 --hist $args -o "$dir/h.txt"
  expect_status 0
  check_hist "$dir/h.txt" "$dir/h.json" >/dev/null
done
run run "${small[@]}" --cpus 2 --format json -o "$dir/hr.json"
expect_status 0
run run "${small[@]}" --cpus 2 --hist --hist-unit us --bucket-size 1000 -o "$dir/hr.txt"
expect_status 0
check_hist "$dir/hr.txt" "$dir/hr.json" >/dev/null
grep -q '^# Time unit is microseconds (us)' "$dir/hr.txt" || fail "no unit line in the us histogram"
# In jiffies the min and max rows are each CPU's error extremes in the JSON.
run run "${small[@]}" --cpus 2 --hist
expect_status 0
printf '%s\n' "$out" >"$dir/hr-j.txt"
python3 - "$dir/hr.json" "$dir/hr-j.txt" >/dev/null <<'PY' || fail "histogram min/max are not the run's"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {l.split()[0]: l.split()[1:] for l in open(sys.argv[2]).read().splitlines() if l and not l.startswith("#")}
for c, cpu in enumerate(d["cpus"]):
    assert int(rows["min:"][c]) == cpu["error_jiffies"]["min"]
    assert int(rows["max:"][c]) == cpu["error_jiffies"]["max"]
    assert abs(float(rows["avg:"][c]) - cpu["error_jiffies"]["mean"]) < 0.006
print("ok")
PY
# Bad histogram options.
run compare --hist --format json
expect_usage_error '^timersim: --hist: writes its own text layout, not --format json$' "try 'timersim compare --help'"
run run --bucket-size 4
expect_usage_error '^timersim: --bucket-size, --entries and --hist-unit shape --hist: give --hist too$' "try 'timersim run --help'"
run run --hist --entries 0
expect_usage_error '^timersim: --entries: must be 1\.\.1000000, got 0$' "try 'timersim run --help'"
run run --hist --hist-unit ms
expect_usage_error "^timersim: --hist-unit: expected jiffies, us, got 'ms'$" "try 'timersim run --help'"
run run --by callback
expect_usage_error "^timersim: --by: expected function, cpu, level, base, got 'callback'$" "try 'timersim run --help'"

# The relative summary: the design with the least softirq time is the
# reference, and each line's ratio and p99 difference are the JSON's.
run compare "${small[@]}" --format json -o "$dir/s.json"
expect_status 0
run compare "${small[@]}"
expect_status 0
printf '%s\n' "$out" >"$dir/s.txt"
python3 - "$dir/s.json" "$dir/s.txt" >/dev/null <<'PY' || fail "the summary is not the JSON's numbers"
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
soft = {x["name"]: x["timer_work_ns"]["softirq"] for x in d["designs"]}
p99 = {x["name"]: x["error_jiffies"]["p99"] for x in d["designs"]}
ref = min(d["designs"], key=lambda x: x["timer_work_ns"]["softirq"])["name"]
assert d["summary"]["reference"] == ref
noun = "the heap's" if ref == "heap" else f"the {ref} wheel's"
lines = re.findall(r"^  (\w+): +([0-9.]+)x (.+?) softirq time, (.+)$", text, re.M)
assert sorted(l[0] for l in lines) == sorted(n for n in soft if n != ref), lines
for name, ratio, who, error in lines:
    assert who == noun, who
    assert abs(float(ratio) - soft[name] / soft[ref]) < 0.005, (name, ratio)
    row = next(x for x in d["summary"]["designs"] if x["name"] == name)
    assert abs(row["softirq_ratio"] - soft[name] / soft[ref]) < 1e-9
    diff = p99[name] - p99[ref]
    assert row["p99_error_diff_jiffies"] == diff
    if diff == 0:
        assert error == "the same p99 error", error
    else:
        m = re.match(r"p99 error (\d+) j (later|earlier)$", error)
        assert m and int(m.group(1)) == abs(diff) and m.group(2) == ("later" if diff > 0 else "earlier"), error
print("ok")
PY

# Nothing fired: n/a in text, null in JSON, empty in CSV, no verdict about precision.
run compare --ticks 1
expect_status 0
expect_stdout_line '^  p99 +n/a +n/a +n/a$'
expect_stdout_line '^  mean +n/a +n/a +n/a$'
grep -q 'fired every timer' <<<"$out" && fail "a verdict about fires when nothing fired"
grep -q 'on the jiffy it asked for' <<<"$out" && fail "a verdict about fires when nothing fired"
expect_stdout_line 'The heap fired no timer'
run compare --ticks 1 --format json -o "$dir/e.json"
expect_status 0
python3 - "$dir/e.json" >/dev/null <<'PY' || fail "statistics of no fires are not null"
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["designs"]:
    assert x["timers"]["fired"] == 0
    for k in ("mean", "min", "p50", "p99", "max"):
        assert x["error_jiffies"][k] is None and x["error_ms"][k] is None and x["error_ns"][k] is None, k
    assert x["error_jiffies"]["count"] == 0
print("ok")
PY
run compare --ticks 1 --format csv
expect_status 0
expect_stdout_line '^heap,error_p99_jiffies,$'
expect_stdout_line '^heap,error_mean_jiffies,$'
expect_stdout_line '^heap,fired,0$'
run run --ticks 1
expect_status 0
expect_stdout_line '^  n/a: no timer fired$'
run run --ticks 1 --format json
expect_status 0
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["total"]["error_jiffies"]["p99"] is None' <<<"$out" ||
  fail "run JSON: p99 of no fires is not null"

# compare --help says what is the same for every design, not more.
run compare --help
expect_status 0
grep -q 'the same operations at the same times' <<<"$out" && fail "--help claims the same operations at the same times"
expect_stdout_line 'generator with the same seed and rules, or a trace with the same events at the'
