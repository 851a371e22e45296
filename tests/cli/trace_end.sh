# A replay ends with its trace (#35): at the first tick after the last
# event, with the timers still pending there reported as pending at end, not
# fired at times the recording never covered; --tail SECONDS goes on past it
# and the header says so. The length is computed here from the capture's own
# timestamps, not taken from timersim.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/kernel" && pwd)
capture=$data/capture-6.1-hz250-softirq.trace.xz
# The capture's last timer event: its timestamp, and the kernel's last
# jiffies sample (timer_start: expires - timeout; timer_expire_entry: now)
# with its timestamp. The replay lands events on the kernel's jiffies
# (kernel_clock.hpp), so its last event is at most a tick plus the time
# since that sample past the sample's jiffy.
read -r last sample_ts sample_j <<<"$(xz -dc -- "$capture" | awk '
  / timer_(init|start|cancel|expire_entry|expire_exit):/ {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1); break }
    last = t
    if (match($0, /expires=[0-9]+ \[timeout=-?[0-9]+\]/)) {
      split(substr($0, RSTART, RLENGTH), p, /[=\[\] ]+/); j = p[2] - p[4]
      if (j > sj) { sj = j; sts = t }
    }
    if (match($0, /now=[0-9]+/)) { j = substr($0, RSTART + 4, RLENGTH - 4) + 0; if (j > sj) { sj = j; sts = t } }
  }
  END { printf "%s %s %.0f\n", last, sts, sj }')"

run run --ftrace "$capture" --format json
expect_status 0
printf '%s\n' "$out" >ends.json
run run --ftrace "$capture" --tail 120 --format json
expect_status 0
printf '%s\n' "$out" >tail.json
python3 - ends.json tail.json "$last" "$sample_ts" "$sample_j" <<'PY' || fail "the replay's length"
import json, math, sys
ends, tail = (json.load(open(p)) for p in sys.argv[1:3])
last, sample_ts, sample_j = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
hz = 250
p = ends["workload"]["params"]
ticks = ends["machine"]["ticks"]
# The run ends at the first tick after the last event.
assert ticks == math.floor(p["last_event_s"] * hz) + 1 and p["tail_s"] == 0, (ticks, p)
# Its last jiffy is the kernel's at the last event.
last_jiffy = ends["machine"]["start_jiffies"] + ticks - 1
assert sample_j <= last_jiffy <= sample_j + math.floor((last - sample_ts) * hz) + 1, (last_jiffy, sample_j)
assert tail["machine"]["ticks"] == ticks + 120 * hz, tail["machine"]["ticks"]
assert tail["workload"]["params"]["tail_s"] == 120
e, t = ends["total"]["timers"], tail["total"]["timers"]
# The same events: the tail only lets pending timers fire.
assert e["arms"] == t["arms"] and e["cancelled"] == t["cancelled"], (e, t)
assert e["pending_at_end"] > 0 and t["fired"] > e["fired"], (e, t)
# A del_timer() is the work of the CPU that traced it: both CPUs of the
# capture cancel timers (all were charged to CPU 0 before).
per_cpu = [c["timers"]["cancelled"] for c in ends["cpus"]]
assert len(per_cpu) == 2 and min(per_cpu) > 0 and sum(per_cpu) == e["cancelled"], per_cpu
PY

run run --ftrace "$capture"
expect_status 0
expect_stdout_line "^replay ends with the trace: its last event at [0-9.]+ s\$"
run run --ftrace "$capture" --tail 1.5
expect_stdout_line "^replay ends with the trace: its last event at [0-9.]+ s, then --tail 1.5 s\$"
# A length asked for is the length: no line about the trace's end.
run run --ftrace "$capture" --duration 5
expect_status 0
! grep -q 'replay ends' <<<"$out" || fail "--duration still says the replay ends with the trace"

run run --ftrace "$capture" --tail 5 --duration 5
expect_usage_error '^timersim: --tail: not with --duration or --ticks' "try 'timersim run --help'"
run run --ftrace "$capture" --tail -1
expect_status 2

# A trace that ends in expiries (the committed small trace: its last lines
# are a timer_expire_entry and its exit, which give no event) is replayed
# up to the kernel's last fire, so that fire is replayed too.
small=$data/small-6.1-hz250.txt
last_now=$(grep -o 'now=[0-9]*' "$small" | cut -d= -f2 | sort -n | tail -1)
run run --ftrace "$small" --format json
expect_status 0
printf '%s\n' "$out" >small.json
python3 - small.json "$last_now" <<'PY' || fail "the replay stops before the kernel's last fire"
import json, sys
r = json.load(open(sys.argv[1]))
last_jiffy = r["machine"]["start_jiffies"] + r["machine"]["ticks"] - 1
assert last_jiffy == int(sys.argv[2]), (last_jiffy, sys.argv[2])
k = r["workload"]["kernel_fires"]
assert k["same_jiffy_cpu"] == k["kernel_fires"], k
PY
