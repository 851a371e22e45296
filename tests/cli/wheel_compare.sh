# The configurable wheel in compare and step: the kernel wheels' presets
# give the kernel wheels' figures in every report format (only the design's
# name differs), several geometries run side by side each named by its
# spec, step draws a geometry's levels, and a bad spec is a usage error.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

# The same machine and workload: the same CSV once "wheel:" is taken off
# the design column (the CSV has no other place naming a design), but for
# the memory rows (the presets keep the same buckets in their own data
# structure).
args=(--duration 10 --connections 2000 --cpus 2)
run compare --design classic,modern "${args[@]}" --format csv
expect_status 0
kernel=$out
run compare --design wheel:classic,wheel:modern "${args[@]}" --format csv
expect_status 0
expect_stdout_line '^wheel:classic,cascade_moves,[1-9]'
not_memory() { grep -Ev ',(bytes_per_timer|peak_bytes),'; }
[[ $(sed 's/^wheel://' <<<"$out" | not_memory) == $(not_memory <<<"$kernel") ]] ||
  fail "compare wheel:classic,wheel:modern CSV differs from classic,modern"
[[ $(grep -c ',bytes_per_timer,' <<<"$out") == 2 ]] || fail "compare wheel:...: no bytes_per_timer row per design"
# The same for --by (the group table; by level the cascading wheel names
# its levels "level N", not "tvN") and JSON but for the names.
run compare --design classic,modern "${args[@]}" --by function --format csv
kernel=$out
run compare --design wheel:classic,wheel:modern "${args[@]}" --by function --format csv
expect_status 0
[[ $(sed 's/^wheel://' <<<"$out") == "$kernel" ]] || fail "compare --by function of the presets differs"
run compare --design classic,modern "${args[@]}" --by level --format csv
kernel=$(sed 's/,tv\([0-9]\),/,level \1,/' <<<"$out")
run compare --design wheel:classic,wheel:modern "${args[@]}" --by level --format csv
[[ $(sed 's/^wheel://' <<<"$out") == "$kernel" ]] || fail "compare --by level of the presets differs"
run compare --design classic,modern "${args[@]}" --format json
# The memory lines apart (as for the CSV above).
kernel=$(grep -v -e '"name"' -e '"summary"' -e '"verdict"' -e '"memory"' <<<"$out")
run compare --design wheel:classic,wheel:modern "${args[@]}" --format json
expect_stdout_line '^      "name": "wheel:classic",$'
expect_stdout_line '"reference": "wheel:modern"'
[[ $(grep -v -e '"name"' -e '"summary"' -e '"verdict"' -e '"memory"' <<<"$out") == "$kernel" ]] ||
  fail "compare JSON of the presets differs beyond the names"

# Several geometries at once, each labelled by its spec everywhere; a spec
# longer than a column widens its own column only.
designs=modern,wheel:rfc-2015,wheel:bits=6x7:shift=2,scheme6
long='wheel:mode=in-place:round=up:bits=6/6/6/6/6/6/6:shift=2'
run compare --design "$designs" --duration 5 --connections 500
expect_status 0
expect_stdout_line "^ +modern +wheel:rfc-2015 $long +scheme6$"
expect_stdout_line "^Timers by function, $long$"
expect_stdout_line "^  $long: [0-9.]+x "
run compare --design "$designs" --duration 5 --connections 500 --format json
expect_stdout_line '^      "name": "wheel:rfc-2015",$'
expect_stdout_line "^      \"name\": \"$long\",$"
run compare --design "$designs" --duration 5 --connections 500 --format csv
for d in modern wheel:rfc-2015 "$long" scheme6; do
  expect_stdout_line "^$d,fired,[0-9]+$"
done
run compare --design "$designs" --duration 5 --connections 500 --by function --format csv
expect_stdout_line "^wheel:rfc-2015,function,"
# The event log's design column names the spec too.
run compare --design modern,wheel:rfc-2015 --duration 2 --connections 200 --events ev.csv -o /dev/null
expect_status 0
[[ $(cut -d, -f1 ev.csv | sort -u | tr '\n' ' ') == "design modern wheel:rfc-2015 " ]] ||
  fail "event log design column: $(cut -d, -f1 ev.csv | sort -u | tr '\n' ' ')"

for bad in wheel:nope wheel:bits=6x4:shift=6 wheel:modern:colour=red; do
  run compare --design "modern,$bad" --duration 1
  expect_usage_error "^timersim: --design: $bad: " "try 'timersim compare --help'"
done
run compare --help
expect_status 0
expect_stdout_line '^  spelvin-2016 +mode=in-place:round=up:bits=5x9:shift=2$'

# step draws a wheel:SPEC's levels: the classic and modern presets tick for
# tick as the kernel wheels' views (the same fires, cascades, arms, pointers
# and bucket counts), the classic one cascading on the way.
checker=$(dirname -- "${BASH_SOURCE[0]}")/step_frames_match.py
timeouts=(--timeouts 5,300,1000,20000,70000 --hz 1000 --ticks 1200 --format json)
for d in classic modern; do
  run step "${timeouts[@]}" --design "$d"
  expect_status 0
  printf '%s\n' "$out" >"$d.json"
  run step "${timeouts[@]}" --design "wheel:$d"
  expect_status 0
  expect_stdout_line "^\{\"schema\":\"timersim.step.v1\",\"design\":\"wheel:$d\","
  printf '%s\n' "$out" >"wheel-$d.json"
  counts=$(python3 "$checker" "$d.json" "wheel-$d.json") || fail "step --design wheel:$d differs from $d"
  [[ $d == modern || $counts == "2 3" ]] || fail "step wheel:classic: expected 2 cascade moves and 3 fires, got $counts"
done
churn=(--connections 300 --message-interval 50 --ticks 600 --format json)
run step "${churn[@]}" --design modern
printf '%s\n' "$out" >churn-modern.json
run step "${churn[@]}" --design wheel:modern
printf '%s\n' "$out" >churn-wheel.json
python3 "$checker" churn-modern.json churn-wheel.json >/dev/null || fail "step churn: wheel:modern differs from modern"
# The text view: LWN's 36 jiffies in the 2015 draft go to level 1, due at 40.
run step --timeouts 36 --ticks 1 --hz 1000 --design wheel:rfc-2015
expect_status 0
expect_stdout_line '^  armed #0 \(36\) for tick 36: L1\[[0-9]+\], due at tick 40$'
expect_stdout_line '^  L7 +\|\.{32}\| +0$'
run step --ticks 1 --design wheel:bits=6x4:shift=6
expect_usage_error "^timersim: --design: wheel:bits=6x4:shift=6: " "try 'timersim step --help'"
