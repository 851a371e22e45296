# timersim import: converts the ftrace fixtures (both renderings) to the
# expected trace v1, writes atomically, and reports bad input as exactly one
# line "timersim: FILE:LINE: what is wrong (field)" with no output left.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
expected=$data/ftrace/habits.expected.trace
dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

# the trace v1 an import wrote, without its "# imported from" comment line
body() { grep -v '^# imported from ' "$1"; }

# /sys/kernel/tracing/trace with a '# hz=250' line: no --hz needed.
run import "$data/ftrace/habits-ftrace.txt" -o "$dir/a.trace"
expect_status 0
expect_empty_stderr
expect_stdout_line '^.*/a\.trace: 13 events for 5 timers \(hz=250 start_jiffies=4294967200\) from 24 timer lines of '
expect_stdout_line '^  arm 7, modify 1 \(1 cancel\+start pairs\), cancel 4; 3 expiries'
expect_stdout_line '; 1 inside callbacks \(cb=\)$'
expect_stdout_line '^  skipped 2 other events: irq_handler_entry 1, sched_switch 1$'
[[ $(body "$dir/a.trace") == "$(<"$expected")" ]] || fail "a.trace differs from $expected"
sed -n 2p "$dir/a.trace" | grep -q '^# imported from .*habits-ftrace.txt by timersim import$' ||
  fail "no '# imported from' comment on line 2"

# trace-cmd report (plain and -l), with --hz.
for rendering in trace-cmd trace-cmd-l; do
  run import --hz 250 "$data/ftrace/habits-$rendering.txt" -o "$dir/$rendering.trace"
  expect_status 0
  [[ $(body "$dir/$rendering.trace") == "$(<"$expected")" ]] || fail "$rendering.trace differs from $expected"
done
[[ $(LC_ALL=C ls -A "$dir") == $'a.trace\ntrace-cmd-l.trace\ntrace-cmd.trace' ]] || fail "unexpected files: $(ls -A "$dir")"

# Bad input: one stderr line naming file, line and field; no output file.
bad=$data/bad-ftrace/bad-flags.txt
run import "$bad" -o "$dir/bad.trace"
expect_status 2
expect_empty_stdout
[[ $err == "timersim: $bad:3: bad flags 'D,P': expected M, D, P, I joined by '|', or 0x... (flags)" ]] ||
  fail "wrong error line"
[[ ! -e $dir/bad.trace ]] || fail "an output was left behind"

# An error after events were written removes the partial output too.
{ cat "$data/ftrace/habits-trace-cmd.txt"; echo "this is not a trace"; } >"$dir/late.txt"
run import "$dir/late.txt" -o "$dir/late.trace" --hz 250
expect_status 2
[[ $err == "timersim: $dir/late.txt:29: not an event line: expected 'TASK-PID [CPU] TIMESTAMP: EVENT: ...', got 'this is not a trace' (line)" ]] ||
  fail "wrong error line"
[[ $(ls -A "$dir" | grep -c late) == 1 ]] || fail "a partial or temporary output was left: $(ls -A "$dir")"

# HZ: never assumed. Without --hz or a '# hz=' line it is what the trace's
# jiffies show (habits-trace-cmd.txt has no hz line; its jiffies fit 250 only);
# a trace whose jiffies cannot tell is refused; it must agree with the file's
# '# hz=' line and the jiffies.
run import "$data/ftrace/habits-trace-cmd.txt" -o "$dir/x.trace"
expect_status 0
head -n 1 "$dir/x.trace" | grep -q ' hz=250' || fail "HZ not taken from the trace's jiffies: $(head -n 1 "$dir/x.trace")"
rm -f -- "$dir/x.trace"
printf '%s\n' '          <idle>-0       [000] d.s1.     1.000000: timer_start: timer=00000000000000aa function=f expires=4294900010 [timeout=10] cpu=0 idx=43 flags=' >"$dir/one.txt"
run import "$dir/one.txt" -o "$dir/x.trace"
expect_status 2
[[ $err == "timersim: $dir/one.txt:1: HZ unknown: the trace has no '# hz=' line and 1 timer event with jiffies: too few to tell HZ; pass --hz (hz)" ]] ||
  fail "wrong error line"
[[ ! -e $dir/x.trace ]] || fail "an output was left behind"
run import "$dir/one.txt" -o "$dir/x.trace" --hz 1000
expect_status 0
rm -f -- "$dir/x.trace"
run import "$data/ftrace/habits-ftrace.txt" -o "$dir/x.trace" --hz 1000
expect_status 2
[[ $err == "timersim: $data/ftrace/habits-ftrace.txt:1: '# hz=250' contradicts --hz 1000; pass --force-hz to replay at --hz anyway (hz)" ]] || fail "wrong error line"
[[ ! -e $dir/x.trace ]] || fail "an output was left behind"

# Command-line mistakes are usage errors with the hint.
run import "$dir/missing.txt" -o "$dir/x.trace"
expect_file_error "^timersim: $dir/missing\.txt: No such file or directory\$"
[[ ! -e $dir/x.trace ]] || fail "an output was left behind"
run import "$data/ftrace/habits-ftrace.txt"
expect_usage_error "output" "try 'timersim import --help'"
run import -o "$dir/x.trace"
expect_usage_error "^timersim: the input FILE is missing \\(- reads standard input\\); usage: timersim import FILE" \
  "try 'timersim import --help'"
[[ $err != *"--input"* ]] || fail "the error names the parser's --input: $err"
run import "$data/ftrace/habits-ftrace.txt" -o "$dir/x.trace" --hz 0
expect_usage_error '--hz' "try 'timersim import --help'"

# An output that cannot be created: exit 2, one line naming the file.
run import "$data/ftrace/habits-ftrace.txt" -o "$dir/no/such/dir/x.trace"
expect_file_error "^timersim: $dir/no/such/dir/x\.trace: cannot create file \(No such file or directory\)\$"

run import --help
expect_status 0
expect_stdout_line '^Usage: timersim import FILE -o OUT \[--hz H\]$'
