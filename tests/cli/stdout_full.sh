# Output that cannot be written is an error, whatever its size: with stdout
# on a full device (/dev/full) every command that prints exits 1 with exactly
# "timersim: stdout: No space left on device" (issue #17 item 4). Small
# outputs used to vanish in the stdio buffer with exit 0; large ones said
# "cannot write to file" without naming stdout.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
[[ -w /dev/full ]] || { echo "no /dev/full: skipped"; exit 0; }

# run_full ARGS...: runs timersim with stdout on /dev/full; sets $status, $err.
run_full() {
  local err_file
  err_file=$(mktemp)
  status=0
  "$timersim" "$@" >/dev/full 2>"$err_file" || status=$?
  err=$(<"$err_file")
  out=""
  rm -f -- "$err_file"
  last_command="timersim $* >/dev/full"
}

expect_stdout_error() {
  expect_status 1
  [[ $err == "timersim: stdout: No space left on device" ]] || fail "stderr is not the one stdout error line"
}

small_run=(--duration 1 --connections 100)
commands=(
  "run ${small_run[*]}"
  "run ${small_run[*]} --format json"
  "compare ${small_run[*]} --format csv"
  "compare ${small_run[*]}"
  "levels"
  "levels --design modern"
  "explain --timeout 60s"
  "step --ticks 2"
  "validate $data/kernel/small-6.1-hz250.txt"
  "version"
  "--version"
  "--help"
  "run --help"
  "compare --help"
)
for command in "${commands[@]}"; do
  # shellcheck disable=SC2086  # word splitting wanted
  run_full $command
  expect_stdout_error
done

# import's summary goes to stdout (the trace goes to -o).
run_full import "$data/ftrace/habits-ftrace.txt" -o habits.trace
expect_stdout_error

# The same commands on a working stdout still succeed.
run levels --design modern
expect_status 0
expect_empty_stderr
