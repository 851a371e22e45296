# timersim step: the tick-by-tick view fits 80 columns, a timer fires at the
# tick `timersim explain` predicts for each wheel, --format json is valid JSON
# Lines with the same data, runs are deterministic, and bad options are
# usage errors.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

# expect_80_columns: no stdout line is wider than 80 characters.
expect_80_columns() {
  local wide
  wide=$(awk 'length($0) > 80 { print NR ": " length($0) " columns"; exit }' <<<"$out")
  [[ -z $wide ]] || fail "stdout line $wide"
}

run step --timeouts 36,300,20000 --ticks 3 --hz 1000
expect_status 0
expect_empty_stderr
expect_80_columns
expect_stdout_line '^=== tick 0: jiffies 4294667296, the start =+$'
expect_stdout_line '^=== tick 3: jiffies 4294667299 '
expect_stdout_line '^classic \(<= 4\.7\): timer_jiffies 4294667296, 3 pending$'
expect_stdout_line '^modern \(6\.1\): clk 4294667296, next_expiry 4294667333 \(in 37\), 3 pending$'
# reference §8.1/§8.2 at HZ=1000: 36 jiffies is modern level 0, classic tv1.
expect_stdout_line '^  armed #0 \(36\) for tick 36: L0\[5\], due at tick 37$'
expect_stdout_line '^  armed #0 \(36\) for tick 36: tv1\[68\], due at tick 36$'
expect_stdout_line '^  softirq not raised: jiffies is before next_expiry$'
expect_stdout_line '^  softirq raised \(every tick\): '
# Every level is a row of 64 cells; classic tv1 is drawn as 4 rows.
[[ $(grep -cE '^  L[0-8] +\|[.1-9+]{64}\| +[0-9]+$' <<<"$out") -eq 36 ]] || fail "expected 9 modern rows per frame"
[[ $(grep -cE '^  (tv[1-5]|\+64|\+128|\+192) +\|[.1-9+]{64}\| +[0-9]+$' <<<"$out") -eq 32 ]] ||
  fail "expected 8 classic rows per frame"
first=$out

run step --timeouts 36,300,20000 --ticks 3 --hz 1000
[[ $out == "$first" ]] || fail "two identical runs differ"

# The connection-churn workload (the default) and CONFIG_BASE_SMALL stay
# within 80 columns too, and a seed means the same output.
run step --ticks 4 --from 3000 --connections 500
expect_status 0
expect_80_columns
expect_stdout_line '^  armed #[0-9]+ \((retransmit|delayed_ack|idle)\) for tick '
first=$out
run step --ticks 4 --from 3000 --connections 500
[[ $out == "$first" ]] || fail "two runs with the same seed differ"
run step --ticks 2 --from 300 --base-small --design classic --hz 100
expect_status 0
expect_80_columns
expect_stdout_line '^  tv2  \|[.1-9+]{16}\| +[0-9]+$'

# A known timer fires exactly at the tick `timersim explain` predicts, in
# both wheels: the start is explain's arming jiffy, the firing jiffy is the
# modern bucket expiry and the classic loop step that runs the timer.
for timeout in 300 20000; do
  run explain --hz 1000 --timeout "$timeout"
  expect_status 0
  start=$(sed -nE 's/^A timer armed at jiffies ([0-9]+) .*/\1/p' <<<"$out")
  modern_at=$(sed -nE 's/.*collects that bucket when clk reaches ([0-9]+):.*/\1/p' <<<"$out")
  classic_at=$(sed -nE 's/.*loop step where timer_jiffies == ([0-9]+),.*/\1/p' <<<"$out")
  [[ -n $start && -n $modern_at && -n $classic_at ]] || fail "could not read explain's predictions"
  for pair in "modern $((modern_at - start))" "classic $((classic_at - start))"; do
    read -r design tick <<<"$pair"
    run step --timeouts "$timeout" --hz 1000 --design "$design" --from $((tick - 2)) --ticks 2
    expect_status 0
    expect_80_columns
    expect_stdout_line "^=== tick $tick: jiffies $((start + tick)) "
    [[ $(grep -c "^  fired #0 ($timeout): asked for tick $timeout, " <<<"$out") -eq 1 ]] ||
      fail "timeout $timeout: $design should fire once, at tick $tick"
    # ... and not a tick earlier: the line must come after tick $tick's title.
    sed -n "/^=== tick $tick: /,\$p" <<<"$out" | grep -q '^  fired #0 ' ||
      fail "timeout $timeout: $design fired before tick $tick"
  done
done

# JSON Lines: one object per frame and wheel, with the same numbers.
run step --timeouts 36,300,20000 --ticks 40 --hz 1000 --format json
expect_status 0
expect_empty_stderr
python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 2 * 41, len(lines)
frames = [json.loads(line) for line in lines]
fired = {}
for f in frames:
    assert f["schema"] == "timersim.step.v1"
    assert f["frame"] == ("start" if f["tick"] == 0 else "tick")
    assert f["jiffies"] == 4294667296 + f["tick"]
    counts = [sum(level["counts"]) for level in f["levels"]]
    assert sum(counts) == f["pending"], f
    if f["design"] == "modern":
        assert len(f["levels"]) == 9 and all(len(l["counts"]) == 64 for l in f["levels"])
        for l in f["levels"]:
            assert l["name"] == "L%d" % l["level"]
            assert l["pointer"] == (f["clk"] >> (3 * l["level"])) & 63
    else:
        assert [len(l["counts"]) for l in f["levels"]] == [256, 64, 64, 64, 64]
        t = f["timer_jiffies"]
        assert [l["pointer"] for l in f["levels"]] == [t & 255] + [(t >> (8 + 6 * i)) & 63 for i in range(4)]
    if f["tick"] == 0:
        assert [a["timer"] for a in f["armed"]] == [0, 1, 2], f["armed"]
    for x in f["fired"]:
        fired[(f["design"], x["timer"])] = (f["tick"], x["late"])
# reference §8.1/§8.2: 36 jiffies fires 1 late in the modern wheel, on time in the classic one.
assert fired == {("modern", 0): (37, 1), ("classic", 0): (36, 0)}, fired
' <<<"$out" || fail "JSON Lines are not what was asked for"

# Usage errors: exit 2, one error line and the hint.
hint="try 'timersim step --help'"
run step
expect_usage_error "--ticks" "$hint"
run step --ticks 0
expect_usage_error '--ticks' "$hint"
run step --ticks 3 --from -1
expect_usage_error '--from' "$hint"
run step --ticks 3 --design heap
expect_usage_error 'heap has no buckets' "$hint"
run step --ticks 3 --design wheel
expect_usage_error '--design' "$hint"
run step --ticks 3 --timeouts 5parsecs
expect_usage_error '--timeouts: .*unknown unit' "$hint"
run step --ticks 3 --timeouts 36,,300
expect_usage_error '--timeouts' "$hint"
run step --ticks 3 --timeouts 36 --connections 10
expect_usage_error '--timeouts cannot be combined with --connections' "$hint"
run step --ticks 3 --connections 0
expect_usage_error '--connections' "$hint"
run step --ticks 3 --format yaml
expect_usage_error '--format' "$hint"
run step --ticks 3 --hz 0
expect_usage_error '--hz' "$hint"
