# docs/tutorial.md is not stale: every command block's output is what the
# command prints today (scripts/tutorial-outputs --check). The blocks marked
# slow are skipped to keep this fast. A doctored copy must be reported stale.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
script=$root/scripts/tutorial-outputs

check() {
  last_command="scripts/tutorial-outputs --check --skip-slow $*"
  status=0
  out=$("$script" --check --skip-slow --binary "$timersim" "$@" 2>&1) || status=$?
  err=
}

check
[[ $status -eq 0 ]] || fail "docs/tutorial.md is stale: run scripts/tutorial-outputs (exit status $status)"
[[ $out =~ "is up to date ("[0-9]+" commands run, 2 slow ones skipped)" ]] || fail "unexpected summary"

# A small doc whose one block has one number changed: --check must notice,
# show the line, and change nothing; without --check the block is rewritten.
command=(explain --hz 1000 --timeout 36 --design classic)
run "${command[@]}"
expect_status 0
good=$out
[[ $good == *"tv1[68]"* ]] || fail "expected tv1[68]"
printf '# t\n\n```text\n$ timersim %s\n%s\n```\n' "${command[*]}" "${good/tv1\[68\]/tv1[69]}" >stale.md
cp stale.md before.md
check stale.md
[[ $status -eq 1 ]] || fail "a stale doc gave exit status $status, expected 1"
grep -q '^-.*tv1\[69\]' <<<"$out" || fail "the diff does not show the stale line"
grep -q '^+.*tv1\[68\]' <<<"$out" || fail "the diff does not show the regenerated line"
cmp -s stale.md before.md || fail "--check changed the file"
"$script" --binary "$timersim" stale.md >/dev/null || fail "rewriting the stale doc failed"
[[ $(<stale.md) == "$(printf '# t\n\n```text\n$ timersim %s\n%s\n```' "${command[*]}" "$good")" ]] ||
  fail "the rewritten block is not the command's output"
check stale.md
[[ $status -eq 0 ]] || fail "the rewritten doc is still stale"
