# Temporary files that kernel input needs (the copy of a pipe read in two
# passes, a trace.dat's copy and its rendered text), when they cannot be
# had: one line naming the input, what could not be done and the directory
# it was tried in ($TMPDIR), exit 2, nothing on stdout. A full disk is the
# temporary file's error, never worded as a read error of the input: here a
# file size limit (ulimit -f, SIGXFSZ ignored) stands in for it, write()
# failing with EFBIG where a full disk fails with ENOSPC.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

kernel=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/kernel" && pwd)
text=$kernel/capture-6.1-hz250.trace.xz # 70 KB
dat=$kernel/capture-6.1-hz250-softirq.trace.dat # 969 KB
missing=$PWD/no-such-dir

# piped FILE [ULIMIT_F] ARGS...: timersim ARGS... with FILE on a pipe for
# stdin, TMPDIR=$tmpdir, and files limited to ULIMIT_F KiB ("-": none).
piped() {
  local file=$1 limit=$2
  shift 2
  status=0
  out=$(
    trap '' XFSZ
    [[ $limit == - ]] || ulimit -f "$limit"
    cat "$file" | TMPDIR=$tmpdir "$timersim" "$@" 2>err
  ) || status=$?
  err=$(<err)
  last_command="cat $file | TMPDIR=$tmpdir timersim $*"
}

# expect_error LINE: exit 2, nothing on stdout, stderr exactly LINE.
expect_error() {
  expect_status 2
  expect_empty_stdout
  [[ $err == "$1" ]] || fail "expected the one line: $1"
}

tmpdir=$missing
piped "$text" - run --ftrace -
expect_error "timersim: <stdin>: no temporary file to read it again from in $missing (No such file or directory)"
# A pipe is kept for reading again before what it holds is known.
piped "$dat" - validate -
expect_error "timersim: <stdin>: no temporary file to read it again from in $missing (No such file or directory)"
status=0
out=$(TMPDIR=$missing "$timersim" import "$dat" -o out.trace 2>err) || status=$?
err=$(<err)
last_command="TMPDIR=$missing timersim import $dat -o out.trace"
expect_error "timersim: $dat: no temporary file to read it from in $missing (No such file or directory)"
[[ ! -e out.trace ]] || fail "out.trace written"

# Room for 16 KiB: the pipe's copy, and the trace.dat's, fill it.
mkdir tmp
tmpdir=$PWD/tmp
piped "$text" 16 run --ftrace - --design modern
expect_error "timersim: <stdin>: cannot write its temporary copy in $tmpdir (File too large)"
piped "$dat" 16 run --ftrace - --design modern
expect_error "timersim: <stdin>: cannot write its temporary copy in $tmpdir (File too large)"
# And with room, the same commands run.
piped "$text" - run --ftrace - --design modern
expect_status 0
piped "$dat" - run --ftrace - --design modern
expect_status 0
