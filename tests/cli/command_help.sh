# `timersim <command> --help` succeeds and shows usage, options and examples.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

for flag in --help -h; do
  run version "$flag"
  expect_status 0
  expect_empty_stderr
  expect_stdout_line '^Usage: timersim version'
  expect_stdout_line '--help'
  expect_stdout_line '^Examples:$'
  expect_stdout_line '^  timersim version$'
done
