# A workload too big for the machine's memory is refused up front, from its
# parameters, with the estimate and the memory available (exit 2, one
# line), instead of dying of std::bad_alloc a minute in; compare runs fewer
# designs at once when that makes them fit (issue #17 item 7). The memory
# available is read from the file $TIMERSIM_MEMINFO names (in
# /proc/meminfo's format), so the test does not depend on this machine.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

meminfo() { printf 'MemTotal:        %s kB\nMemFree:         %s kB\nMemAvailable:    %s kB\n' "$1" "$1" "$1" >meminfo; }

expect_refusal() {
  expect_status 2
  expect_empty_stdout
  [[ $err != *$'\n'* ]] || fail "expected one line on stderr"
  [[ $err =~ $1 ]] || fail "error line does not match /$1/"
}

# 100 MiB available: a million TCP connections (about 200 MiB per design)
# do not fit.
meminfo 102400
export TIMERSIM_MEMINFO=$PWD/meminfo
run compare --workload tcp-retransmit --connections 1000000 --duration 1
expect_refusal "^timersim: --connections: 'tcp-retransmit' with 1000000 connections needs about [0-9]+ MiB per design, more than the 100 MiB of memory available \\(MemAvailable\\)$"
run run --workload tcp-retransmit --connections 1000000 --duration 1
expect_refusal '^timersim: --connections: .* needs about [0-9]+ MiB per design, more than the 100 MiB'
run gen --workload tcp-retransmit --connections 1000000 --duration 1 -o t.trace
expect_refusal '^timersim: --connections: .* needs about [0-9]+ MiB per design, more than the 100 MiB'
[[ ! -e t.trace ]] || fail "gen wrote a trace"
run compare --workload burst --burst-size 5000000 --duration 1
expect_refusal '^timersim: --burst-size: a burst of 5000000 timers needs about [0-9.]+ [MG]iB per design'

# 100,000 connections (about 20 MiB per design) in 60 MiB fit two at a
# time: compare runs them, with the same report as one at a time.
meminfo 61440
run compare --workload tcp-retransmit --connections 100000 --duration 1 --jobs 3 --format csv
expect_status 0
expect_empty_stderr
fitted=$out
unset TIMERSIM_MEMINFO
run compare --workload tcp-retransmit --connections 100000 --duration 1 --jobs 1 --format csv
expect_status 0
[[ $out == "$fitted" ]] || fail "the report differs from a run of one design at a time"
