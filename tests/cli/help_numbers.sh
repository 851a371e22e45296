# Defaults in every --help are printed as written: (=0.05), not
# (=0.050000000000000003) (issue #14 item 8).
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

for command in compare run gen step validate import levels explain version; do
  run "$command" --help
  expect_status 0
  # A binary-to-decimal artefact: a fraction with 12 or more digits.
  if bad=$(grep -oE '\(=-?[0-9]*\.[0-9]{12,}[^)]*\)' <<<"$out"); then
    fail "defaults not as written: $(tr '\n' ' ' <<<"$bad")"
  fi
done

run compare --help
expect_stdout_line '--loss arg \(=0\.01\)'
expect_stdout_line '--port-reuse-fraction arg \(=0\.05\)'
expect_stdout_line '--cancel-fraction arg \(=0\.2\)'
