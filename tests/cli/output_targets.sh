# -o and --events never destroy what they name (issue #17 item 5): a FIFO is
# written into and stays a FIFO; a symlink stays a symlink and its target
# gets the output; `-o -` is stdout; an existing file keeps its permission
# bits; an output that is the same file as an input (by device and inode,
# also through a symlink or a hard link), or as the other output, is refused
# with exit 2 and one line, and the input is left as it was.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
small=(--duration 1 --connections 100)

# expect_one_line_error REGEX: exit 2, nothing on stdout, one stderr line.
expect_one_line_error() {
  expect_status 2
  expect_empty_stdout
  [[ $err != *$'\n'* ]] || fail "expected one line on stderr"
  [[ $err =~ ^timersim:\  ]] || fail "error line does not start with 'timersim: '"
  [[ $err =~ $1 ]] || fail "error line does not match /$1/"
}

no_temporaries() {
  local left
  left=$(find . -name '*.tmp.*')
  [[ -z $left ]] || fail "temporary files left: $left"
}

# A FIFO: written into, never replaced.
mkfifo fifo
reader_out=$(mktemp)
cat fifo >"$reader_out" &
reader=$!
run run "${small[@]}" -o fifo
if [[ ! -p fifo ]]; then
  kill "$reader" 2>/dev/null || true
  fail "the FIFO was replaced by a $(stat -c %F fifo)"
fi
wait "$reader"
expect_status 0
expect_empty_stdout
grep -q 'Precision error' "$reader_out" || fail "the report did not come through the FIFO"
rm -f -- "$reader_out"

# A symlink: stays a link; its target gets the report.
mkdir sub
echo old >sub/report.txt
chmod 640 sub/report.txt
ln -s sub/report.txt link
run run "${small[@]}" -o link
expect_status 0
[[ -L link ]] || fail "the symlink was replaced by a $(stat -c %F link)"
grep -q 'Precision error' sub/report.txt || fail "the symlink's target did not get the report"
[[ $(stat -c %a sub/report.txt) == 640 ]] || fail "the replaced file lost its mode 640: $(stat -c %a sub/report.txt)"
no_temporaries

# A dangling symlink is refused, and stays.
ln -s nowhere dangling
run run "${small[@]}" -o dangling
expect_one_line_error 'dangling: a symlink to a file that does not exist'
[[ -L dangling && ! -e nowhere ]] || fail "the dangling symlink changed"

# A directory is refused.
run run "${small[@]}" -o sub
expect_one_line_error 'sub: is a directory'

# -o - is stdout, not a file called '-'.
run run "${small[@]}" -o -
expect_status 0
expect_stdout_line 'Precision error'
[[ ! -e ./- ]] || fail "created a file named '-'"
run gen --duration 1 --connections 10 -o -
expect_status 0
expect_stdout_line '^# timersim-trace v1'
run compare "${small[@]}" --events -
expect_usage_error '^timersim: --events -: the report goes to stdout too' "try 'timersim compare --help'"

# An output that is an input is refused before anything is written.
run gen --duration 2 --connections 20 -o t.trace
expect_status 0
cp t.trace t.orig
ln t.trace hard.trace
ln -s t.trace soft.trace
for o in t.trace ./t.trace hard.trace soft.trace; do
  run run --trace t.trace -o "$o"
  expect_one_line_error "^timersim: -o $o: the same file as the input --trace t\\.trace"
  run gen --trace t.trace -o "$o"
  expect_one_line_error "^timersim: -o $o: the same file as the input --trace t\\.trace"
  run compare --trace t.trace --events "$o"
  expect_one_line_error "^timersim: --events $o: the same file as the input --trace t\\.trace"
  run compare --trace t.trace -o "$o"
  expect_one_line_error "^timersim: -o $o: the same file as the input --trace t\\.trace"
  cmp -s t.trace t.orig || fail "the input trace was changed"
done
run compare "${small[@]}" -o out.json --events ./out.json
expect_one_line_error '^timersim: --events \./out\.json: the same file as -o out\.json'
[[ ! -e out.json ]] || fail "wrote out.json"

cp "$data/ftrace/habits-ftrace.txt" habits.txt
cp habits.txt habits.orig
run import habits.txt -o habits.txt
expect_one_line_error '^timersim: -o habits\.txt: the same file as the input FILE habits\.txt'
cmp -s habits.txt habits.orig || fail "the input ftrace was changed"
# import -o -: the trace on stdout, the summary on stderr.
run import habits.txt -o -
expect_status 0
expect_stdout_line '^# timersim-trace v1'
[[ $err =~ ^-:\ 13\ events ]] || fail "the summary did not go to stderr"
no_temporaries
