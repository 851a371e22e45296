# Unknown options and stray arguments are usage errors (exit 2, one error line,
# a hint naming the right --help), both before and after the command.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

run version --bogus
expect_usage_error "--bogus" "try 'timersim version --help'"

run version stray-argument
expect_usage_error "." "try 'timersim version --help'"

run --bogus
expect_usage_error "--bogus" "try 'timersim --help'"

# Long options must be spelled out: no prefix guessing.
run --vers
expect_usage_error "--vers" "try 'timersim --help'"
