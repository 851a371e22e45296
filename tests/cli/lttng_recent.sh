# An LTTng trace of a recent kernel: tests/data/lttng/lttng-6.12-from-ftrace
# is the real 6.12 2-CPU capture tests/data/kernel/capture-6.12-hz250.trace.xz
# as lttng-modules records it (scripts/ftrace-to-lttng; its README). Every
# command that takes a kernel trace takes it: the kernel from its environment
# (6.12: modern-6.9), HZ from its jiffies (250), the workload marker from
# its lttng_logger events. lttng-modules has no probe for the tmigr_* (nor
# timer_base_idle) events, so the trace lacks them: its figures are those of
# the capture with its tmigr_* lines taken out, event for event. Its 46
# remote expiries, which tmigr_handle_remote_cpu lines show in the capture,
# are inferred from the expiries of another CPU's global timers, and the
# figures are then the whole capture's. Last, a damaged trace
# libbabeltrace2 aborts on.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
ctf=$data/lttng/lttng-6.12-from-ftrace
capture=$data/kernel/capture-6.12-hz250.trace.xz
# The capture as LTTng sees it: without the timer_migration events.
xz -dc "$capture" | grep -v ' tmigr_' >no-tmigr.trace

# first_line REGEX: the first stdout line matching REGEX.
first_line() { grep -E -m1 -- "$1" <<<"$out" || fail "no stdout line matches /$1/"; }

# validate: the kernel from the environment, HZ from the jiffies, the
# workload's start from the lttng_logger marker; the checks agree as on the
# capture without tmigr_* lines.
run validate no-tmigr.trace
expect_status 0
want_idx=$(first_line '^idx \(timer_start\):')
want_expiry=$(first_line '^expiry \(timer_expire_entry\):')
want_agreement=$(first_line '^agreement:')
run validate "$ctf"
expect_status 0
expect_stdout_line "^$ctf: 4742 timer events, 371 timers, 2 CPUs, hz=250 \(from the trace's jiffies\), kernel 6\.12; workload starts at line [0-9]+ \(before it: boot"
expect_stdout_line '^a 6\.9 or later kernel: replayed with three bases per CPU'
# The capture's 46 remote expiries (its other 50 tmigr_handle_remote_cpu
# lines expired nothing), inferred.
expect_stdout_line "^remote expiries inferred: the trace has no timer_migration events; 46 expiries of another CPU's global timers taken as 46 remote runs$"
[[ $(first_line '^idx \(timer_start\):') == "$want_idx" ]] || fail "idx checks differ from the capture's without tmigr: $want_idx"
[[ $(first_line '^expiry \(timer_expire_entry\):') == "$want_expiry" ]] || fail "expiry checks differ from the capture's without tmigr: $want_expiry"
[[ $(first_line '^agreement:') == "$want_agreement" ]] || fail "not the agreement of the capture without tmigr: $want_agreement"
# The inferred remote expiries check as the capture's tmigr lines have them.
expect_stdout_line '^agreement: idx 1313/1313, expiry 592/592$'
run validate "$capture"
expect_status 0
expect_stdout_line '^agreement: idx 1313/1313, expiry 592/592$'
! grep -q '^remote expiries inferred' <<<"$out" || fail "inferred though the capture has tmigr lines"

# run --ftrace: the kernel's own design at the trace's HZ; the replay
# reproduces what it reproduces on the capture without tmigr lines.
run run --ftrace no-tmigr.trace
expect_status 0
want_replay=$(first_line '^replay of ')
run run --ftrace "$ctf"
expect_status 0
expect_stdout_line '^timersim run: modern-6\.9 design, HZ=250, 4086 ticks'
expect_stdout_line "^workload: kernel ftrace $ctf \(1734 events, HZ=250 from the trace's jiffies, 2 CPUs\)$"
expect_stdout_line "^kernel 6\.12 from the trace's '# kernel:' line$"
[[ $(first_line '^replay of ') == "$want_replay" ]] || fail "not the replay of the capture without tmigr: $want_replay"
expect_stdout_line '^replay of modern-6\.9 reproduces 592 of 592 fires the kernel recorded on the same jiffy and CPU'
expect_stdout_line "^remote expiries inferred: the trace has no timer_migration events; 46 fires of another CPU's global timers taken as 46 remote runs$"
# The whole capture: its remote expiries followed, 592 of 592 as well.
run run --ftrace "$capture"
expect_status 0
expect_stdout_line '^replay of modern-6\.9 reproduces 592 of 592 fires'
! grep -q '^remote expiries inferred' <<<"$out" || fail "inferred though the capture has tmigr lines"

# compare --ftrace: every design's figures those of the capture without tmigr.
run compare --ftrace no-tmigr.trace --format csv
expect_status 0
want=$out
run compare --ftrace "$ctf" --format csv
expect_status 0
[[ $out == "$want" ]] || fail "compare differs from the capture's without tmigr"
expect_stdout_line '^modern-6\.9,fired,593$'
run compare --ftrace "$capture" --format csv
expect_status 0
[[ $out == "$want" ]] || fail "compare differs from the whole capture's"

# import: the same events as the capture's (1083 arms), but for the labels:
# LTTng records callback addresses, not names; each name is one address.
run import "$capture" -o capture.trace
expect_status 0
run import "$ctf" -o ctf.trace
expect_status 0
expect_stdout_line '^  arm 1083, modify 230 \(229 cancel\+start pairs\), cancel 421; 592 expiries'
expect_stdout_line '^  skipped 8356 other events: softirq_entry 4177, softirq_exit 4177, tracing_mark_write 2$'
unlabelled() { sed 2d "$1" | sed -E 's/ label=[^ ]+//'; }
cmp -s <(unlabelled capture.trace) <(unlabelled ctf.trace) || fail "the imports differ in more than their labels"
labels() { grep -o ' label=[^ ]*' "$1" | cut -d= -f2; }
pairs=$(paste -d' ' <(labels capture.trace) <(labels ctf.trace) | sort -u)
[[ $(cut -d' ' -f1 <<<"$pairs" | sort -u | wc -l) -eq $(wc -l <<<"$pairs") &&
   $(cut -d' ' -f2 <<<"$pairs" | sort -u | wc -l) -eq $(wc -l <<<"$pairs") ]] ||
  fail "names and addresses are not one to one: $pairs"

# step --ftrace: the same ticks as the capture's, but for the labels.
run step --ftrace "$capture" --ticks 300
expect_status 0
want=$(sed -E '1,/showing ticks/d; s/ \([^)]*\)//g' <<<"$out")
run step --ftrace "$ctf" --ticks 300
expect_status 0
[[ $(sed -E '1,/showing ticks/d; s/ \([^)]*\)//g' <<<"$out") == "$want" ]] || fail "step differs from the capture's"
expect_stdout_line 'armed #0 \(0xffffffff8100\.\.\) for tick 250'

# A damaged trace libbabeltrace2 aborts on (an assertion of 2.0.4, found by
# fuzzing): its child's death is the trace's error, one line, nothing written.
# A copy by a relative name, so that the error's name is plain.
cp -r "$data/lttng/bad-libbabeltrace2-aborts" aborts
for cmd in "import -o never.trace" "run --ftrace" "validate"; do
  # shellcheck disable=SC2086
  run $cmd aborts
  expect_file_error "^timersim: aborts: an LTTng trace \(CTF\) that cannot be read: libbabeltrace2 failed on it \(Aborted\): truncated or corrupt$"
  [[ ! -e never.trace ]] || fail "an output was left behind"
done
