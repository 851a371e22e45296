# `timersim --help` (and -h) succeeds and lists every command with a summary.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

for flag in --help -h; do
  run "$flag"
  expect_status 0
  expect_empty_stderr
  expect_stdout_line '^Usage: timersim '
  expect_stdout_line '^  version +[a-z]'
done
