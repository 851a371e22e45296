# The run report of a machine with many CPUs: up to 32 CPUs a row each;
# above, the 8 CPUs with the most softirq time, then each column's least,
# median and most over every CPU (sim/report/run_report.cpp), which the
# JSON report's per-CPU entries must give back.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

opts=(--design modern-6.9 --cpus 64 --nohz --duration 3)
run run "${opts[@]}"
expect_status 0
expect_stdout_line '^Per CPU \(64 CPUs: the 8 with the most softirq time, then each column.s least, median and most over all of them; every CPU in --format json\)$'
printf '%s\n' "$out" | sed -n '/^Per CPU/,/^$/p' >table.txt
run run "${opts[@]}" --format json
expect_status 0
printf '%s\n' "$out" >run.json
python3 - table.txt run.json <<'EOF2' || fail "the per-CPU rows are not the JSON's top 8 and column spreads"
import json, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[2:]]
rows = [r for r in rows if r and (r[0].isdigit() or r[0] in ("min", "p50", "max"))]
cpus = json.load(open(sys.argv[2]))["cpus"]
assert len(cpus) == 64, len(cpus)
names = [r[0] for r in rows]
assert names[8:] == ["min", "p50", "max"], names
# The top rows: the 8 most softirq time, most first, a tie by CPU number.
want = sorted(range(64), key=lambda c: (-cpus[c]["timer_work_ns"]["softirq"], c))[:8]
assert [int(n) for n in names[:8]] == want, (names[:8], want)
for r, c in zip(rows[:8], want):
    assert int(r[1]) == cpus[c]["timers"]["arms"] and int(r[2]) == cpus[c]["timers"]["fired"], (r, c)
# Each column on its own: arms, fired, cancelled, pending, ticks.
keys = [("timers", "arms"), ("timers", "fired"), ("timers", "cancelled"), ("timers", "pending_at_end"),
        ("ticks", "total")]
for col, (a, b) in enumerate(keys, start=1):
    values = sorted(c[a][b] for c in cpus)
    got = {r[0]: int(r[col]) for r in rows[8:]}
    assert got == {"min": values[0], "p50": values[31], "max": values[-1]}, (b, got, values)
EOF2

# Up to 32 CPUs, a row for each.
run run --cpus 32 --duration 1
expect_status 0
[[ $(printf '%s\n' "$out" | sed -n '/^Per CPU$/,/^$/p' | grep -cE '^ +[0-9]+ ') -eq 32 ]] ||
  fail "not a row for each of 32 CPUs"
