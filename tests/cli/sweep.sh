# timersim sweep: a small grid run locally on 1 and 2 threads gives the
# same bytes; the same grid as GNU parallel jobs, merged, gives the local
# results directory byte for byte; a removed cell is the only one run again;
# bad grids, cells and merge inputs are one-line errors.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

grid=(--design classic,modern,wheel:rfc-2015 --workload tcp-retransmit,uniform --param connections=50,150
      --seed 1..2 --duration 2)

run sweep "${grid[@]}" -o one -j 1
expect_status 0
[[ $err == "timersim sweep: 24 cells, 0 already in one, 24 to run on 1 thread" ]] || fail "unexpected summary"
[[ $(find one/cells -name '*.json' | wc -l) -eq 24 ]] || fail "expected 24 cell files"
[[ $(wc -l <one/results.csv) -eq 25 ]] || fail "expected a header and 24 rows"
head -1 one/results.csv | grep -q '^id,design,hz,workload,seed,options,' || fail "results.csv header"
grep -q ',wheel:rfc-2015,250,uniform,2,--connections 150,' one/results.csv || fail "no rfc-2015 uniform seed 2 row"

run sweep "${grid[@]}" -o two -j 2
expect_status 0
diff -r one two >/dev/null || fail "--jobs 2 gives other bytes than --jobs 1"

# Resumable: only the removed cell runs again, to the same bytes.
victim=$(find two/cells -name '*.json' | sort | head -1)
rm -- "$victim"
run sweep "${grid[@]}" -o two -j 2
expect_status 0
[[ $err == "timersim sweep: 24 cells, 23 already in two, 1 to run on 1 thread" ]] || fail "resume ran more than the missing cell"
diff -r one two >/dev/null || fail "the resumed sweep differs"

# GNU parallel runs the emitted jobs unchanged; the merge is the local run.
run sweep "${grid[@]}" --emit-jobs jobs.txt
expect_status 0
[[ $(wc -l <jobs.txt) -eq 24 ]] || fail "expected 24 jobs"
if ! command -v parallel >/dev/null; then
  echo "GNU parallel is not installed (Debian package parallel, scripts/setup)"
  exit 1
fi
parallel --will-cite -j 2 <jobs.txt >cells.jsonl || fail "parallel failed"
run sweep --merge cells.jsonl -o merged
expect_status 0
diff -r one merged || fail "the merged results differ from the local run"
# Merging a results directory with the job output is the same again.
run sweep --merge one cells.jsonl -o merged2
expect_status 0
diff -r one merged2 >/dev/null || fail "merging a DIR and a FILE differs"

# A grid file gives the same cells as the options.
cat >grid.ini <<'INI'
# the grid of the options above
design = classic, modern, wheel:rfc-2015
workload = tcp-retransmit, uniform
param = connections=50,150
seed = 1..2
duration = 2
INI
run sweep --grid grid.ini -o fromfile -j 2
expect_status 0
diff -r one fromfile >/dev/null || fail "the grid file gives other results"

# Bad input: one line, exit 2, nothing written.
printf 'design = classic\ncolour = red\n' >bad.ini
run sweep --grid bad.ini -o bad
expect_usage_error "^timersim: bad.ini:2: colour: unknown key 'colour'" "try 'timersim sweep --help'"
[[ ! -e bad ]] || fail "a bad grid created its output directory"
# Every design of the registry is a sweep design, by name or alias (the cells
# run the design's queue: netty's deferred cancel leaves garbage, scheme1
# walks every timer each tick, so their rows differ from classic's).
run sweep --design classic,netty,unsorted-list,cog --duration 2 --param connections=100 -o every
expect_status 0
for d in classic netty scheme1 cog; do
  grep -q "^[0-9a-f]*,$d,250," every/results.csv || fail "no $d row in a sweep of every kind of design"
done
[[ $(cut -d, -f17- every/results.csv | sort -u | wc -l) -eq 5 ]] || fail "four designs gave the same costs"
run sweep --design classic,scheme3x -o bad
expect_usage_error "--design: expected classic, modern, modern-6.9, heap, scheme1, .*wheel:SPEC, got 'scheme3x'" "try 'timersim sweep --help'"

run sweep --design classic,wheel:nope -o bad
expect_usage_error "--design: wheel:nope: unknown preset" "try 'timersim sweep --help'"
run sweep --design classic --param connections=0 -o bad
expect_usage_error "cell '--design classic .*': --connections: must be" "try 'timersim sweep --help'"
run sweep --cell '--design classic --hz 250'
expect_usage_error "--cell: .* is not a line --emit-jobs writes" "try 'timersim sweep --help'"
echo '{"schema": "something else"}' >junk.jsonl
run sweep --merge junk.jsonl -o bad
expect_usage_error "^timersim: junk.jsonl:1: not a sweep cell" "try 'timersim sweep --help'"
sed 's/"fired": [0-9]*/"fired": 1/' one/cells/"$(basename -- "$victim")" >changed.jsonl
run sweep --merge cells.jsonl changed.jsonl -o bad
expect_usage_error "given twice with different results" "try 'timersim sweep --help'"

# --plot: one Pareto chart per workload, when matplotlib is there.
if python3 -c 'import matplotlib' 2>/dev/null; then
  run sweep --merge one -o plotted --plot
  expect_status 0
  [[ -s plotted/pareto-tcp-retransmit.png && -s plotted/pareto-uniform.png ]] || fail "no Pareto charts"
  diff one/results.csv plotted/results.csv >/dev/null || fail "plotting changed results.csv"
fi

# A cell cannot ask for help: that would print instead of running.
run sweep --design classic --set help -o bad
expect_usage_error "^timersim: --set: 'help' is not a run option of a cell" "try 'timersim sweep --help'"

# --plot is never dropped without a word: refused with --emit-jobs (nothing
# to plot there), and a binary without its plot script beside it says where
# it looked and how to build the script.
run sweep "${grid[@]}" --emit-jobs jobs-plot.txt --plot
expect_usage_error "^timersim: --plot: not with --emit-jobs" "try 'timersim sweep --help'"
[[ ! -e jobs-plot.txt ]] || fail "a refused --emit-jobs wrote its file"
mkdir alone
cp -- "$timersim" alone/timersim
status=0
out=$(alone/timersim sweep --merge one -o alone-merged --plot 2>alone.err) || status=$?
[[ $status -eq 0 ]] || fail "the merge failed (exit $status)"
grep -q "^timersim: --plot: timersim-plot-sweep is not next to timersim (.*alone); plots skipped (build it: ninja -C BUILDDIR sim/timersim-plot-sweep" alone.err ||
  fail "no line saying the plot was skipped and how to build it: $(cat alone.err)"
diff one/results.csv alone-merged/results.csv >/dev/null || fail "the merge without plots changed results.csv"
