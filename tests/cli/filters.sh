# Trace filters (--cpu, --function, --from/--to): every trace-reading command
# keeps exactly the events they name. The counts expected here are computed
# from the input files by awk, independently of timersim's reader: a timer
# event is a line with timer_(init|start|cancel|expire_entry|expire_exit):,
# its CPU the [NNN] column, its time the timestamp before ':' minus the first
# event line's, its function the function= of the line or of its timer's
# last line that had one. An event dropped for several reasons counts under
# the first of time, cpu, function.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
capture=$data/kernel/capture-6.1-hz250.trace.xz
window=$data/costs/window.txt
dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT
xz -dc "$capture" >"$dir/capture.txt"

# count_ftrace FILE CPUS FUNCTION_REGEX FROM_US TO_US: "kept time cpu function"
# (CPUS: a space-separated list, "" for all; FROM_US/TO_US: -1 for none).
count_ftrace() {
  awk -v cpus="$2" -v fre="$3" -v from="$4" -v to="$5" '
    function us(t,  p) { split(t, p, "."); return p[1] * 1000000 + p[2] }
    BEGIN { n = split(cpus, c, " "); for (i = 1; i <= n; i++) want[c[i] + 0] = 1 }
    /^#/ { next }
    {
      ts = ""; cpu = -1
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^\[[0-9]+\]$/ && cpu < 0) cpu = substr($i, 2, length($i) - 2) + 0
        if ($i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1); ev = $(i + 1); break }
      }
      if (ts == "") next
      if (first == "") first = us(ts)
      if (ev !~ /^timer_(init|start|cancel|expire_entry|expire_exit):$/) next
      timer = ""; fn = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^timer=/) timer = substr($i, 7)
        if ($i ~ /^function=/) fn = substr($i, 10)
      }
      if (fn != "") last[timer] = fn; else if (timer in last) fn = last[timer]
      t = us(ts) - first
      if ((from >= 0 && t < from) || (to >= 0 && t >= to)) { dt++; next }
      if (n > 0 && !(cpu in want)) { dc++; next }
      if (fre != "" && (fn == "" || fn !~ fre)) { df++; next }
      kept++
    }
    END { printf "%d %d %d %d\n", kept, dt, dc, df }' "$1"
}

# The phrase the reports use for counts "kept time cpu function".
phrase() {
  local kept=$1 dt=$2 dc=$3 df=$4 parts=()
  ((dt)) && parts+=("$dt by --from/--to")
  ((dc)) && parts+=("$dc by --cpu")
  ((df)) && parts+=("$df by --function")
  local s="kept $kept of $((kept + dt + dc + df)) $5"
  if ((${#parts[@]})); then
    local joined
    joined=$(printf '%s, ' "${parts[@]}")
    s+="; dropped ${joined%, }"
  fi
  printf '%s' "$s"
}

total=$(count_ftrace "$dir/capture.txt" "" "" -1 -1)
[[ $total == "8340 0 0 0" ]] || fail "awk counted $total timer events in the capture, its README says 8340"

# import: each filter alone and all together, on the real capture.
check_import() { # EXPECTED_COUNTS ARGS...
  local counts=$1
  shift
  run import "$capture" -o "$dir/f.trace" "$@"
  expect_status 0
  read -r k a b c <<<"$counts"
  local want
  want=$(phrase "$k" "$a" "$b" "$c" "timer events")
  grep -qF -- ": $want" <<<"$out" || fail "import summary does not say '$want'"
}
check_import "$(count_ftrace "$dir/capture.txt" "1" "" -1 -1)" --cpu 1
check_import "$(count_ftrace "$dir/capture.txt" "0" "" -1 -1)" --cpu 0-0
check_import "$(count_ftrace "$dir/capture.txt" "" "^tcp_" -1 -1)" --function 'tcp_*'
check_import "$(count_ftrace "$dir/capture.txt" "" "_timer$" -1 -1)" --function '*_timer'
check_import "$(count_ftrace "$dir/capture.txt" "" "^[dp].*_t" -1 -1)" --function '[dp]*_t*'
check_import "$(count_ftrace "$dir/capture.txt" "" "" 5000000 20000000)" --from 5s --to 20s
check_import "$(count_ftrace "$dir/capture.txt" "" "" 1500000 -1)" --from 1500ms
check_import "$(count_ftrace "$dir/capture.txt" "1" "^tcp_" 5000000 20000000)" \
  --cpu 1 --function 'tcp_*' --from 5s --to 20s
# '*' keeps every event whose timer has a known function (not a timer_init
# or cancel of a timer never seen with one).
check_import "$(count_ftrace "$dir/capture.txt" "" "^" -1 -1)" --function '*'

# The absolute form: @SECONDS is the trace's own timestamp.
first_us=$(awk '!/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { split(substr($i, 1, length($i) - 1), p, "."); print p[1] * 1000000 + p[2]; exit } }' "$dir/capture.txt")
check_import "$(count_ftrace "$dir/capture.txt" "" "" $((10500000 - first_us)) $((12000000 - first_us)))" \
  --from @10.5 --to @12

# The import of a filtered capture holds only events inside the window.
run import "$capture" -o "$dir/w.trace" --from 5s --to 20s
expect_status 0
awk '!/^#/ && ($1 < 5000000000 || $1 >= 20000000000) { bad = 1 } END { exit bad }' "$dir/w.trace" ||
  fail "the filtered import has an event outside 5s..20s"

# validate (text and JSON), run and compare (JSON) and gen say the same counts.
read -r k a b c <<<"$(count_ftrace "$dir/capture.txt" "0" "^[tb][cl][pk]_" 2000000 -1)"
run validate "$capture" --cpu 0 --function '[tb][cl][pk]_*' --from 2s
[[ $status -le 1 ]] || fail "exit status $status"
grep -qF -- "$(phrase "$k" "$a" "$b" "$c" "timer events")" <<<"$out" || fail "validate does not count the filter"
run validate "$capture" --cpu 0 --function '[tb][cl][pk]_*' --from 2s --format json
printf '%s\n' "$out" >"$dir/r.json"
python3 - "$dir/r.json" "$k" "$a" "$b" "$c" <<'PY' || fail "validate JSON filter counts"
import json, sys
r = json.load(open(sys.argv[1]))["filter"]
k, t, c, f = map(int, sys.argv[2:])
assert r["cpu"] == "0" and r["function"] == "[tb][cl][pk]_*" and r["from_ns"] == 2_000_000_000, r
assert r["kept"] == k and r["dropped"] == {"time": t, "cpu": c, "function": f}, r
PY
for command in run compare; do
  run "$command" --ftrace "$capture" --cpu 0 --function '[tb][cl][pk]_*' --from 2s --duration 40 --format json
  expect_status 0
  printf '%s\n' "$out" >"$dir/r.json"
  python3 - "$dir/r.json" "$k" "$a" "$b" "$c" <<'PY' || fail "$command JSON filter counts"
import json, sys
r = json.load(open(sys.argv[1]))
w = r["workload"]["params"]
k, t, c, f = map(int, sys.argv[2:])
assert w["filter"]["kept"] == k and w["filter"]["dropped"] == {"time": t, "cpu": c, "function": f}, w
PY
  run "$command" --ftrace "$capture" --cpu 0 --duration 40
  expect_status 0
  read -r k0 a0 b0 c0 <<<"$(count_ftrace "$dir/capture.txt" "0" "" -1 -1)"
  # compare wraps its lines: compare the words.
  grep -qF -- "filter --cpu 0: $(phrase "$k0" "$a0" "$b0" "$c0" "timer events")" <<<"$(tr -s ' \n' '  ' <<<"$out")" ||
    fail "$command text report does not count the filter"
done
run gen --ftrace "$capture" --cpu 1 --duration 40 -o "$dir/gen.trace"
expect_status 0
read -r k1 a1 b1 c1 <<<"$(count_ftrace "$dir/capture.txt" "1" "" -1 -1)"
[[ $(tail -n 1 <<<"$err") == "filter --cpu 1: $(phrase "$k1" "$a1" "$b1" "$c1" "timer events")" ]] ||
  fail "gen does not count the filter on stderr"
[[ $(grep -c '^# generated by timersim gen: ' "$dir/gen.trace") -eq 1 ]] || fail "gen's comment is not one line"
run run --trace "$dir/gen.trace" --duration 40
expect_status 0

# A timersim trace: --cpu against cpu=, --function against label= (the
# timer's last one), times from its time 0.
run import "$capture" -o "$dir/all.trace"
expect_status 0
count_trace() { # FILE CPU FUNCTION_REGEX FROM_NS TO_NS
  awk -v want="$2" -v fre="$3" -v from="$4" -v to="$5" '
    /^#/ || NF == 0 { next }
    {
      cpu = 0; label = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^cpu=/) cpu = substr($i, 5) + 0
        if ($i ~ /^label=/) label = substr($i, 7)
      }
      if (label != "") last[$3] = label; else if ($3 in last) label = last[$3]
      sub(/\[.*/, "", label)
      if ((from >= 0 && $1 < from) || (to >= 0 && $1 >= to)) { dt++; next }
      if (want != "" && cpu != want) { dc++; next }
      if (fre != "" && (label == "" || label !~ fre)) { df++; next }
      kept++
    }
    END { printf "%d %d %d %d\n", kept, dt, dc, df }' "$1"
}
read -r k a b c <<<"$(count_trace "$dir/all.trace" 1 "^tcp_" 3000000000 25000000000)"
((k > 0 && a > 0 && b > 0 && c > 0)) || fail "the test's filter should keep some events and drop some for each reason"
run run --trace "$dir/all.trace" --cpu 1 --function 'tcp_*' --from 3s --to 25s --duration 40
expect_status 0
grep -qF -- "$(phrase "$k" "$a" "$b" "$c" "events")" <<<"$out" || fail "run --trace does not count the filter"

# step --trace: --trace-from/--trace-to (its --from is a tick); the counts
# come last, for the events read up to the last tick shown (here: all).
run import "$window" -o "$dir/window.trace"
expect_status 0
read -r k a b c <<<"$(count_trace "$dir/window.trace" "" "" 1000000000 2000000000)"
run step --trace "$dir/window.trace" --trace-from 1s --trace-to 2s --ticks 700 --design modern
expect_status 0
[[ $(tail -n 1 <<<"$out") == "filter --from 1s --to 2s: $(phrase "$k" "$a" "$b" "$c" "events") (read up to the last tick shown)" ]] ||
  fail "step's last line does not count the filter"
run step --trace "$dir/window.trace" --cpu 1 --ticks 700 --design modern --format json
expect_status 0
read -r k a b c <<<"$(count_trace "$dir/window.trace" 1 "" -1 -1)"
tail -n 1 <<<"$out" >"$dir/r.json"
python3 - "$dir/r.json" "$k" "$b" <<'PY' || fail "step JSON filter counts"
import json, sys
r = json.load(open(sys.argv[1]))["filter"]
assert r["kept"] == int(sys.argv[2]) and r["dropped"]["cpu"] == int(sys.argv[3]), r
PY

# Straddling the window (docs/trace-format.md, "Filters"): as if the capture
# began at --from and ended at --to.
run import "$window" -o "$dir/w.trace" --from 1s --to 2s
expect_status 0
events=$(grep -v '^#' "$dir/w.trace")
# A (armed before, fires inside): its arm is gone, its expiry gives nothing;
# its callback's re-arm is kept, marked as done inside A's callback.
grep -q '0xffff888004a01000 at=.* cb=0xffff888004a01000$' <<<"$events" || fail "A's re-arm is not kept with cb="
[[ $(grep -c '0xffff888004a01000' <<<"$events") -eq 1 ]] || fail "A has other events than its re-arm"
# D (armed before, cancelled inside): the cancel is dropped, as for a timer
# armed before the capture began.
grep -q 'ffff888004a04000' <<<"$events" && fail "D's cancel is kept"
grep -qF '1 cancels of timers armed before the trace dropped' <<<"$out" || fail "D's cancel is not counted as dropped"
# B and C (armed inside, due or cancelled after --to): their arms kept,
# nothing after --to.
# (Each an eighth of the way into the jiffy its timer_start printed: 1.5 s
# and 1.6 s are jiffies 375 and 400 after the first event, at HZ=250.)
grep -q '^1500500000 arm 0xffff888004a02000 ' <<<"$events" || fail "B's arm is missing"
grep -q '^1600500000 arm 0xffff888004a03000 ' <<<"$events" || fail "C's arm is missing"
[[ $(wc -l <<<"$events") -eq 3 ]] || fail "expected exactly 3 events in the window"
# Replayed, B and C fire after --to (the run drains them); A's re-arm waits
# for a fire of A that never comes (A was never armed in the replay).
run run --ftrace "$window" --from 1s --to 2s --duration 5 --format json
expect_status 0
printf '%s\n' "$out" >"$dir/r.json"
python3 - "$dir/r.json" <<'PY' || fail "the replay of the window"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["total"]["timers"]
assert t["arms"] == 2 and t["fired"] == 2 and t["cancelled"] == 0, t
PY

# Bad values: one line naming the option (and the hint), exit 2.
for bad in "--cpu 2-x" "--cpu 3-1" "--cpu ," "--function [ab" "--from 5" "--from 1.5parsecs" "--from 5s --to 1s" \
  "--to 1s --from 1s" "--from 0.0000000001s"; do
  read -ra words <<<"$bad"
  option=${words[0]}
  [[ $bad == *"--to 1s" ]] && option=--to
  [[ $bad == "--to 1s --from 1s" ]] && option=--to
  for command in "import $capture -o $dir/x.trace" "validate $capture" "run --ftrace $capture"; do
    read -ra cmd <<<"$command"
    run "${cmd[@]}" "${words[@]}"
    expect_status 2
    expect_empty_stdout
    [[ $(head -n 1 <<<"$err") == "timersim: $option: "* ]] || fail "the error does not start with '$option: '"
  done
done
[[ ! -e $dir/x.trace ]] || fail "a refused import left its output"
run run --trace "$dir/all.trace" --from @3
expect_usage_error '^timersim: --from: @SECONDS is a kernel trace' "try 'timersim run --help'"
run run --cpu 1
expect_usage_error '^timersim: --cpu: a trace filter, only with --trace or --ftrace$' "try 'timersim run --help'"
run step --timeouts 5 --ticks 2 --function 'x*'
expect_usage_error '^timersim: --function: a trace filter, only with --trace or --ftrace$' "try 'timersim step --help'"

# A filter that keeps nothing leaves nothing to replay, check or write: one
# line naming the file and the filter, exit 2, no output file.
for command in "import $capture -o $dir/none.trace" "validate $capture" "run --ftrace $capture" \
  "compare --ftrace $capture" "run --trace $dir/all.trace"; do
  read -ra cmd <<<"$command"
  run "${cmd[@]}" --cpu 7
  expect_status 2
  expect_empty_stdout
  [[ $(wc -l <<<"$err") == 1 && $err == "timersim: "*": --cpu 7 keeps none of its "*" (dropped "*" by --cpu)" ]] ||
    fail "$command --cpu 7: wrong error: $err"
done
[[ ! -e $dir/none.trace ]] || fail "an import that kept nothing left its output"
