# Every trace-reading command (run, compare, gen, step, import, validate)
# reads its input once, from any source: a plain file, xz, gzip or zstd
# (known by the bytes, not the name: every file here has a name that says
# nothing), standard input as '-', a FIFO, process substitution. Each gives
# byte-identical output to the plain file (the input's name aside). A missing
# or unreadable input is exit 2 with 'timersim: FILE: what'; an output that
# cannot be written is refused before the simulation starts; an event too late
# to simulate names its file and line.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

data=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data" && pwd)
# The runner starts each test in a fresh empty directory: names are relative.

# out_of CMD...: stdout, stderr and the exit status of timersim CMD..., and
# the file written to 'out' when -o out is given (then removed).
out_of() {
  local status=0
  rm -f out
  "$timersim" "$@" >stdout.txt 2>stderr.txt || status=$?
  cat stdout.txt stderr.txt
  echo "exit $status"
  if [[ -e out ]]; then
    cat out
    rm -f out
  fi
}

# check_same NAME CMD...: CMD with INPUT replaced by NAME gives $expected
# (what it gives on the plain file trace.a) once NAME is shown as trace.a.
# Names of the same length keep wrapped lines where they were.
check_same() {
  local name=$1 got
  shift
  got=$(out_of "${@//INPUT/$name}" | sed "s|${name//./\\.}|trace.a|g")
  [[ $got == "$expected" ]] || {
    diff <(echo "$expected") <(echo "$got") >diff.txt || true
    head -n 20 diff.txt
    echo "timersim ${*//INPUT/$name}: output differs from the plain file's"
    exit 1
  }
}

# every_source PLAIN XZ GZ ZST CMD...: CMD (with INPUT for the trace) from
# the plain file, each compression, standard input (plain and compressed),
# a FIFO and process substitution.
every_source() {
  cp -- "$1" trace.a
  cp -- "$2" trace.b
  cp -- "$3" trace.c
  cp -- "$4" trace.d
  shift 4
  unset expected
  expected=$(out_of "${@//INPUT/trace.a}")
  [[ $expected == *"exit 0"* || $expected == *"exit 1"* ]] || { echo "timersim $*: $expected"; exit 1; }
  check_same trace.b "$@"
  check_same trace.c "$@"
  check_same trace.d "$@"
  for f in trace.a trace.b trace.c trace.d; do
    got=$(out_of "${@//INPUT/-}" <"$f" | sed 's|<stdin>|trace.a|g')
    [[ $got == "$expected" ]] || { echo "timersim ${*//INPUT/-} < $f: output differs"; exit 1; }
  done
  rm -f trace.f
  mkfifo trace.f
  cat trace.c >trace.f &
  local writer=$!
  check_same trace.f "$@"
  wait "$writer" || { echo "timersim ${*//INPUT/trace.f}: the FIFO's writer failed"; exit 1; }
  # Process substitution: /dev/fd/N, another length: compared with runs of
  # spaces and line ends as one space.
  local args=()
  for a in "$@"; do args+=("${a//INPUT/PROCSUB}"); done
  local i
  for i in "${!args[@]}"; do
    [[ ${args[$i]} == *PROCSUB* ]] && break
  done
  got=$(out_of "${args[@]:0:$i}" <(cat trace.b) "${args[@]:$((i + 1))}" | sed -E 's|/dev/fd/[0-9]+|trace.a|g' |
    tr -s ' \n' ' ')
  [[ $got == "$(tr -s ' \n' ' ' <<<"$expected")" ]] || {
    echo "timersim ${*//INPUT/<(cat trace.b)}: output differs from the plain file's"
    exit 1
  }
}

# A recorded trace with callback blocks (cb=) on two CPUs, and the committed
# small ones; the compressed copies made by xz and gzip here, zstd committed.
"$timersim" gen --workload tcp-retransmit,socket-timeouts --connections 40 --duration 8 --cpus 2 -o rec.trace 2>/dev/null
grep -q ' cb=' rec.trace || { echo "the recorded trace has no cb= events"; exit 1; }
xz -c rec.trace >rec.xz
gzip -c rec.trace >rec.gz
xz -c "$data/step/retransmit.trace" >rto.xz
gzip -c "$data/step/retransmit.trace" >rto.gz
small=$data/kernel/small-6.1-hz250.txt
xz -c "$small" >small.xz
gzip -c "$small" >small.gz
capture_xz=$data/kernel/capture-6.1-hz250.trace.xz
xz -dc "$capture_xz" >capture.txt
gzip -c capture.txt >capture.gz

# zstd only for the committed fixtures (its tool is not among the packages).
every_source "$data/step/retransmit.trace" rto.xz rto.gz "$data/inputs/retransmit.trace.zst" \
  run --trace INPUT --format json
every_source "$data/step/retransmit.trace" rto.xz rto.gz "$data/inputs/retransmit.trace.zst" \
  compare --trace INPUT --jobs 2
every_source "$data/step/retransmit.trace" rto.xz rto.gz "$data/inputs/retransmit.trace.zst" \
  gen --trace INPUT --design classic -o out
every_source "$data/step/retransmit.trace" rto.xz rto.gz "$data/inputs/retransmit.trace.zst" \
  step --trace INPUT --from 290 --ticks 20 --design both
every_source "$small" small.xz small.gz "$data/inputs/small-6.1-hz250.txt.zst" \
  import INPUT -o out
every_source "$small" small.xz small.gz "$data/inputs/small-6.1-hz250.txt.zst" \
  validate INPUT --max-listed 5
every_source "$small" small.xz small.gz "$data/inputs/small-6.1-hz250.txt.zst" \
  run --ftrace INPUT --hz 250 --format json
# The recorded trace on two CPUs, and the real capture (zstd: the plain file
# again; its compressions are covered above).
every_source rec.trace rec.xz rec.gz rec.trace compare --trace INPUT --format json
every_source rec.trace rec.xz rec.gz rec.trace step --trace INPUT --ticks 10 --from 100
every_source capture.txt "$capture_xz" capture.gz capture.txt validate INPUT
every_source capture.txt "$capture_xz" capture.gz capture.txt import INPUT -o out
every_source capture.txt "$capture_xz" capture.gz capture.txt compare --ftrace INPUT --hz 250 --format csv

# A missing or unreadable input: exit 2, 'timersim: FILE: what', every command.
# A directory is a kernel trace's only if it holds an LTTng trace (tests/cli/lttng.sh).
for cmd in "run --trace" "compare --trace" "gen -o out --trace" "step --ticks 1 --trace" "run --ftrace" \
  "step --ticks 1 --ftrace" "import -o out" "validate"; do
  # shellcheck disable=SC2086
  run $cmd nosuch.trace
  expect_file_error '^timersim: nosuch\.trace: No such file or directory$'
  # shellcheck disable=SC2086
  run $cmd .
  if [[ $cmd == *--trace ]]; then
    expect_file_error '^timersim: \.: Is a directory$'
  else
    expect_file_error '^timersim: \.: a directory, not an LTTng trace \(no CTF metadata in it or below it\)$'
  fi
  [[ ! -e out ]] || fail "an output was left behind"
done

# Corrupt compressed data is the trace's error, at the line it broke in.
head -c 2000 rec.xz >cut.xz
run run --trace cut.xz
expect_status 2
[[ $err =~ ^timersim:\ cut\.xz:[0-9]+:\ read\ error:\ xz:\ unexpected\ end\ of\ the\ compressed\ data\ \(line\)$ ]] ||
  fail "not the one-line error at the broken line"

# An output that cannot be written is refused before the simulation: this
# trace's second event is on CPU 1, an error only the simulation finds with
# --cpus 1, so seeing the output's error proves nothing ran.
printf '# timersim-trace v1 hz=250\n0 arm a in=1j\n1000 arm b in=1j cpu=1\n' >cpu1.trace
run run --trace cpu1.trace --cpus 1
expect_status 2
[[ $err == "timersim: cpu1.trace:3: cpu 1 is not on the machine: it has 1 CPU (--cpus) (cpu)" ]] || fail "wrong error"
for cmd in "run -o" "compare -o" "compare --events" "gen -o"; do
  # shellcheck disable=SC2086
  run $cmd no/such/dir/out --trace cpu1.trace --cpus 1
  expect_file_error '^timersim: no/such/dir/out: cannot create file \(No such file or directory\)$'
done
run import "$small" -o no/such/dir/out
expect_file_error '^timersim: no/such/dir/out: cannot create file \(No such file or directory\)$'

# An event at 2^64-1 ns: the run to it cannot be simulated; the file and
# line are named (with --duration it is simply never reached).
printf '# timersim-trace v1 hz=250\n0 arm a in=1j\n18446744073709551615 arm b in=1j\n' >end.trace
for cmd in run compare "gen -o out"; do
  # shellcheck disable=SC2086
  run $cmd --trace end.trace
  expect_status 2
  [[ $err == "timersim: end.trace:3: time 18446744073709551615 ns is past the longest run the machine simulates (1e10 ticks at HZ=250); give --duration or --ticks (time)" ]] ||
    fail "not the one-line error naming the file and line"
  [[ ! -e out ]] || fail "an output was left behind"
done
run run --trace end.trace --duration 1
expect_status 0
