# Helpers sourced by the tests in tests/cli/*.sh (not a test itself: the runner
# only picks up *.sh). Each helper prints what went wrong and exits 1.

set -euo pipefail

timersim=${1:?usage: $0 path/to/timersim}

# tests/cli/run starts each test in a fresh empty directory. Run by hand, a test
# would write its files into the caller's directory (once, into the checkout),
# so it starts again in a scratch directory of its own, by absolute paths (its
# sibling files are found next to it).
if [[ -z ${TIMERSIM_CLI_WORKDIR:-} ]]; then
  test_script=$(realpath -- "${BASH_SOURCE[1]}")
  timersim=$(realpath -- "$timersim")
  TIMERSIM_CLI_WORKDIR=$(mktemp -d)
  export TIMERSIM_CLI_WORKDIR
  cd "$TIMERSIM_CLI_WORKDIR"
  exec bash "$test_script" "$timersim"
fi

# run ARGS...: runs timersim, setting $status, $out (stdout) and $err (stderr).
run() {
  local out_file err_file
  out_file=$(mktemp)
  err_file=$(mktemp)
  status=0
  "$timersim" "$@" >"$out_file" 2>"$err_file" || status=$?
  out=$(<"$out_file")
  err=$(<"$err_file")
  rm -f -- "$out_file" "$err_file"
  last_command="timersim $*"
}

fail() {
  echo "$last_command: $*"
  echo "--- stdout:"
  printf '%s\n' "$out"
  echo "--- stderr:"
  printf '%s\n' "$err"
  exit 1
}

expect_status() {
  [[ $status -eq $1 ]] || fail "exit status $status, expected $1"
}

expect_empty_stdout() { [[ -z $out ]] || fail "expected nothing on stdout"; }
expect_empty_stderr() { [[ -z $err ]] || fail "expected nothing on stderr"; }

# expect_stdout_line REGEX: some line of stdout matches the extended regex.
expect_stdout_line() {
  grep -Eq -- "$1" <<<"$out" || fail "no stdout line matches /$1/"
}

# expect_file_error ERROR_REGEX: an input or output file at fault (missing,
# unreadable, cannot be created): exit 2, nothing on stdout, and stderr is
# exactly one "timersim: FILE: what" line matching ERROR_REGEX, no hint.
expect_file_error() {
  expect_status 2
  expect_empty_stdout
  local lines
  mapfile -t lines <<<"$err"
  [[ ${#lines[@]} -eq 1 ]] || fail "expected 1 line on stderr, got ${#lines[@]}"
  [[ ${lines[0]} =~ ^timersim:\  ]] || fail "error line does not start with 'timersim: '"
  [[ ${lines[0]} =~ $1 ]] || fail "error line does not match /$1/"
}

# expect_usage_error ERROR_REGEX HINT: exit 2, nothing on stdout, and stderr
# is exactly one "timersim: ..." line matching ERROR_REGEX, then the hint line.
expect_usage_error() {
  expect_status 2
  expect_empty_stdout
  local lines
  mapfile -t lines <<<"$err"
  [[ ${#lines[@]} -eq 2 ]] || fail "expected 2 lines on stderr (error, hint), got ${#lines[@]}"
  [[ ${lines[0]} =~ ^timersim:\  ]] || fail "error line does not start with 'timersim: '"
  [[ ${lines[0]} =~ $1 ]] || fail "error line does not match /$1/"
  [[ ${lines[1]} == "$2" ]] || fail "hint line is not: $2"
}
