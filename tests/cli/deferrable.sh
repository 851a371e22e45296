# A kernel before 4.2 prints no timer flags (#38): a timer that fired two or
# more jiffies after it was due is taken as deferrable, so the replay lets
# it wait for the kernel's next run instead of waking the CPU for it, as
# 3.6's NOHZ idle did. The hand-written 3.6 trace (tests/data/kernel/
# deferrable-3.6.txt, its header says what it holds) has one such timer;
# the same trace read as 4.4's (flags would show) infers nothing and fires
# it on its jiffy, 20 early. The replay also runs to the kernel's last fire,
# 30 jiffies after the last event (an expiry's lines are no event).
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

trace=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/kernel" && pwd)/deferrable-3.6.txt

run run --ftrace "$trace"
expect_status 0
expect_stdout_line '^deferrable inferred for 1 timer \(1 arm\): a kernel before 4\.2 prints no timer flags'
expect_stdout_line '^replay of classic reproduces 3 of 3 fires the kernel recorded on the same jiffy and CPU \(100\.0%\)'
run run --ftrace "$trace" --format json
expect_status 0
printf '%s\n' "$out" >inferred.json

run run --ftrace "$trace" --kernel 4.4
expect_status 0
! grep -q 'deferrable inferred' <<<"$out" || fail "a 4.4 trace prints flags: nothing to infer"
expect_stdout_line '^replay of classic reproduces 2 of 3 fires'
run run --ftrace "$trace" --kernel 4.4 --format json
printf '%s\n' "$out" >shown.json

# The timers that fired 2+ jiffies after due, from the lines themselves:
# the one the header says.
late=$(awk '
  /timer_start:/ { match($0, /timer=[0-9a-f]+/); t = substr($0, RSTART + 6, RLENGTH - 6)
                   match($0, /expires=[0-9]+/); due[t] = substr($0, RSTART + 8, RLENGTH - 8) }
  /timer_expire_entry:/ { match($0, /timer=[0-9a-f]+/); t = substr($0, RSTART + 6, RLENGTH - 6)
                          match($0, /now=[0-9]+/); if (substr($0, RSTART + 4, RLENGTH - 4) - due[t] >= 2) print t }
' "$trace")
[[ $late == ffff880000002000 ]] || fail "the trace's late timer: $late"

python3 - inferred.json shown.json <<'PY' || fail "the inferred run against the 4.4 reading"
import json, sys
inferred, shown = (json.load(open(p)) for p in sys.argv[1:])
p = inferred["workload"]["params"]
assert p["inferred_deferrable_timers"] == 1 and p["inferred_deferrable_arms"] == 1, p
assert "inferred_deferrable_timers" not in shown["workload"]["params"]
# The run goes to the kernel's last fire: jiffy 30 of the trace, tick 30.
for r in (inferred, shown):
    assert r["machine"]["ticks"] == 31, r["machine"]["ticks"]
    assert r["total"]["timers"]["fired"] == 3, r["total"]["timers"]
# Inferred, every fire is the kernel's; read as 4.4, vmstat_update's is not.
assert inferred["workload"]["kernel_fires"]["same_jiffy_cpu"] == 3, inferred["workload"]["kernel_fires"]
assert shown["workload"]["kernel_fires"]["same_jiffy_cpu"] == 2, shown["workload"]["kernel_fires"]
PY

# import reads the trace as run does: the timer that fired late is written
# deferrable (and counted in the summary); read as 4.4 it is not.
run import "$trace" -o inferred.trace
expect_status 0
expect_stdout_line '1 arms of timers that fired late taken as deferrable'
[[ $(grep -c 'flags=deferrable' inferred.trace) == 1 ]] || fail "import did not write the inferred timer deferrable"
grep -q '^[0-9]* arm 0x[0-9a-f]* .*flags=deferrable label=vmstat_update' inferred.trace ||
  fail "the deferrable arm is not vmstat_update's"
run import "$trace" -o shown.trace --kernel 4.4
expect_status 0
! grep -q 'flags=deferrable' shown.trace || fail "import --kernel 4.4 inferred a deferrable timer"
