# --trace-memory MIB bounds what a trace's events take in memory: a trace
# with more is not kept, and each replay reads its events again from the
# input as a stream (workloads/traces/replay/event_cursor.hpp). The output
# is byte-identical either way: a kernel capture through run and compare
# (several designs on threads, each reading its own pass) in every format,
# a trace.dat, an LTTng directory, kernel text and a timersim trace from a
# pipe, a filter and --costs-from-trace. --trace-memory 0 keeps no event.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
capture=$data/kernel/capture-6.1-hz250-softirq.trace.xz

same_streamed() {
  run "$@"
  expect_status 0
  local kept=$out
  [[ -n $kept ]] || fail "no output: $*"
  run "$@" --trace-memory 0
  expect_status 0
  [[ $out == "$kept" ]] || fail "output differs with --trace-memory 0: $*"
}

same_streamed run --ftrace "$capture" --design modern
same_streamed compare --ftrace "$capture" --format json --jobs 3
same_streamed compare --ftrace "$capture" --format csv --costs-from-trace
same_streamed compare --ftrace "$capture" --cpu 1 --events /dev/stdout
same_streamed run --ftrace "$data/kernel/capture-6.1-hz250-softirq.trace.dat" --design modern
same_streamed compare --ftrace "$data/lttng/lttng-3.6-scp"
same_streamed compare --trace "$data/inputs/retransmit.trace.zst" --jobs 2
same_streamed run --ftrace "$capture" --design classic --duration 10 --format json

# A limit the trace goes past part way through its load: the events kept
# so far are let go there. The synthetic trace's events take more than
# 1 MiB (32 bytes each), its first 32K fit.
bench=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../../bench" && pwd)
python3 "$bench/synth-kernel-trace" --lines 100000 --seed 5 >mid.trace 2>/dev/null || fail "synth-kernel-trace failed"
run compare --ftrace mid.trace --format json
expect_status 0
kept=$out
python3 -c 'import json, sys; assert json.load(sys.stdin)["workload"]["params"]["events"] * 32 > 1 << 20' <<<"$kept" ||
  fail "the synthetic trace's events fit in 1 MiB: the test would not cross the limit"
run compare --ftrace mid.trace --format json --trace-memory 1
expect_status 0
[[ $out == "$kept" ]] || fail "output differs with --trace-memory 1, past the limit part way through the load"

# From a pipe: kernel text and a timersim trace are copied as read, and the
# replays read the copy.
for kind in ftrace trace; do
  case $kind in
    ftrace) src=$data/kernel/capture-6.1-hz250.trace.xz ;;
    trace) src=$data/inputs/retransmit.trace.zst ;;
  esac
  kept=$("$timersim" compare --"$kind" - <"$src") || fail "compare --$kind - failed"
  streamed=$("$timersim" compare --"$kind" - --trace-memory 0 <"$src") || fail "compare --$kind - --trace-memory 0 failed"
  [[ -n $kept && $streamed == "$kept" ]] || fail "a pipe's replay differs with --trace-memory 0 (--$kind)"
done

run run --trace-memory 1
expect_usage_error '^timersim: --trace-memory: only with --trace or --ftrace$' "try 'timersim run --help'"
run run --ftrace "$capture" --trace-memory 2000000000
expect_usage_error '^timersim: --trace-memory: MiB 0\.\.1073741824, got 2000000000$' "try 'timersim run --help'"
