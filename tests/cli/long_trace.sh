# A kernel trace longer than the committed captures, made by
# bench/synth-kernel-trace (its own 6.1 wheel model, independent of
# timersim's), read the ways a user hands it over: validate agrees on every
# idx and expiry; the replay of modern gives back at least 99.5% of the
# kernel's fires both ways; the same trace through a pipe, xz-compressed,
# gives the same reports as the file (the pipe is read twice through a
# temporary copy); and a pipe with no temporary file to be had is one
# line naming it, exit 2, nothing on stdout.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

bench=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../../bench" && pwd)
python3 "$bench/synth-kernel-trace" --lines 40000 --seed 11 >long.trace 2>/dev/null ||
  fail "synth-kernel-trace failed"

run validate long.trace
expect_status 0
expect_stdout_line '^disagreements: 0$'
file_validate=$out

run run --ftrace long.trace --design modern --format json
expect_status 0
file_run=$out
python3 - <<PY || fail "the replay of modern gives back less of the kernel's fires"
import json
k = json.loads('''$out''')["workload"]["kernel_fires"]
assert k["kernel_fires"] > 4000, k
assert k["recall"] >= 0.995 and k["precision"] >= 0.995, k
PY

# Through a pipe, compressed: the same reports, named <stdin>.
xz -1 -c long.trace >long.trace.xz
pipe() {
  status=0
  out=$(cat long.trace.xz | "$timersim" "$@" 2>err) || status=$?
  err=$(<err)
  last_command="cat long.trace.xz | timersim $*"
}
pipe validate -
expect_status 0
expect_empty_stderr
[[ $out == "${file_validate//long.trace/<stdin>}" ]] || fail "validate of a pipe differs from the file's"
pipe run --ftrace - --design modern --format json
expect_status 0
[[ $out == "${file_run//long.trace/<stdin>}" ]] || fail "run of a pipe differs from the file's"
pipe compare --ftrace - --format csv
expect_status 0
pipe_compare=$out
run compare --ftrace long.trace.xz --format csv
expect_status 0
[[ $pipe_compare == "${out//long.trace.xz/<stdin>}" ]] || fail "compare of a pipe differs from the file's"

# No temporary file: one line naming the input and why, exit 2.
TMPDIR=$PWD/no-such-dir pipe run --ftrace -
expect_status 2
expect_empty_stdout
[[ $err != *$'\n'* ]] || fail "expected one line on stderr"
expected="timersim: <stdin>: no temporary file to read it again from in $PWD/no-such-dir (No such file or directory)"
[[ $err == "$expected" ]] || fail "unexpected error line"
