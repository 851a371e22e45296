# LTTng trace directories (workloads/traces/input/lttng_ctf.hpp): the real
# LTTng kernel trace of Linux 3.6 in tests/data/lttng is taken by every
# command that takes a kernel trace, its directory or the session directory
# above it; its kernel comes from the trace's environment (3.6: the classic
# wheel, replayed without slack, which its expires already has), its HZ from
# its jiffies (300). validate checks its expiries on the classic wheel. A
# damaged or foreign directory is one line, exit 2, nothing written.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

trace=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/lttng/lttng-3.6-scp" && pwd)
# The runner starts each test in a fresh empty directory: names are relative.

# run --ftrace DIR: the kernel's own design, HZ from the jiffies.
run run --ftrace "$trace" --format json
expect_status 0
python3 - "$out" <<'EOF' >/dev/null || fail "run --format json: not kernel 3.6 on classic at HZ 300"
import json, sys
r = json.loads(sys.argv[1])
p = r["workload"]["params"]
assert p["kernel"] == "3.6", p["kernel"]
assert p["kernel_source"] == "the trace's '# kernel:' line", p["kernel_source"]
assert p["hz"] == 300 and p["hz_source"] == "the trace's jiffies", p["hz_source"]
assert r["design"] == "classic", r["design"]
assert r["machine"]["hz"] == 300
fires = r["workload"]["kernel_fires"]
# Two timers armed before the trace re-arm themselves every jiffy from
# their callback: armed at the trace's start, their chains replay whole.
assert fires["kernel_fires"] == 10544 and fires["recall"] >= 0.99 and fires["precision"] >= 0.99, fires
EOF

# The text report says the same, and how many of the kernel's fires the
# replay reproduces (all its own fires are the kernel's: no slack added).
run run --ftrace "$trace"
expect_status 0
expect_stdout_line '^timersim run: classic design, HZ=300, 5228 ticks'
expect_stdout_line "^kernel 3\.6 from the trace's '# kernel:' line$"
expect_stdout_line '^replay of classic reproduces 10544 of 10544 fires the kernel recorded on the same jiffy and CPU \(100\.0%\); 100\.0% of its 10544 fires are the kernel.s'
# With the slack added again, some of its fires are not the kernel's.
run run --ftrace "$trace" --slack default
expect_status 0
expect_stdout_line '^replay of classic reproduces .*; [0-9]{1,2}\.[0-9]% of its [0-9]+ fires are the kernel.s'

# import: the directory, the session directory above it, and a copy beside
# other files import to the same trace.
imported() {
  run import "$1" -o imported.trace
  expect_status 0
  sed 2d imported.trace
}
imported "$trace" >want
grep -Eq '^# timersim-trace v1 hz=300 start_jiffies=4298030184$' want || fail "not HZ 300 from the jiffies"
# The trace's 10,568 arms, and the 14 timers armed before it (first seen
# expiring), armed at its start.
[[ $(grep -c ' arm ' want) -eq $((10568 + 14)) ]] || fail "not the 10568 arms of the trace's timer_start events and 14 before it"
mkdir -p session/kernel
cp "$trace/metadata" "$trace/channel0_0" session/kernel/
mkdir -p session/kernel/index
echo "not a stream" >session/kernel/notes.txt
imported session >got
cmp -s want got || fail "the session directory imports differently"

# compare --ftrace DIR runs the default designs on it.
run compare --ftrace "$trace" --format csv
expect_status 0
expect_stdout_line '^classic,'

# validate: every expiry on the classic wheel (3.6: slots oldest first).
# The 14 expiries of timers armed before the trace are unknown history; the
# other 10,530 fire in the kernel's run, in its order, 33 of them after a
# cascade from tv2..tv5.
run validate "$trace"
expect_status 0
expect_stdout_line '^a kernel before 4\.8: replayed on the classic wheel \(tv1\.\.tv5, cascades; slots run oldest first\).*; 33 agreeing expiries came down from tv2\.\.tv5 by cascades$'
expect_stdout_line '^idx \(timer_start\): +10617 events: not checked \(no idx= before 4\.11\)$'
expect_stdout_line '^expiry \(timer_expire_entry\): +10544 events: 10530 agree, 0 disagree, 14 unknown history \(100\.000%\)$'
expect_stdout_line '^ +14  expiry of a timer the trace never showed armed$'
expect_stdout_line '^disagreements: 0$'
expect_stdout_line '^agreement: idx 0/0, expiry 10530/10530$'
# The order is checked: 4.2's order (newest first) disagrees on half the runs.
run validate "$trace" --kernel 4.4 --format json
expect_status 1
python3 - "$out" <<'EOF2' >/dev/null || fail "validate --kernel 4.4: the order of the steps' timers is not checked"
import json, sys
r = json.loads(sys.argv[1])
assert r["kernel_classic"] and r["classic_slot_order"] == "newest first", r
e = r["expiry"]
assert e["disagree"] > 5000 and e["agree"] + e["disagree"] == 10530, e
assert list(r["disagreements_by_cause"]) == ["fired in another order by our run"], r["disagreements_by_cause"]
EOF2

# The replay takes the same order as validate: 3.6's slots run oldest
# first, so the two timers armed before the trace (armed at its start in the
# order the kernel first fired them) fire in that order at its first
# jiffy; as 4.4 (newest first) the other way round.
first_fires() {
  run run --ftrace "$trace" "$@" --events ev.csv
  expect_status 0
  grep ',fire,' ev.csv | head -2 | cut -d, -f4,12 | tr '\n' ' '
}
[[ $(first_fires) == "4298030185,0xffff88001fa1b0f8 4298030185,0xffff88001de4f928 " ]] ||
  fail "the replay of 3.6 does not run a slot oldest first"
[[ $(first_fires --kernel 4.4) == "4298030185,0xffff88001de4f928 4298030185,0xffff88001fa1b0f8 " ]] ||
  fail "the replay as 4.4 does not run a slot newest first"
# step takes the same rules: no slack (its default is --slack off here), and
# the first tick fires the two timers oldest first.
run step --ftrace "$trace" --ticks 40 --design classic --format json
expect_status 0
printf '%s\n' "$out" >step-default.json
run step --ftrace "$trace" --ticks 40 --design classic --format json --slack off
cmp -s step-default.json - <<<"$out" || fail "step of a 3.6 trace adds slack by default"
python3 - step-default.json <<'EOF2' || fail "step of a 3.6 trace does not fire a slot oldest first"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
assert [f["timer"] for f in frames[1]["fired"]] == [0, 1], frames[1]["fired"]
EOF2

# A damaged or foreign directory: one line naming it, exit 2, nothing written.
# copy NAME: the trace's metadata and stream in NAME/.
copy() {
  mkdir -p "$1"
  cp "$trace/metadata" "$trace/channel0_0" "$1/"
}
# replace FILE FROM TO: FROM (and TO, of the same length) in a binary file.
replace() {
  python3 - "$@" <<'EOF'
import sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
data = open(path, "rb").read()
assert old in data and len(old) == len(new)
open(path, "wb").write(data.replace(old, new))
EOF
}
copy cut-stream
head -c 1000000 "$trace/channel0_0" >cut-stream/channel0_0
copy cut-metadata
head -c 10000 "$trace/metadata" >cut-metadata/metadata
copy corrupt
replace corrupt/metadata struct strXct
copy ust
replace ust/metadata 'domain = "kernel";' 'domain = "ust";   '
copy no-timers
replace no-timers/metadata 'name = timer_' 'name = tymer_'
copy no-expires
replace no-expires/metadata '_expires;' '_expirez;'
copy no-stream
: >no-stream/channel0_0
mkdir not-lttng
echo "# notes" >not-lttng/README.md

bad() {
  local dir=$1 want=$2 cmd
  for cmd in "import -o never.trace" "run --ftrace" "compare --ftrace" "validate"; do
    # shellcheck disable=SC2086
    run $cmd "$dir"
    expect_file_error "$want"
    [[ ! -e never.trace ]] || fail "an output was left behind"
  done
}
cant='an LTTng trace \(CTF\) that cannot be read: '
bad cut-stream "^timersim: cut-stream: ${cant}libbabeltrace2 cannot open it \(.*\): Failed to index CTF stream file 'cut-stream/channel0_0'$"
bad cut-metadata "^timersim: cut-metadata: ${cant}its metadata \(cut-metadata/metadata\) is cut short: its last packet, at byte 8192, needs 4096 bytes and has 1808$"
bad corrupt "^timersim: corrupt: ${cant}libbabeltrace2 cannot open it \(metadata it cannot parse, or a stream file cut short or corrupt\): "
bad ust '^timersim: ust: an LTTng userspace \(UST\) trace, not a kernel one: '
bad no-expires "^timersim: no-expires: ${cant}its timer_start event at 10509\.628614389 on CPU 0 lacks its fields \(timer, function, expires, now\)$"
bad no-stream "^timersim: no-stream: ${cant}it has CTF metadata but no stream file"
bad not-lttng '^timersim: not-lttng: a directory, not an LTTng trace \(no CTF metadata in it or below it\)$'
# Without timer events the reader cannot tell HZ, as for text.
bad no-timers "^timersim: no-timers:1: HZ unknown: the trace has no '# hz=' line and 0 timer events with jiffies: too few to tell HZ; pass --hz \(hz\)$"
