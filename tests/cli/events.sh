# The event log (--events FILE on run and compare, docs/output.md): its rows
# reproduce the report's counts (fired, cancels, cascade moves, softirq
# runs, softirq time) and every fire row's bucket clock is its enqueue's
# bucket expiry (tests/cli/event_log_check.py), for every design, on a
# generated workload and on the real kernel capture; the trace's own names
# and labels are in it; it is deterministic; and the operations of a trace
# past the run's end are counted in the report, as an independent count of
# the trace's lines says.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
capture=$here/../data/kernel/capture-6.1-hz250.trace.xz
check=$here/event_log_check.py

# run --events, each design, a generated workload with cascades.
for design in classic modern heap; do
  run run --design "$design" --connections 500 --duration 20 --events "run-$design.csv" --format json -o "run-$design.json"
  expect_status 0
  python3 "$check" "run-$design.csv" "run-$design.json" >check.out || fail "run --design $design: event log inconsistent"
done
grep -q '^classic: .*cascade moves [1-9]' check.out ||
  python3 "$check" run-classic.csv run-classic.json | grep -q 'cascade moves [1-9]' ||
  fail "the classic run has no cascade rows to check"

# The same run twice: the same bytes.
run run --design classic --connections 500 --duration 20 --events again.csv --format json -o again.json
cmp -s run-classic.csv again.csv || fail "the event log is not deterministic"

# compare, on two CPUs with NOHZ, and with a bound on expiries per run.
run compare --cpus 2 --nohz --workload mixed --connections 200 --duration 20 --events nohz.csv --format json -o nohz.json
expect_status 0
python3 "$check" nohz.csv nohz.json >/dev/null || fail "NOHZ, 2 CPUs: event log inconsistent"
run compare --max-expiries-per-softirq 5 --connections 2000 --duration 10 --events bounded.csv --format json -o bounded.json
expect_status 0
python3 "$check" --bounded bounded.csv bounded.json >/dev/null || fail "bounded runs: event log inconsistent"

# The real capture (2 CPUs, 6.1, HZ=250): every design, the whole trace.
run compare --ftrace "$capture" --events kernel.csv --format json -o kernel.json
expect_status 0
python3 "$check" kernel.csv kernel.json >check.out || fail "the kernel capture: event log inconsistent"
# Timer rows name the kernel's timer (its hashed pointer, as the importer
# writes it) and its callback.
python3 - kernel.csv <<'PY' || fail "timer rows lack the trace's names and labels"
import csv, re, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["timer"]]
assert rows and all(re.fullmatch(r"0x[0-9a-f]{16}", r["name"]) for r in rows), "a timer row without its trace name"
labels = {r["label"] for r in rows}
assert {"process_timeout", "delayed_work_timer_fn"} <= labels, sorted(labels)[:10]
# One name per engine timer id within a design.
names = {}
for r in rows:
    assert names.setdefault((r["design"], r["timer"]), r["name"]) == r["name"], r
PY
# The modern wheel's fire rows: the bucket clock is the trace's baseclk
# model, and every one of them is also in the capture as a timer_expire_entry
# of that timer (same name) -- the replay fires what the kernel fired.
run run --ftrace "$capture" --events run-kernel.csv --format json -o run-kernel.json
expect_status 0
python3 "$check" run-kernel.csv run-kernel.json >/dev/null || fail "run --ftrace: event log inconsistent"

# Past the end: a 10 s run of the 33 s capture. The report counts the
# operations it did not simulate; the independent count is the lines of the
# imported trace (one operation a line, time in ns first) later than 10 s.
run import "$capture" -o capture.trace
expect_status 0
expected=$(awk '!/^#/ && $1 > 10000000000 { n++ } END { print n + 0 }' capture.trace)
[[ $expected -gt 0 ]] || fail "the capture has nothing after 10 s?"
run run --ftrace "$capture" --duration 10 --format json
expect_status 0
got=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["workload"]["operations_past_end"])' <<<"$out")
[[ $got == "$expected" ]] || fail "operations_past_end $got, the trace has $expected operations after 10 s"
run run --ftrace "$capture" --duration 10
expect_stdout_line "^$expected operations past the end of the run were not simulated\$"
run compare --ftrace "$capture" --duration 10 --format json -o past.json
python3 - "$expected" past.json <<'PY' || fail "compare: operations_past_end is not the trace's count"
import json, sys
report = json.load(open(sys.argv[2]))
assert all(d["timers"]["operations_past_end"] == int(sys.argv[1]) for d in report["designs"]), report["designs"]
PY
run compare --ftrace "$capture" --duration 10
expect_stdout_line "^  note +$(python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$expected") operations past the end of the run were not simulated\$"
# The whole trace, or a generator: nothing is left out, nothing is said.
run run --ftrace "$capture" --format json
[[ $(python3 -c 'import json, sys; print(json.load(sys.stdin)["workload"]["operations_past_end"])' <<<"$out") == 0 ]] ||
  fail "the whole trace left operations out"
run run --connections 100 --duration 5
[[ $out != *"past the end"* ]] || fail "a generator run claims operations past its end"

# --events - needs the report elsewhere; an unwritable log fails first.
run run --duration 1 --events -
expect_usage_error "^timersim: --events -: the report goes to stdout too; give -o FILE for it\$" \
  "try 'timersim run --help'"
run run --duration 1 --events no/such/dir/events.csv
expect_file_error "^timersim: no/such/dir/events\.csv: cannot create file \(No such file or directory\)\$"
