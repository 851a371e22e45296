# timersim compare: a small run prints every design side by side, is
# deterministic, writes JSON atomically, and rejects bad parameters.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

small=(--connections 2000 --duration 20)

run compare "${small[@]}"
expect_status 0
expect_stdout_line '^ +classic +modern +heap$'
expect_stdout_line '^Verdict: '
expect_stdout_line '^  p99 '
first=$out

run compare "${small[@]}"
[[ $out == "$first" ]] || fail "two runs with the same seed differ"

dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT
run compare "${small[@]}" --design modern,heap --format json -o "$dir/out.json"
expect_status 0
expect_empty_stdout
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [x["name"] for x in d["designs"]]
assert names == ["modern", "heap"], names
heap = d["designs"][1]
assert heap["error_jiffies"]["max"] == 0 and heap["fired"] > 0, heap
assert d["designs"][0]["error_jiffies"]["min"] >= 1
' "$dir/out.json" || fail "JSON report is not what was asked for"
[[ $(ls -A "$dir") == out.json ]] || fail "temporary files left next to the output"

run compare "${small[@]}" --format csv
expect_status 0
expect_stdout_line '^design,metric,value$'
expect_stdout_line '^classic,cascade_moves,[0-9]+$'

run compare --hz 0
expect_usage_error '--hz' "try 'timersim compare --help'"
run compare --design classic,wheel
expect_usage_error "unknown design 'wheel'" "try 'timersim compare --help'"
run compare --slack lots
expect_usage_error '--slack' "try 'timersim compare --help'"
run compare --connections 1000 --duration -5
expect_usage_error '--duration' "try 'timersim compare --help'"
run compare --format yaml
expect_usage_error '--format' "try 'timersim compare --help'"

# A failing output write exits 1, names the file and leaves nothing behind.
run compare "${small[@]}" -o "$dir/no/such/dir/out.txt"
expect_status 1
[[ $err == *"$dir/no/such/dir/out.txt"* ]] || fail "error does not name the output file"
[[ ! -e $dir/no ]] || fail "a partial output was left"

# The event log: every fire row's jiffy is the bucket_expiry of the timer's
# last enqueue row (modern: the bucket the kernel collects; classic and heap:
# exactly expires, slack included), and rows are in time order per design.
run compare --connections 300 --duration 30 --message-interval 5000 --events "$dir/events.csv"
expect_status 0
python3 - "$dir/events.csv" <<'PY' || fail "event log is inconsistent"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
header = "design,cpu,time_ns,jiffies,event,timer,expires,level,idx,bucket_expiry"
assert open(sys.argv[1]).readline().strip() == header
last_enqueue, last_time, fired = {}, {}, {}
for r in rows:
    d, t, j = r["design"], int(r["time_ns"]), int(r["jiffies"])
    assert t >= last_time.get(d, 0), ("time goes back", r)
    last_time[d] = t
    key = (d, r["timer"])
    if r["event"] == "enqueue":
        last_enqueue[key] = r
        if d == "modern":
            assert int(r["idx"]) // 64 == int(r["level"]), r
    elif r["event"] == "fire":
        e = last_enqueue.pop(key)
        assert j == int(e["bucket_expiry"]), (r, e)
        fired[d] = fired.get(d, 0) + 1
    elif r["event"] == "cancel":
        assert key in last_enqueue, r
for d in ("classic", "modern", "heap"):
    assert fired.get(d, 0) > 0, ("nothing fired", d)
PY
