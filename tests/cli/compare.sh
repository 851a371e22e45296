# timersim compare: a small run prints every design side by side, is
# deterministic, writes JSON atomically, and rejects bad parameters.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

small=(--connections 2000 --duration 20)

run compare "${small[@]}"
expect_status 0
expect_stdout_line '^ +classic +modern +heap$'
expect_stdout_line '^Verdict: '
expect_stdout_line '^  p99 '
first=$out

run compare "${small[@]}"
[[ $out == "$first" ]] || fail "two runs with the same seed differ"

dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT
run compare "${small[@]}" --design modern,heap --format json -o "$dir/out.json"
expect_status 0
expect_empty_stdout
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [x["name"] for x in d["designs"]]
assert names == ["modern", "heap"], names
heap = d["designs"][1]
assert heap["error_jiffies"]["max"] == 0 and heap["fired"] > 0, heap
assert d["designs"][0]["error_jiffies"]["min"] >= 1
' "$dir/out.json" || fail "JSON report is not what was asked for"
[[ $(ls -A "$dir") == out.json ]] || fail "temporary files left next to the output"

run compare "${small[@]}" --format csv
expect_status 0
expect_stdout_line '^design,metric,value$'
expect_stdout_line '^classic,cascade_moves,[0-9]+$'

run compare --hz 0
expect_usage_error '--hz' "try 'timersim compare --help'"
run compare --design classic,wheel
expect_usage_error "unknown design 'wheel'" "try 'timersim compare --help'"
run compare --slack lots
expect_usage_error '--slack' "try 'timersim compare --help'"
run compare --connections 1000 --duration -5
expect_usage_error '--duration' "try 'timersim compare --help'"
run compare --format yaml
expect_usage_error '--format' "try 'timersim compare --help'"

# A failing output write exits 1, names the file and leaves nothing behind.
run compare "${small[@]}" -o "$dir/no/such/dir/out.txt"
expect_status 1
[[ $err == *"$dir/no/such/dir/out.txt"* ]] || fail "error does not name the output file"
[[ ! -e $dir/no ]] || fail "a partial output was left"
