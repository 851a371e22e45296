# 6.9+ remote expiry in the reports (docs/output.md, "Remote expiry"): per
# CPU, the timers a migrator expired for idle CPUs and the timers of a CPU
# another one expired, with the idle wakeups next to them; compare's totals
# per design, push (modern) next to pull (modern-6.9). First on a hand-built
# 6.12 trace whose counts are known by construction (remote_trace.py), then
# on a generated workload, where text, JSON and CSV must agree.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

# save FILE ARGS...: runs timersim ARGS, which must succeed, and keeps its
# stdout in FILE for the checks in python.
save() {
  local file=$1
  shift
  run "$@"
  expect_status 0
  printf '%s\n' "$out" >"$file"
}

# CPU 0 expires N of CPU 1's global timers; CPU 0 has a timer of its own and
# CPU 1 a pinned one it fires itself.
for n in 3 5; do
  python3 "$here/remote_trace.py" "$n" >"remote-$n.trace"
  python3 "$here/remote_trace.py" "$n" --local >"local-$n.trace"
  # The trace is the kernel's: validate agrees on every idx and expiry.
  run validate "remote-$n.trace"
  expect_status 0
  expect_stdout_line "^agreement: idx $((n + 2))/$((n + 2)), expiry $((n + 2))/$((n + 2))$"

  save "remote-$n.json" run --ftrace "remote-$n.trace" --tail 1 --format json
  python3 - "$n" "remote-$n.json" <<'PY' || fail "remote expiries of the hand-built trace miscounted (N=$n)"
import json, sys
n = int(sys.argv[1])
d = json.load(open(sys.argv[2]))
assert d["design"] == "modern-6.9", d["design"]
cpu0, cpu1 = d["cpus"]
assert cpu0["remote_expiry"] == {"expired_for_others": n, "expired_by_others": 0}, cpu0["remote_expiry"]
assert cpu1["remote_expiry"] == {"expired_for_others": 0, "expired_by_others": n}, cpu1["remote_expiry"]
assert d["total"]["remote_expiry"] == {"expired_for_others": n, "expired_by_others": n}, d["total"]["remote_expiry"]
# The remote fires are the migrator's: CPU 0 fired its own and CPU 1's N.
assert cpu0["timers"]["fired"] == n + 1 and cpu1["timers"]["fired"] == 1, (cpu0["timers"], cpu1["timers"])
# ... on the jiffy and CPU the kernel fired them.
k = d["workload"]["kernel_fires"]
assert k["kernel_fires"] == n + 2 and k["same_jiffy_cpu"] == n + 2, k
# The kernel's own remote expiries: its fires off the timer's base CPU.
assert k["kernel_as_recorded"]["remote_expiries"] == n, k["kernel_as_recorded"]
PY
  run run --ftrace "remote-$n.trace" --tail 1
  expect_status 0
  expect_stdout_line "^  remote expiries +$n$"
  expect_stdout_line 'softirq time +for others +by others +idle wakes$'
  # The last three columns of CPU 0's and CPU 1's rows.
  expect_stdout_line "^ +0 .* +$n +0 +0$"
  expect_stdout_line "^ +1 .* +0 +$n +0$"

  # The same timers expired by CPU 1 itself: no remote expiry.
  save "local-$n.json" run --ftrace "local-$n.trace" --tail 1 --format json
  python3 - "$n" "local-$n.json" <<'PY' || fail "a trace without remote expiries counted some (N=$n)"
import json, sys
n = int(sys.argv[1])
d = json.load(open(sys.argv[2]))
assert d["total"]["remote_expiry"] == {"expired_for_others": 0, "expired_by_others": 0}, d["total"]
assert [c["timers"]["fired"] for c in d["cpus"]] == [1, n + 1], [c["timers"] for c in d["cpus"]]
assert d["workload"]["kernel_fires"]["same_jiffy_cpu"] == n + 2
assert d["workload"]["kernel_fires"]["kernel_as_recorded"]["remote_expiries"] == 0
PY
done

# modern (push) on the same trace has no remote expiry, and its outputs no
# remote figures at all: they are modern-6.9's.
run run --ftrace remote-3.trace --tail 1 --design modern --format json
expect_status 0
python3 -c 'import json, sys; d = json.load(sys.stdin); assert all("remote_expiry" not in c for c in d["cpus"] + [d["total"]])' <<<"$out" ||
  fail "modern's run JSON has remote expiry keys"
run run --ftrace remote-3.trace --tail 1 --design modern
expect_status 0
! grep -q 'for others\|Remote expiry' <<<"$out" || fail "modern's run text shows remote expiry figures"

# --by base: the lateness of pinned and of global timers side by side. On
# modern-6.9 the pinned timer is BASE_LOCAL's, the others BASE_GLOBAL's
# (CPU 0's own and CPU 1's three); modern has one standard base.
save by-base.json run --ftrace remote-3.trace --tail 1 --by base --format json
python3 - by-base.json <<'PY' || fail "--by base groups of the hand-built trace"
import json, sys
groups = {g["name"]: g for g in json.load(open(sys.argv[1]))["groups"]["groups"]}
assert sorted(groups) == ["global", "local (pinned)"], sorted(groups)
assert (groups["global"]["arms"], groups["global"]["fired"]) == (4, 4), groups["global"]
assert (groups["local (pinned)"]["arms"], groups["local (pinned)"]["fired"]) == (1, 1), groups["local (pinned)"]
assert groups["global"]["error_jiffies"]["max"] == 1
PY
run run --ftrace remote-3.trace --tail 1 --by base --design modern
expect_status 0
expect_stdout_line '^ +5 +5 .* standard$'
! grep -q 'global\|local (pinned)' <<<"$out" || fail "modern has no local or global base"
run run --by bases
expect_usage_error "--by: expected function, cpu, level, base, got 'bases'" "try 'timersim run --help'"

# compare: push and pull side by side.
run compare --ftrace remote-3.trace --tail 1 --design modern,modern-6.9
expect_status 0
expect_stdout_line '^Remote expiry \(6\.9\+ pull\)$'
# modern, modern-6.9, and the kernel as recorded.
expect_stdout_line '^  remote expiries +0 +3 +3$'
run compare --ftrace remote-3.trace --tail 1 --design modern,classic
expect_status 0
! grep -q 'Remote expiry' <<<"$out" || fail "compare without modern-6.9 shows remote expiry rows"

# The committed 6.12 capture: the replay's remote expiries are the kernel's.
data=$(cd "$here/../data/kernel" && pwd)
save capture-6.12.json run --ftrace "$data/capture-6.12-hz250.trace.xz" --format json
python3 - capture-6.12.json <<'PY' || fail "the 6.12 capture's remote expiries differ from the kernel's"
import json, sys
d = json.load(open(sys.argv[1]))
kernel = d["workload"]["kernel_fires"]["kernel_as_recorded"]["remote_expiries"]
assert kernel > 0 and d["total"]["remote_expiry"]["expired_for_others"] == kernel, (kernel, d["total"]["remote_expiry"])
PY

# A generated workload on 4 CPUs with NOHZ idle: the migrator stand-in.
opts=(--workload tcp-retransmit,socket-timeouts --cpus 4 --nohz --duration 5 --connections 2000)
save run69.json run "${opts[@]}" --design modern-6.9 --format json
save run69.txt run "${opts[@]}" --design modern-6.9
save run-modern.json run "${opts[@]}" --design modern --format json
save compare.json compare "${opts[@]}" --design modern,modern-6.9 --format json
save compare.csv compare "${opts[@]}" --design modern,modern-6.9 --format csv
save compare.txt compare "${opts[@]}" --design modern,modern-6.9
python3 - <<'PY' || fail "remote expiry figures of a generated workload disagree between outputs"
import json, re
run = json.load(open("run69.json"))
text = open("run69.txt").read()
cpus = run["cpus"]
total = run["total"]["remote_expiry"]
remote = total["expired_for_others"]
# Something to check: the stand-in migrator expired idle CPUs' timers.
assert remote > 0, total
assert remote == total["expired_by_others"] == sum(c["remote_expiry"]["expired_for_others"] for c in cpus) \
    == sum(c["remote_expiry"]["expired_by_others"] for c in cpus), (total, [c["remote_expiry"] for c in cpus])
assert re.search(rf"^  remote expiries +{remote}$", text, re.M), "text total"
rows = re.findall(r"^ +(\d) .* (\d+) +(\d+) +(\d+)$", text, re.M)
assert len(rows) == 4, rows
for (cpu, out_, in_, wakes), c in zip(rows, cpus):
    assert int(cpu) == c["cpu"]
    assert (int(out_), int(in_), int(wakes)) == (c["remote_expiry"]["expired_for_others"],
                                                 c["remote_expiry"]["expired_by_others"],
                                                 c["ticks"]["wakeups_by_timer"]), (cpu, c)
modern = json.load(open("run-modern.json"))
assert "remote_expiry" not in modern["total"]
cmp = {d["name"]: d for d in json.load(open("compare.json"))["designs"]}
assert cmp["modern"]["remote_expiry"] == {"expiries": 0, "wakeups_by_timer": modern["total"]["ticks"]["wakeups_by_timer"]}, cmp["modern"]["remote_expiry"]
assert cmp["modern-6.9"]["remote_expiry"] == {"expiries": remote, "wakeups_by_timer": run["total"]["ticks"]["wakeups_by_timer"]}
for c, r in zip(cmp["modern-6.9"]["per_cpu"], cpus):
    assert (c["remote_expiries_for_others"], c["remote_expiries_by_others"], c["wakeups_by_timer"]) == \
        (r["remote_expiry"]["expired_for_others"], r["remote_expiry"]["expired_by_others"], r["ticks"]["wakeups_by_timer"])
assert all(c["remote_expiries_for_others"] == 0 == c["remote_expiries_by_others"] for c in cmp["modern"]["per_cpu"])
csv = dict(((d, m), v) for d, m, v in (l.split(",") for l in open("compare.csv").read().split("\n")[1:] if l))
assert csv[("modern-6.9", "remote_expiries")] == str(remote) and csv[("modern", "remote_expiries")] == "0"
assert csv[("modern-6.9", "wakeups_by_timer")] == str(run["total"]["ticks"]["wakeups_by_timer"])
row = re.search(r"^  remote expiries +(\S+) +(\S+)$", open("compare.txt").read(), re.M)
assert row and row.groups() == ("0", f"{remote:,}"), row and row.groups()
PY
