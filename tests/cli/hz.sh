# HZ of a kernel trace is never assumed (#13): every command that reads one
# (run, compare and gen with --ftrace, import, validate) takes --hz, else the
# trace's '# hz=' line, else what its jiffies show, and refuses a --hz the
# jiffies contradict unless --force-hz. The committed capture is HZ=250;
# without its '# hz=250' line it is what /sys/kernel/tracing/trace prints.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/kernel" && pwd)
dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT
xz -dc -- "$data/capture-6.1-hz250.trace.xz" | grep -v '^# hz=' >"$dir/raw.txt"

# Found from the jiffies, and said so.
run run --ftrace "$dir/raw.txt" --duration 5
expect_status 0
expect_stdout_line "HZ=250 from the trace's jiffies"
run compare --ftrace "$dir/raw.txt" --duration 5 --format json
expect_status 0
grep -q '"hz_source": "the trace'"'"'s jiffies"' <<<"$out" || fail "compare JSON lacks hz_source"
run validate "$dir/raw.txt" --format json
expect_status 0
grep -q '"hz_source": "the trace'"'"'s jiffies"' <<<"$out" || fail "validate JSON lacks hz_source"
run import "$dir/raw.txt" -o "$dir/raw.trace"
expect_status 0
head -n 1 "$dir/raw.trace" | grep -q ' hz=250' || fail "import did not find HZ=250"

# A --hz the jiffies contradict: refused by every command, one line.
for command in "run --ftrace $dir/raw.txt --duration 5" "compare --ftrace $dir/raw.txt --duration 5" \
               "gen --ftrace $dir/raw.txt --duration 5 -o $dir/g.trace" "import $dir/raw.txt -o $dir/i.trace" \
               "validate $dir/raw.txt"; do
  # shellcheck disable=SC2086
  run $command --hz 1000
  expect_status 2
  [[ $(wc -l <<<"$err") == 1 ]] || fail "$command: more than one line: $err"
  [[ $err == *"--hz says HZ=1000, but the trace's jiffies say HZ=250"*"--force-hz"*"(hz)" ]] ||
    fail "$command --hz 1000: wrong error: $err"
done
[[ ! -e $dir/g.trace && ! -e $dir/i.trace ]] || fail "an output was left behind"

# A '# hz=' line that contradicts --hz is refused with the way out.
{ echo '# hz=250'; cat "$dir/raw.txt"; } >"$dir/header.txt"
run run --ftrace "$dir/header.txt" --duration 5 --hz 1000
expect_status 2
[[ $err == *"'# hz=250' contradicts --hz 1000; pass --force-hz"*"(hz)" ]] || fail "wrong error: $err"
# --force-hz replays at --hz anyway, against the jiffies (raw.txt) and
# against a '# hz=' line (header.txt) alike, in run and validate.
for input in raw header; do
  run run --ftrace "$dir/$input.txt" --duration 5 --hz 1000 --force-hz
  expect_status 0
  expect_stdout_line 'HZ=1000 from --hz \(forced\)'
  run validate "$dir/$input.txt" --hz 1000 --force-hz --min 0
  expect_status 0
  expect_stdout_line 'hz=1000 \(from --hz \(forced\)\)'
done
run run --ftrace "$dir/raw.txt" --force-hz
expect_status 2
[[ $err == *"--force-hz: give the HZ to force with --hz"* ]] || fail "wrong error: $err"

# Too little trace to tell: refused with the candidates, never guessed.
grep -m 12 'timer_start:' "$dir/raw.txt" | tail -n 3 >"$dir/brief.txt"
run run --ftrace "$dir/brief.txt" --duration 1
expect_status 2
[[ $err == *"HZ unknown: the trace has no '# hz=' line and "*"pass --hz (hz)" ]] || fail "wrong error: $err"
run run --ftrace "$dir/brief.txt" --duration 1 --hz 300
expect_status 0
