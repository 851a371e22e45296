# `timersim version` and `timersim --version` print the same "timersim X.Y.Z".
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

run version
expect_status 0
expect_empty_stderr
[[ $out =~ ^timersim\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "not 'timersim X.Y.Z'"
version=$out

for flag in --version -V; do
  run "$flag"
  expect_status 0
  expect_empty_stderr
  [[ $out == "$version" ]] || fail "differs from 'timersim version': $version"
done
