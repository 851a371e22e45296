# timersim step --trace: a timersim trace drives the wheels. HZ and the start
# come from the header, events land at the jiffy their time falls in (after
# that jiffy's tick), labels name the timers, deferrable timers go to the
# modern deferrable base, cancels are shown, and bad input is exit 2 with the
# reader's one-line error.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../data/step" && pwd)
trace=$data/timers.trace

# frame N: the lines of tick N's frame (up to the next frame title).
frame() { awk -v t="=== tick $1: " 'index($0, t) == 1 { on = 1; print; next } /^=== tick / { on = 0 } on' <<<"$out"; }
# expect_in_frame N REGEX: some line of tick N's frame matches.
# (The frame is captured first: grep -q closing the pipe early would make awk
# fail with SIGPIPE under pipefail.)
expect_in_frame() {
  local lines
  lines=$(frame "$1")
  grep -Eq -- "$2" <<<"$lines" || fail "tick $1 has no line matching /$2/"
}

run step --trace "$trace" --ticks 50
expect_status 0
expect_empty_stderr
awk 'length($0) > 80 { exit 1 }' <<<"$out" || fail "a line is wider than 80 columns"
# The header's HZ and the default start (INITIAL_JIFFIES at HZ=1000).
intro=$(sed -n '1,/^Each cell/p' <<<"$out" | tr '\n' ' ')
[[ $intro == *"; HZ=1000 (a tick is 1 ms), tick 0 is jiffies 4294667296; showing ticks 1..50. "* ]] ||
  fail "the intro does not give the trace's HZ and start"

# Events at time 0 are armed before tick 1, with their labels as names.
expect_in_frame 0 '^  armed #0 \(short_timer\) for tick 36: tv1\[68\], due at tick 36$'
expect_in_frame 0 '^  armed #0 \(short_timer\) for tick 36: L0\[5\], due at tick 37$'
expect_in_frame 0 '^  armed #1 \(rto\) for tick 1000: tv2\[48\], due at tick 1002 \(slack \+2\)$'
# 36 jiffies: classic on time at tick 36, modern one jiffy late at tick 37
# (reference §8.1/§8.2), and neither a tick earlier.
expect_in_frame 36 '^  fired #0 \(short_timer\): asked for tick 36, exactly on time$'
expect_in_frame 37 '^  fired #0 \(short_timer\): asked for tick 36, 1 jiffy \(1 ms\) late$'
[[ $(grep -c '^  fired #0 ' <<<"$out") -eq 2 ]] || fail "short_timer should fire once in each wheel"
# 5500us is in jiffy 5 (tick 5 is at 5 ms): armed in tick 5's frame, for 5 + 10.
# A timer without label= is named by its key; cpu= is ignored.
expect_in_frame 5 '^  armed #2 \(17\) for tick 15: tv1\[47\], due at tick 15$'
expect_in_frame 5 '^  armed #2 \(17\) for tick 15: L0\[48\], due at tick 16$'
expect_in_frame 15 '^  fired #2 \(17\): asked for tick 15, exactly on time$'
# flags=deferrable: the modern deferrable base, drawn from then on.
expect_in_frame 5 '^  armed #3 \(lazy\) for tick 105: def L1\[18\], due at tick 112$'
expect_in_frame 5 '^  deferrable base: clk 4294667301, next_expiry 4294667408 \(in 107\), 1 pending$'
[[ $(frame 4) != *"deferrable base"* ]] || fail "the deferrable base is drawn before any deferrable timer"
# Cancels, in file order: one of a timer that already fired, one that removes.
expect_in_frame 50 '^  cancelled #2 \(17\): not pending, nothing to do$'
expect_in_frame 50 '^  cancelled #3 \(lazy\): removed from tv1\[137\] \(due at tick 105\)$'
expect_in_frame 50 '^  cancelled #3 \(lazy\): removed from def L1\[18\] \(due at tick 112\)$'
first=$out
run step --trace "$trace" --ticks 50 --hz 1000
[[ $out == "$first" ]] || fail "--hz equal to the trace's changes the output"

# The classic wheel cascades the 1 s timer at tick 992 (the same as
# `timersim step --timeouts 1s --hz 1000`); --from runs the trace silently.
run step --trace "$trace" --from 991 --ticks 1 --design classic
expect_status 0
expect_in_frame 992 '^  cascaded #1 \(rto\): tv2\[48\] -> tv1\[10\]$'
run step --trace "$trace" --from 1055 --ticks 1 --design modern
expect_in_frame 1056 '^  fired #1 \(rto\): asked for tick 1000, 56 jiffies \(56 ms\) late$'

# JSON Lines carry the cancels and the deferrable base.
run step --trace "$trace" --ticks 50 --format json --design modern
expect_status 0
python3 -c '
import json, sys
frames = [json.loads(l) for l in sys.stdin.read().splitlines()]
assert len(frames) == 51, len(frames)
f = frames[50]
assert [c["timer"] for c in f["cancelled"]] == [2, 3], f["cancelled"]
assert f["cancelled"][0]["pending"] is False
assert f["cancelled"][1]["pending"] is True and f["cancelled"][1]["level"] == 1, f["cancelled"]
assert "deferrable_base" not in frames[4] and frames[5]["deferrable_base"]["pending"] == 1
assert frames[50]["deferrable_base"]["pending"] == 0
' <<<"$out" || fail "JSON Lines are not what was asked for"

# Bad input: the reader's one line "FILE:LINE: what (field)", exit 2, no hint.
run step --trace "$data/bad-expiry.trace" --ticks 3
expect_status 2
[[ $err == "timersim: $data/bad-expiry.trace:3: bad timeout '5parsecs': expected an integer with unit j, ns, us, ms or s (in)" ]] ||
  fail "not the reader's one-line error"
printf '# timersim-trace v2 hz=1000\n' >v2.trace
run step --trace v2.trace --ticks 3
expect_status 2
[[ $err =~ ^timersim:\ v2\.trace:1:\ .*\(header\)$ ]] || fail "a bad header is not reported as the reader's error"

hint="try 'timersim step --help'"
run step --trace "$trace" --ticks 3 --hz 250
expect_usage_error '--hz 250 differs from the trace.s hz=1000' "$hint"
run step --trace no-such.trace --ticks 3
expect_file_error '^timersim: no-such\.trace: No such file or directory$'
run step --trace "$trace" --timeouts 36 --ticks 3
expect_usage_error '--trace cannot be combined with --timeouts' "$hint"
run step --trace "$trace" --connections 5 --ticks 3
expect_usage_error '--trace cannot be combined with --connections' "$hint"

# --ftrace: a kernel trace drives the wheels as its import does. HZ and the
# start come from the trace (no --hz needed); each frame is the frame of the
# same ticks stepped through `timersim import`'s output.
capture=$data/../kernel/capture-6.1-hz250.trace.xz
run import "$capture" -o imported.trace
expect_status 0
frames() { sed -n '/^Each cell/,$p' <<<"$out"; }
for design in both cog; do
  run step --trace imported.trace --ticks 40 --from 700 --design "$design"
  expect_status 0
  imported=$(frames)
  run step --ftrace "$capture" --ticks 40 --from 700 --design "$design"
  expect_status 0
  expect_empty_stderr
  intro=$(sed -n '1,/^Each cell/p' <<<"$out" | tr '\n' ' ')
  [[ $intro == *"; HZ=250 (a tick is 4 ms), tick 0 is jiffies 4294892296; showing ticks 701..740."* ]] ||
    fail "the intro does not give the kernel trace's HZ and start"
  [[ $(frames) == "$imported" ]] || fail "step --ftrace ($design) differs from stepping the imported trace"
  grep -q 'deferrable base' <<<"$out" || [[ $design == cog ]] || fail "no deferrable base drawn"
done
run step --ftrace "$capture" --trace "$trace" --ticks 3
expect_usage_error '--trace and --ftrace: give one or the other' "$hint"
run step --ftrace "$capture" --ticks 3 --hz 1000
expect_status 2
[[ $err == "timersim: "*"1000"* ]] || fail "a --hz the kernel trace's jiffies contradict is not refused"
