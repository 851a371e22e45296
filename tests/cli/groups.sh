# timersim run/compare --by: group tables (text, JSON, CSV) sum to the
# totals for every grouping on a generated workload and on the real kernel
# capture; the default text shows the top 10. (--hist, the relative summary
# and empty runs: tests/cli/hist_summary.sh.)
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
capture=$data/kernel/capture-6.1-hz250.trace.xz
dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

# check_groups JSON_FILE: in every design (or the run), the groups' counts
# sum to the totals, their error histograms merge to the total's, and their
# softirq time plus the unattributed rest is the total's.
check_groups() {
  python3 - "$1" <<'PY' || fail "groups do not sum to the totals"
import json, sys, collections
d = json.load(open(sys.argv[1]))
units = d["designs"] if "designs" in d else [dict(d["total"], groups=d["groups"], name=d["design"])]
for u in units:
    g = u["groups"]
    t = u["timers"]
    assert g["groups"], u["name"]
    for key in ("arms", "fired", "cancelled", "early"):
        assert sum(x[key] for x in g["groups"]) == t[key], (u["name"], key)
    merged = collections.Counter()
    for x in g["groups"]:
        for v, c in x["error_jiffies"]["histogram"]:
            merged[v] += c
        if x["fired"] == 0:
            assert x["error_jiffies"]["p99"] is None
    total = {v: c for v, c in u["error_jiffies"]["histogram"]}
    assert dict(merged) == total, u["name"]
    softirq = u["timer_work_ns"]["softirq"]
    assert sum(x["softirq_ns"] for x in g["groups"]) + g["unattributed_softirq_ns"] == softirq, u["name"]
print("ok")
PY
}

# check_groups_csv CSV_FILE JSON_FILE: the CSV has the JSON's groups.
check_groups_csv() {
  python3 - "$1" "$2" <<'PY' || fail "the group CSV differs from the JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
units = d["designs"] if "designs" in d else [dict(groups=d["groups"], name=d["design"])]
for u in units:
    mine = [r for r in rows if r["design"] == u["name"]]
    groups = u["groups"]["groups"]
    assert [r["group"] for r in mine[:-1]] == [x["name"] for x in groups], u["name"]
    for r, x in zip(mine, groups):
        assert int(r["fired"]) == x["fired"] and int(r["arms"]) == x["arms"] and int(r["softirq_ns"]) == x["softirq_ns"]
        assert r["by"] == u["groups"]["by"]
        if x["fired"] == 0:
            assert r["error_p99_jiffies"] == ""
        else:
            assert int(r["error_p99_jiffies"]) == x["error_jiffies"]["p99"]
    assert mine[-1]["group"] == "(no expiry)" and int(mine[-1]["softirq_ns"]) == u["groups"]["unattributed_softirq_ns"]
print("ok")
PY
}

small=(--connections 200 --duration 10)
for by in function cpu level; do
  run compare "${small[@]}" --cpus 2 --workload mixed --by "$by" --format json -o "$dir/c-$by.json"
  expect_status 0
  check_groups "$dir/c-$by.json" >/dev/null
  run compare "${small[@]}" --cpus 2 --workload mixed --by "$by" --format csv -o "$dir/c-$by.csv"
  expect_status 0
  check_groups_csv "$dir/c-$by.csv" "$dir/c-$by.json" >/dev/null
  run run "${small[@]}" --design classic --by "$by" --format json -o "$dir/r-$by.json"
  expect_status 0
  check_groups "$dir/r-$by.json" >/dev/null
  run run "${small[@]}" --design classic --by "$by" --format csv -o "$dir/r-$by.csv"
  expect_status 0
  check_groups_csv "$dir/r-$by.csv" "$dir/r-$by.json" >/dev/null
  # The real kernel capture.
  run compare --ftrace "$capture" --by "$by" --format json -o "$dir/k-$by.json"
  expect_status 0
  check_groups "$dir/k-$by.json" >/dev/null
done
# --by lists every group; the heap says it has no levels.
run compare "${small[@]}" --cpus 2 --workload mixed --by cpu
expect_status 0
expect_stdout_line '^Timers by cpu, classic$'
expect_stdout_line '^ +armed +fired +cancel +p50 j +p99 j +max j +softirq +cpu$'
run compare "${small[@]}" --by level
expect_status 0
expect_stdout_line '^  \(the heap has no levels: every timer is in one group\)$'
expect_stdout_line ' tv1$'
expect_stdout_line ' level 0$'
# Without --by: the functions that fired most, at most 10 of them.
run compare --ftrace "$capture"
expect_status 0
expect_stdout_line '^Timers by function, modern: the 10 of [0-9]+ that fired most \(--by function: all\)$'
expect_stdout_line ' process_timeout$'
rows=$(awk '/^Timers by function, modern/{on=1; next} on && /^$/{exit} on' <<<"$out" | wc -l)
# The header, 10 groups, "(N more)" and "(no expiry)".
[[ $rows -eq 13 ]] || fail "the default group table is not the top 10: $rows lines"
long=$(awk 'length($0) > 80' <<<"$out")
[[ -z $long ]] || fail "text report lines wider than 80 columns: $long"

