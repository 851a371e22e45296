# --numa-nodes K: the NUMA nodes of modern-6.9's timer-migration hierarchy
# (sim/machine/migration_hierarchy.hpp). Out-of-range values are refused
# with one line naming the option; the run's header and JSON say the nodes;
# the other designs run the same on any number of nodes.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

for cmd in run compare gen; do
  extra=()
  [[ $cmd == gen ]] && extra=(--output out.trace) # gen writes a trace: it needs a file
  run "$cmd" "${extra[@]}" --cpus 4 --numa-nodes 0 --duration 1
  expect_usage_error "^timersim: --numa-nodes: must be 1\.\.4 \(the CPUs\), got 0$" "try 'timersim $cmd --help'"
  run "$cmd" "${extra[@]}" --cpus 4 --numa-nodes 5 --duration 1
  expect_usage_error "^timersim: --numa-nodes: must be 1\.\.4 \(the CPUs\), got 5$" "try 'timersim $cmd --help'"
done
[[ ! -e out.trace ]] || fail "gen wrote its output despite a bad --numa-nodes"
# A trace sets the CPUs (2 here): the nodes are checked against them.
python3 "$here/remote_trace.py" 3 >remote.trace
run run --ftrace remote.trace --numa-nodes 3
expect_usage_error "^timersim: --numa-nodes: must be 1\.\.2 \(the CPUs\), got 3$" "try 'timersim run --help'"
run run --ftrace remote.trace --numa-nodes 2 --format json
expect_status 0
python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["machine"]["numa_nodes"] == 2, d["machine"]' <<<"$out" ||
  fail "the run JSON does not name 2 NUMA nodes"

opts=(--workload tcp-retransmit,socket-timeouts --cpus 8 --nohz --duration 3 --connections 1000)
run run "${opts[@]}" --design modern-6.9 --numa-nodes 2
expect_status 0
expect_stdout_line '^timersim run: modern-6\.9 design, .*, 8 CPUs on 2 NUMA nodes$'
# One node is the default, and not named.
run run "${opts[@]}" --design modern-6.9
expect_status 0
expect_stdout_line '^timersim run: modern-6\.9 design, .*, 8 CPUs$'

# The push model has no hierarchy: the same run on 1 and on 4 nodes.
run run "${opts[@]}" --design modern --format json
expect_status 0
one=$out
run run "${opts[@]}" --design modern --numa-nodes 4 --format json
expect_status 0
python3 - "$one" "$out" <<'PY' || fail "modern's run depends on --numa-nodes"
import json, sys
one, four = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert four["machine"].pop("numa_nodes") == 4
assert "numa_nodes" not in one["machine"]
assert one == four
PY

# compare names the nodes in its machine line.
run compare "${opts[@]}" --design modern,modern-6.9 --numa-nodes 2
expect_status 0
expect_stdout_line '^  machine   [0-9,]+ ticks, 2 NUMA nodes, NOHZ idle,'
