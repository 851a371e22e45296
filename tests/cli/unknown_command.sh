# An unknown or missing command is a usage error: exit 2, one error line, a hint.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

run frobnicate --with-options
expect_usage_error "unknown command 'frobnicate'" "try 'timersim --help'"

run
expect_usage_error "no command given" "try 'timersim --help'"
