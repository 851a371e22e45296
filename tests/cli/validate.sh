# timersim validate: the committed real 6.1 capture (read through xz -dc)
# agrees 100% on both checks; a doctored copy with one idx changed is exactly
# one disagreement, passes --min 99.9 (json) and fails the default --min 100
# (text, on the small excerpt to keep this test quick); usage errors.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/kernel" && pwd)
capture=$data/capture-6.1-hz250.trace.xz
dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

run validate "$capture"
expect_status 0
expect_empty_stderr
expect_stdout_line '^idx \(timer_start\): +2273 events: +2273 agree, 0 disagree, 0 unknown history \(100\.000%'
expect_stdout_line '^expiry \(timer_expire_entry\): +1118 events: +1118 agree, 0 disagree, 0 unknown history \(100\.000%'
expect_stdout_line '^disagreements: 0$'
[[ $(tail -n 1 <<<"$out") == 'agreement: idx 2273/2273, expiry 1118/1118' ]] || fail "wrong last line"

# Every committed capture of the kernel's own trace text (and the trace.dat)
# validates with no disagreement left: the nohz=off one has a run that
# jiffies overtook, the hrtimer one an idx disagreement a later line proves
# to be lost history.
for f in "$data"/capture-6.1-hz250*.trace.xz "$data/capture-6.1-hz250-softirq.trace.dat"; do
  run validate "$f"
  expect_status 0
  expect_stdout_line '^disagreements: 0$'
done
run validate "$data/capture-6.1-hz250-hrtimer.trace.xz"
expect_stdout_line '^ +2 +start of a pending timer without its timer_cancel \(proven later\)$'
# trace-cmd report's own rendering misprints every flags= as D|P|I
# (libtraceevent 1.7): validate warns that deferrable timers are unknown.
run validate "$data/capture-6.1-hz250-softirq.trace-cmd.txt.xz"
expect_stdout_line '^warning: every timer_start has flags D\|P\|I, as libtraceevent 1\.7'
run validate "$data/capture-6.1-hz250-softirq.trace.xz"
! grep -q '^warning: every timer_start' <<<"$out" || fail "the kernel's own text said to be misprinted"
# A 6.9+ kernel's trace: validate says so and replays it with three bases
# per CPU and the remote expiry of idle CPUs' global timers: every event
# agrees, the expiries another CPU ran for an idle one included.
run validate "$data/capture-6.12-hz250.trace.xz"
expect_status 0
expect_stdout_line ', kernel 6\.12; workload starts'
expect_stdout_line '^a 6\.9 or later kernel: replayed with three bases'
expect_stdout_line '^disagreements: 0$'
expect_stdout_line '^agreement: idx 1313/1313, expiry 592/592$'
# The other 6.9+ captures: 6.12 on 1 and 16 CPUs, 7.3 on 2. Every check
# agrees; on 16 CPUs an early-boot hole (a clocksource_watchdog re-arm
# lost before line 771) resynchronises CPU 0, and those checks agree too.
while IFS='|' read -r name version want; do
  run validate "$data/$name.trace.xz"
  expect_status 0
  expect_stdout_line ", kernel ${version//./\\.}; workload starts"
  expect_stdout_line '^a 6\.9 or later kernel: replayed with three bases'
  expect_stdout_line '^disagreements: 0$'
  [[ $(tail -n 1 <<<"$out") == "agreement: $want" ]] || fail "$name: $(tail -n 1 <<<"$out")"
done <<'EOF'
capture-6.12-hz250-1cpu|6.12|idx 1107/1107, expiry 471/471
capture-6.12-hz250-16cpu|6.12|idx 1408/1408, expiry 781/781; resynchronised: idx 377/377, expiry 347/347
capture-7.3-hz250|7.3|idx 1609/1609, expiry 876/876
EOF
# With one possible CPU 6.9+ builds no migration hierarchy (tmigr_init()
# returns early): the 1-CPU capture has no tmigr_* event, so without its
# header it shows only 6.8 or later, and validate asks for --kernel.
xz -dc -- "$data/capture-6.12-hz250-1cpu.trace.xz" | grep -v '^# kernel:' >"$dir/1cpu-no-kernel.trace"
! grep -v '^#' "$dir/1cpu-no-kernel.trace" | grep -q 'tmigr_' || fail "the 1-CPU capture has tmigr_* events"
run validate "$dir/1cpu-no-kernel.trace"
expect_status 2
grep -Eq 'validate needs the timer design .*6\.8 or later.*pass --kernel VERSION \(kernel\)$' <<<"$err" ||
  fail "the headerless 1-CPU capture is not refused naming --kernel: $err"
run validate "$dir/1cpu-no-kernel.trace" --kernel 6.12
expect_status 0
[[ $(tail -n 1 <<<"$out") == 'agreement: idx 1107/1107, expiry 471/471' ]] || fail "1 CPU with --kernel 6.12: $(tail -n 1 <<<"$out")"
# The remote expiries are checked, not skipped: with the
# tmigr_handle_remote_cpu lines gone, they are pending on another CPU.
xz -dc -- "$data/capture-6.12-hz250.trace.xz" | grep -v 'tmigr_handle_remote_cpu:' >"$dir/no-remote.trace"
run validate "$dir/no-remote.trace"
expect_status 1
expect_stdout_line '^ +[0-9]+ +pending on another CPU in our model$'
expect_stdout_line 'ours pending on CPU [01] global base in bucket'
run validate "$data/capture-6.1-hz250-hrtimer.trace.xz" --format json
python3 -c 'import json,sys; d = json.load(sys.stdin); assert d["kernel_6_9"] is False and d["kernel"] == "6.1", d["kernel"]' <<<"$out" || fail "a 6.1 trace said 6.9+"
# The kernel's version decides the bases: never guessed. Without its
# header and its tmigr_* events the 6.12 capture shows only 6.8 or later
# (6.8 prints bucket_expiry= and runs one base): refused, naming --kernel.
xz -dc -- "$data/capture-6.12-hz250.trace.xz" | grep -v '^# kernel:' | grep -v 'tmigr_' >"$dir/no-version.trace"
run validate "$dir/no-version.trace"
expect_status 2
grep -Eq 'no-version\.trace:[0-9]+: validate needs the timer design .*6\.8 or later.*pass --kernel VERSION \(kernel\)$' <<<"$err" ||
  fail "an ambiguous version is not refused naming --kernel: $err"
run validate "$dir/no-version.trace" --kernel 6.12
expect_stdout_line ', kernel 6\.12 \(from --kernel\); workload starts'
expect_stdout_line '^a 6\.9 or later kernel: replayed with three bases'
# A header the events contradict is the trace's error at the header's line.
xz -dc -- "$data/capture-6.12-hz250.trace.xz" | sed 's/^# kernel: .*/# kernel: 6.1.0-57-cloud-amd64/' >"$dir/wrong-version.trace"
run validate "$dir/wrong-version.trace"
expect_status 2
grep -Eq "wrong-version\.trace:2: the trace's '# kernel:' line says 6\.1\.0-57-cloud-amd64, but .* so it is 6\.9 or later; pass --kernel to say which \(kernel\)$" <<<"$err" ||
  fail "a contradicted header is not the trace's error: $err"
run validate "$dir/wrong-version.trace" --kernel banana
expect_status 2
# A kernel before 4.8 ran the cascading wheel, and is checked on ours: the
# 6.1 capture said to be 4.4 has its expiries checked on the classic wheel
# (no idx), which fires exactly on each timer's jiffy where 6.1's fired some
# late: the wrong wheel is caught, exit 1.
xz -dc -- "$capture" | sed 's/^# kernel: .*/# kernel: 4.4.0-1-amd64/' >"$dir/old-kernel.trace"
run validate "$dir/old-kernel.trace" --kernel 4.4
expect_status 1
expect_stdout_line '^a kernel before 4\.8: replayed on the classic wheel \(tv1\.\.tv5, cascades; slots run newest first\)'
expect_stdout_line '^idx \(timer_start\): +2273 events: not checked'
expect_stdout_line '^ +[0-9]+  fired earlier by our model$'
grep -Eq '^agreement: idx 0/0, expiry [0-9]+/1118$' <<<"$out" || fail "not the classic wheel's expiries of the 6.1 capture"
! grep -q '^agreement: idx 0/0, expiry 1118/1118$' <<<"$out" || fail "the classic wheel agrees with 6.1's on every expiry"

# The capture uncompressed, with one idx changed (its 2000th timer_start):
# exactly one disagreement; json; a --min it meets.
xz -dc -- "$capture" >"$dir/capture.trace"
line=$(grep -n 'timer_start:' "$dir/capture.trace" | sed -n 2000p | cut -d: -f1)
[[ -n $line ]] || fail "no 2000th timer_start"
idx=$(sed -n "${line}p" "$dir/capture.trace" | sed -E 's/.* idx=([0-9]+) .*/\1/')
new=$(( idx % 64 == 63 ? idx - 1 : idx + 1 ))
sed -E "${line}s/ idx=[0-9]+ / idx=$new /" "$dir/capture.trace" >"$dir/doctored.trace"
run validate "$dir/doctored.trace" --format json --max-listed 1 --min 99.9
expect_status 0
expect_stdout_line '^  "idx": \{"events": 2273, "agree": 2272, "disagree": 1, '
expect_stdout_line '^  "expiry": \{"events": 1118, "agree": 1118, "disagree": 0, '
expect_stdout_line "^    \{\"line\": $line, .*\"check\": \"idx\", .*\"cause\": \"kernel base clock differs\""
expect_stdout_line '^  "passed": true,$'
expect_stdout_line '^  "agreement": "agreement: idx 2272/2273, expiry 1118/1118"$'

# The small excerpt with one idx changed (its 50th timer_start): below the
# default --min 100, exit 1, the disagreement listed with its cause.
small=$data/small-6.1-hz250.txt
line=$(grep -n 'timer_start:' "$small" | sed -n 50p | cut -d: -f1)
idx=$(sed -n "${line}p" "$small" | sed -E 's/.* idx=([0-9]+) .*/\1/')
new=$(( idx % 64 == 63 ? idx - 1 : idx + 1 ))
sed -E "${line}s/ idx=[0-9]+ / idx=$new /" "$small" >"$dir/small.txt"
run validate "$dir/small.txt"
expect_status 1
expect_stdout_line '^disagreements: 1$'
expect_stdout_line "^  line $line: timer=[0-9a-f]{16} [a-z_]+ idx: ours idx $idx \(.*; kernel idx $new \(.*\[kernel base clock differs\]$"
[[ $(tail -n 1 <<<"$out") == 'agreement: idx 72/73, expiry 40/40' ]] || fail "wrong last line"

# A disagreement after lost history, in a resynchronised stretch, counts
# too: lost events on CPU 0 right after the workload start (its later
# checks are resynchronised), then CPU 0's last timer_start with another
# idx. Exit 1 under the default --min 100, and the headline says so.
marker=$(grep -n 'timersim: workload start' "$small" | head -n 1 | cut -d: -f1)
sed "${marker}a\\CPU:0 [LOST 7 EVENTS]" "$small" >"$dir/lost.txt"
run validate "$dir/lost.txt"
expect_status 0
[[ $(tail -n 1 <<<"$out") == "agreement: idx "*"/"*"; resynchronised: idx "*"/"*", expiry "*"/"* ]] ||
  fail "the headline lacks the resynchronised checks: $(tail -n 1 <<<"$out")"
line=$(grep -n '\[000\].*timer_start:' "$dir/lost.txt" | tail -n 1 | cut -d: -f1)
idx=$(sed -n "${line}p" "$dir/lost.txt" | sed -E 's/.* idx=([0-9]+) .*/\1/')
new=$(( idx % 64 == 63 ? idx - 1 : idx + 1 ))
sed -E "${line}s/ idx=[0-9]+ / idx=$new /" "$dir/lost.txt" >"$dir/lost-doctored.txt"
run validate "$dir/lost-doctored.txt"
expect_status 1
read -r agree checked <<<"$(tail -n 1 <<<"$out" | sed -E 's/.*resynchronised: idx ([0-9]+)\/([0-9]+),.*/\1 \2/')"
((agree + 1 == checked)) || fail "not one resynchronised idx disagreement: $(tail -n 1 <<<"$out")"

# Usage errors.
run validate "$dir/missing.trace"
expect_file_error "^timersim: $dir/missing\.trace: No such file or directory\$"
# Without FILE: the usage line says what is missing, not the parser's --input.
run validate
expect_usage_error "^timersim: the input FILE is missing \\(- reads standard input\\); usage: timersim validate FILE" \
  "try 'timersim validate --help'"
[[ $err != *"--input"* ]] || fail "the error names the parser's --input: $err"
run validate "$capture" --min 101
expect_usage_error '--min' "try 'timersim validate --help'"
run validate "$capture" --format xml
expect_usage_error '--format' "try 'timersim validate --help'"
# xz is known by its magic bytes, not by the name: xz's magic, then junk.
printf '\3757zXZ\0not xz data\n' >"$dir/fake.xz"
run validate "$dir/fake.xz"
expect_file_error '^timersim: .*/fake\.xz:1: read error: xz: compressed data is corrupt \(line\)$'

# A trace without timer events validates nothing: exit 1.
printf '# hz=250\n' >"$dir/empty.txt"
run validate "$dir/empty.txt"
expect_status 1
expect_stdout_line '^no timer_\* events: nothing to validate$'

# Bad trace text: one line naming file and line, exit 2.
printf '# hz=250\nthis is not a trace\n' >"$dir/bad.txt"
run validate "$dir/bad.txt"
expect_status 2
expect_empty_stdout
[[ $err == "timersim: $dir/bad.txt:2: "* ]] || fail "wrong error line"

run validate --help
expect_status 0
expect_stdout_line '^Usage: timersim validate FILE'
