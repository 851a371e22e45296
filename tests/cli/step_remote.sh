# timersim step --cpus N: the machine of `run --design modern-6.9` tick by
# tick, and the 6.9+ pull model's remote expiry on hand-computed cases (HZ=1000,
# tick 0 = jiffies 4294667296; a 20-jiffy timer sits in level 0, due one
# tick later, at tick 21, as `explain` says):
#   * 20@1, --nohz: CPU 1 arms a global timer and goes idle at once, with no
#     local timer to wake for; CPU 0, the last to go idle (tick 1), wakes at
#     tick 21 for the hierarchy's first event and expires it: "remote for CPU 1".
#   * the same without --nohz: every CPU ticks every tick, CPU 1 fires it.
#   * 20@1:pinned,30, --nohz: CPU 0 arms first and goes idle; CPU 1, the last,
#     wakes at 21 for its own local timer, then at 31 for CPU 0's global one.
#   * 4 CPUs, CPU 2 ticking at tick 22 (pinned timers due at 21 and 22), CPU
#     0 woken at 22, CPU 3's global timer due at 22: on one node CPU 0 is the
#     migrator of the group of 0-3 and expires it; on 2 nodes (groups 0-1 and
#     2-3) CPU 2 is the migrator of its own group and expires it.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

# fires: the JSON frames on stdin as "tick cpu timer remote_for" lines, and
# checks every frame has the CPU fields.
fires() {
  python3 -c '
import json, sys
for line in sys.stdin:
    f = json.loads(line)
    assert f["schema"] == "timersim.step.v1" and f["design"] == "modern-6.9", f
    for k in ("cpu", "cpus", "ticked", "woke", "idle", "wakeup", "pending_by_base", "rows"):
        assert k in f, (k, sorted(f))
    for x in f["fired"]:
        print(f["tick"], f["cpu"], x["timer"], x["remote_for"])
'
}

# expect_fires WANT: the fires of the JSON in $out are exactly WANT.
expect_fires() {
  local got
  got=$(fires <<<"$out") || fail "the JSON frames are not as documented"
  [[ $got == "$1" ]] || fail "fires: got '$got', want '$1'"
}

run step --timeouts 20@1 --cpus 2 --nohz --ticks 22 --hz 1000 --format json
expect_status 0
expect_fires "21 0 0 1"
python3 -c '
import json, sys
frames = [json.loads(l) for l in sys.stdin]
assert len(frames) == 2 * 23, len(frames)
# CPU 1 never ticks; CPU 0 ticks at 1 (and goes idle, its wakeup at 21) and
# wakes at 21.
assert [f["tick"] for f in frames if f["ticked"]] == [1, 21], [f["tick"] for f in frames if f["ticked"]]
cpu0 = {f["tick"]: f for f in frames if f["cpu"] == 0}
assert cpu0[1]["idle"] and cpu0[1]["wakeup"] == 4294667296 + 21, cpu0[1]
assert cpu0[21]["woke"] and cpu0[21]["softirq"], cpu0[21]
cpu1 = {f["tick"]: f for f in frames if f["cpu"] == 1}
assert cpu1[0]["pending_by_base"] == {"local": 0, "global": 1, "deferrable": 0}, cpu1[0]
assert cpu1[21]["pending_by_base"]["global"] == 0 and cpu1[21]["fired"] == []
' <<<"$out" || fail "the NOHZ frames differ from the hand-computed ones"
run step --timeouts 20@1 --cpus 2 --nohz --ticks 22 --hz 1000
expect_status 0
expect_stdout_line '^  CPU 1 armed #0 \(20@1\) for tick 20: L0\[53\], due at tick 21$'
expect_stdout_line '^=== ticks 2\.\.20: jiffies 4294667298\.\.4294667316, no CPU ticks =+$'
expect_stdout_line '^  CPU 0 fired #0 \(20@1\), remote for CPU 1: asked for tick 20, 1 jiffy \(1 ms\)$'
expect_stdout_line '^    0  woke  raised   0/0/0          idle, no timer to wake for$'
[[ $(grep -c ' fired #' <<<"$out") -eq 1 ]] || fail "expected one fire"

# Without NOHZ: CPU 1 fires its own timer; every CPU ticks every tick.
run step --timeouts 20@1 --cpus 2 --ticks 22 --hz 1000 --format json
expect_status 0
expect_fires "21 1 0 None"
python3 -c '
import json, sys
frames = [json.loads(l) for l in sys.stdin if json.loads(l)["frame"] == "tick"]
assert frames and all(f["ticked"] and not f["idle"] for f in frames)
' <<<"$out" || fail "without --nohz a CPU did not tick"
run step --timeouts 20@1 --cpus 2 --ticks 22 --hz 1000
expect_stdout_line '^  CPU 1 fired #0 \(20@1\): asked for tick 20, 1 jiffy \(1 ms\) late$'
expect_stdout_line '^No NOHZ: every tick runs on every CPU'
! grep -q 'remote for' <<<"$out" || fail "a remote expiry without --nohz"

# A pinned timer wakes its own CPU, which then expires the other's global one.
run step --timeouts 20@1:pinned,30 --cpus 2 --nohz --ticks 32 --hz 1000 --format json
expect_status 0
expect_fires $'21 1 0 None\n31 1 1 0'

# The NUMA nodes pick the migrator.
cpus4=(--timeouts 21@0:pinned,20@2:pinned,21@2:pinned,21@3 --cpus 4 --nohz --ticks 23 --hz 1000)
run step "${cpus4[@]}" --format json
expect_status 0
expect_fires $'21 2 1 None\n22 0 0 None\n22 0 3 3\n22 2 2 None'
run step "${cpus4[@]}" --numa-nodes 2 --format json
expect_status 0
expect_fires $'21 2 1 None\n22 0 0 None\n22 2 2 None\n22 2 3 3'
run step "${cpus4[@]}" --numa-nodes 2
expect_status 0
tr '\n' ' ' <<<"$out" | grep -q 'migration hierarchy (level 0: CPUs 0-1 2-3; level 1: CPUs 0-3)' ||
  fail "the intro does not name the groups of the two nodes"
expect_stdout_line '^  CPU 2 fired #3 \(21@3\), remote for CPU 3: '

# 8 CPUs stay within 80 columns, and a run is deterministic.
eight=(--timeouts 5@7,9@3:pinned,12@5,60ms@1,3@0 --cpus 8 --nohz --hz 1000 --numa-nodes 2)
run step "${eight[@]}" --ticks 70
expect_status 0
wide=$(awk 'length($0) > 80 { print NR ": " length($0); exit }' <<<"$out")
[[ -z $wide ]] || fail "a line wider than 80 columns: $wide"
first=$out
run step "${eight[@]}" --ticks 70
[[ $out == "$first" ]] || fail "two identical runs differ"
run step "${eight[@]}" --from 10 --ticks 60 --format json
expect_status 0
printf '%s\n' "$out" >from.jsonl
run step "${eight[@]}" --ticks 70 --format json
printf '%s\n' "$out" >all.jsonl
# --from runs the first ticks silently: the frames after it are the same.
python3 - <<'PY' || fail "--from changed the machine's frames"
import json
a = [json.loads(l) for l in open("from.jsonl")]
b = [json.loads(l) for l in open("all.jsonl")]
a = [f for f in a if f["frame"] == "tick"]
b = [f for f in b if f["frame"] == "tick" and f["tick"] > 10]
assert a == b and len(a) == 8 * 60, (len(a), len(b))
assert sum(len(f["fired"]) for f in a) == 2 # 12@5 and 60ms@1
PY

# One CPU: @0 and :pinned are honoured by the one-CPU view (a pinned timer
# on modern-6.9's local base, row pL0), which has no CPU fields.
run step --timeouts 20@0:pinned,36@0 --ticks 1 --design modern-6.9 --hz 1000 --format json
expect_status 0
python3 -c '
import json, sys
f = [json.loads(l) for l in sys.stdin][0]
assert "cpu" not in f and "cpus" not in f
rows = {r["name"]: r["total"] for r in f["rows"]}
assert rows["pL0"] == 1 and rows["L0"] == 1, rows
' <<<"$out" || fail "one CPU: the pinned timer is not on the local base"

# Bad values: one line and a hint, exit 2.
run step --timeouts 20@2 --cpus 2 --ticks 1
expect_usage_error "^timersim: --timeouts: '20@2': CPU 2, but --cpus is 2 \(CPUs 0\.\.1\)$" "try 'timersim step --help'"
run step --timeouts 20@1 --ticks 1
expect_usage_error "^timersim: --timeouts: '20@1': CPU 1, but --cpus is 1 \(CPUs 0\.\.0\)$" "try 'timersim step --help'"
run step --timeouts 20@one --cpus 2 --ticks 1
expect_usage_error "^timersim: --timeouts: '20@one': expected TIMEOUT@CPU or TIMEOUT@CPU:pinned, CPU a number$" \
  "try 'timersim step --help'"
run step --timeouts 20@1 --cpus 2 --design modern --ticks 1
expect_usage_error "^timersim: --cpus 2: several CPUs run modern-6\.9 only \(the 6\.9\+ pull model\), not --design modern$" \
  "try 'timersim step --help'"
run step --timeouts 20@1 --cpus 9 --ticks 1
expect_usage_error "^timersim: --cpus: step shows 1\.\.8 CPUs, got 9$" "try 'timersim step --help'"
run step --timeouts 20@1 --cpus 2 --numa-nodes 3 --ticks 1
expect_usage_error "^timersim: --numa-nodes: must be 1\.\.2 \(the CPUs\), got 3$" "try 'timersim step --help'"
run step --timeouts 20 --nohz --ticks 1
expect_usage_error "^timersim: --nohz: only with --cpus 2 or more" "try 'timersim step --help'"
run step --cpus 2 --ticks 1
expect_usage_error "^timersim: --cpus 2: several CPUs take --timeouts only, not connection churn$" \
  "try 'timersim step --help'"
