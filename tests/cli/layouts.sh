# Every layout of ONE real capture (tests/data/kernel/capture-6.1-hz250-softirq.*:
# /sys/kernel/tracing/trace text, trace-cmd's trace.dat of the same ring
# buffer, `trace-cmd report`, `trace-cmd report -l`, and the text in
# `perf script`'s layout) imports with `timersim import` to the same trace,
# byte for byte but for the input's name in the comment line: each plain,
# compressed with xz, gzip and zstd (files named so nothing gives the
# compression or layout away), and through a pipe ('-'). HZ is never given:
# the text has '# hz=250', the others show it in their jiffies.
#
# The two report layouts carry libtraceevent 1.7.1's misprinted timer_start
# flags (flags=D|P|I on every line, tests/data/kernel/README.md): they import
# to the same trace as each other, and to the text's once every flags= is
# dropped, and every arm and modify there is deferrable,pinned,irqsafe.
#
# A trace.dat that is truncated or corrupt is one line and exit 2; validate,
# run --ftrace and compare --ftrace say the same of the trace.dat as of the
# text.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

kernel=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../data/kernel" && pwd)
base=$kernel/capture-6.1-hz250-softirq
# The runner starts each test in a fresh empty directory: names are relative.

# layout NAME: the plain bytes of that layout, in layout.NAME.
xz -dc "$base.trace.xz" >layout.text
cp "$base.trace.dat" layout.dat
xz -dc "$base.trace-cmd.txt.xz" >layout.report
xz -dc "$base.trace-cmd-l.txt.xz" >layout.report-l
xz -dc "$base.perf-script.txt.xz" >layout.perf

# The trace.dat really is one: its magic, and not text.
[[ $(head -c 10 layout.dat | od -An -c | tr -s ' ') == " 027 \b D t r a c i n g" ]] ||
  { echo "layout.dat does not start with trace-cmd's magic"; exit 1; }

# imported FILE: the trace `timersim import FILE` writes, with the input's
# name in the comment line replaced by INPUT. Any failure is the test's.
imported() {
  local input=$1 name
  run import "$input" -o imported.trace
  expect_status 0
  name=$input
  [[ $input == - ]] && name='<stdin>'
  sed "2s|^# imported from ${name//./\\.} by timersim import\$|# imported from INPUT by timersim import|" imported.trace
}

# Each layout in every form: plain, xz, gzip, zstd, and piped (plain and xz).
for layout in text dat report report-l perf; do
  plain=layout.$layout
  xz -c "$plain" >"c1-$layout"
  gzip -c "$plain" >"c2-$layout"
  zstd -q -c "$plain" >"c3-$layout"
  imported "$plain" >"want-$layout"
  grep -Eq '^[0-9]+ arm ' "want-$layout" || { echo "$plain: no arm events imported"; exit 1; }
  for form in "c1-$layout" "c2-$layout" "c3-$layout"; do
    imported "$form" >got
    cmp -s "want-$layout" got || { echo "$form (compressed $layout) imports differently from $plain"; diff "want-$layout" got | head; exit 1; }
  done
  imported - <"$plain" >got
  cmp -s "want-$layout" got || { echo "$plain through a pipe imports differently"; exit 1; }
  imported - <"c1-$layout" >got
  cmp -s "want-$layout" got || { echo "xz $plain through a pipe imports differently"; exit 1; }
done

# The same trace from the text, the trace.dat and the perf script layout.
for layout in dat perf; do
  cmp -s want-text "want-$layout" || { echo "$layout imports differently from the text"; diff want-text "want-$layout" | head; exit 1; }
done
# The two report layouts: the same as each other; the text's without flags=.
cmp -s want-report want-report-l || { echo "report and report -l import differently"; exit 1; }
no_flags() { sed -E 's/ flags=[a-z,]+//' "$1"; }
cmp -s <(no_flags want-text) <(no_flags want-report) ||
  { echo "report imports differently from the text beyond flags="; diff <(no_flags want-text) <(no_flags want-report) | head; exit 1; }
arms=$(grep -Ec '^[0-9]+ (arm|modify) ' want-report)
garbled=$(grep -Ec '^[0-9]+ (arm|modify) .* flags=deferrable,pinned,irqsafe ' want-report)
[[ $arms -gt 0 && $arms == "$garbled" ]] || { echo "report: $garbled of $arms arms/modifies show libtraceevent's D|P|I"; exit 1; }
# import says so: every start D|P|I is libtraceevent's misprint (not the
# text's, the trace.dat's or the perf layout's, which have real flags).
for layout in report report-l; do
  run import "layout.$layout" -o imported.trace
  expect_stdout_line '^  warning: every timer_start \(856\) has flags D\|P\|I, as libtraceevent 1\.7 .* import the trace\.dat'
done
for layout in text dat perf; do
  run import "layout.$layout" -o imported.trace
  ! grep -q 'D|P|I' <<<"$out" || { echo "layout.$layout: a flags warning on real flags"; exit 1; }
done
# ... while the text (and the trace.dat) have timers without any flag.
grep -Eq '^[0-9]+ arm [^ ]+ at=[0-9]+ cpu=' want-dat || { echo "trace.dat: no arm without flags"; exit 1; }

# The import summary counts the same events and skips the same others.
run import layout.dat -o imported.trace
dat_summary=$(sed 's/layout\.dat/INPUT/' <<<"$out")
run import layout.text -o imported.trace
text_summary=$(sed 's/layout\.text/INPUT/' <<<"$out")
[[ $dat_summary == "$text_summary" ]] || { echo "import summaries differ:"; diff <(echo "$text_summary") <(echo "$dat_summary"); exit 1; }
grep -q 'softirq_entry 3098, softirq_exit 3098, tracing_mark_write 2' <<<"$dat_summary" ||
  { echo "the trace.dat's summary does not count the softirq events and markers: $dat_summary"; exit 1; }

# validate: the same checks and agreement on the trace.dat as on the text
# (line numbers differ: the text has its header).
checks() { grep -E '^(idx|expiry|disagreements|agreement)' <<<"$1"; }
run validate layout.text
expect_status 0
text_checks=$(checks "$out")
run validate layout.dat
expect_status 0
expect_stdout_line '^layout\.dat: 3225 timer events, 281 timers, 2 CPUs, hz=250 \(from the trace.s jiffies\), kernel 5\.2 to 6\.7 \(from its events: .*\); workload starts'
[[ $(checks "$out") == "$text_checks" ]] || { echo "validate differs:"; diff <(echo "$text_checks") <(checks "$out"); exit 1; }
grep -q '^agreement: idx 856/856, expiry 423/423' <<<"$text_checks" || { echo "validate on the text: $text_checks"; exit 1; }

# run and compare --ftrace: the same report (HZ and kernel given, so their
# sources are too: the text's header names them, the trace.dat has none).
for command in run compare; do
  run "$command" --ftrace layout.text --hz 250 --kernel 6.1
  expect_status 0
  text_report=$(sed 's/layout\.text/INPUT/g' <<<"$out")
  run "$command" --ftrace layout.dat --hz 250 --kernel 6.1
  expect_status 0
  [[ $(sed 's/layout\.dat/INPUT/g' <<<"$out") == "$text_report" ]] ||
    { echo "$command --ftrace: the trace.dat's report differs from the text's"; exit 1; }
done

# A truncated trace.dat, at a few places: one line, exit 2, no output file.
# (libtracecmd does not notice a cut in the payload of the file's last
# option, its final ~60 bytes here: every event is still read then.)
size=$(stat -c %s layout.dat)
for cut in 10 100 4096 $((size / 2)) $((size - 4096)) $((size - 200)); do
  head -c "$cut" layout.dat >truncated
  rm -f never.trace
  run import truncated -o never.trace
  expect_file_error '^timersim: truncated: a trace\.dat \(trace-cmd\) that cannot be read: '
  [[ ! -e never.trace ]] || { echo "import of a truncated trace.dat left never.trace"; exit 1; }
  run validate truncated
  expect_file_error '^timersim: truncated: a trace\.dat \(trace-cmd\) that cannot be read: '
done
# ... compressed and through a pipe.
head -c $((size / 2)) layout.dat | xz -c >truncated.xz
run import - -o never.trace <truncated.xz
expect_file_error '^timersim: <stdin>: a trace\.dat \(trace-cmd\) that cannot be read: '
# A version 6 file (uncompressed, its CPU data mmapped) cut inside its data:
# libtracecmd 1.3.1 crashes on it, in the child that reads it.
if trace-cmd convert -i layout.dat -o v6.dat --file-version 6 --compression none >/dev/null 2>&1; then
  imported v6.dat >got
  cmp -s want-dat got || { echo "the version 6 trace.dat imports differently"; exit 1; }
  v6=$(stat -c %s v6.dat)
  head -c $((v6 - 1000)) v6.dat >truncated
  run import truncated -o never.trace
  expect_file_error '^timersim: truncated: a trace\.dat \(trace-cmd\) that cannot be read: '
fi
# The magic and then garbage.
{ head -c 10 layout.dat; head -c 5000 /dev/zero | tr '\0' 'x'; } >corrupt
run import corrupt -o never.trace
expect_file_error '^timersim: corrupt: a trace\.dat \(trace-cmd\) that cannot be read: '
