# timersim compare --plot DIR: runs timersim-plot (scripts/plot, found next to
# the binary) on the report's JSON and leaves PNG and SVG plots, the data
# behind each (CSV, checked against the report and deterministic) and the
# JSON in DIR; without matplotlib or python3 the comparison still succeeds and one
# line says what to install.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

small=(--connections 300 --duration 20)
plots=(error_histogram error_survival softirq_cost)

dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

[[ -x $(dirname -- "$timersim")/timersim-plot ]] || {
  echo "no timersim-plot next to $timersim (build the whole tree: ninja -C <build>)"
  exit 1
}

# A python3 that cannot see matplotlib: Debian's python3 without site
# packages. TIMERSIM_PLOT_REEXEC=1 keeps the script from retrying under
# /usr/bin/python3.
mkdir "$dir/bare" "$dir/empty"
real_python=$(command -v python3)
printf '#!/bin/sh\nexec %s -S "$@"\n' "$real_python" >"$dir/bare/python3"
chmod +x "$dir/bare/python3"

# run_with_path PATH ARGS...: like run, with PATH set for timersim only (run's
# own mktemp and rm need the real one).
run_with_path() {
  local path=$1
  shift
  status=0
  PATH=$path "$timersim" "$@" >"$dir/stdout" 2>"$dir/stderr" || status=$?
  out=$(<"$dir/stdout")
  err=$(<"$dir/stderr")
  last_command="PATH=$path timersim $*"
}

have_matplotlib=false
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null && "$python" -c 'import matplotlib' 2>/dev/null; then
    have_matplotlib=true
  fi
done

if $have_matplotlib; then
  run compare "${small[@]}" --plot "$dir/plots"
  expect_status 0
  expect_stdout_line '^Verdict: '
  [[ $err == *"wrote error_histogram.png/.svg/.csv, error_survival.png/.svg/.csv, softirq_cost.png/.svg/.csv"* ]] ||
    fail "timersim-plot did not say what it wrote"
  [[ -s $dir/plots/compare.json ]] || fail "no compare.json next to the plots"
  python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["schema"] == "timersim.compare.v2"' \
    "$dir/plots/compare.json" || fail "compare.json is not the JSON report"
  for plot in "${plots[@]}"; do
    [[ $(head -c 8 "$dir/plots/$plot.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
      fail "$plot.png is not a PNG"
    [[ $(stat -c %s "$dir/plots/$plot.png") -gt 10000 ]] || fail "$plot.png is nearly empty"
    grep -q '<svg' "$dir/plots/$plot.svg" || fail "$plot.svg is not an SVG"
    [[ $(wc -l <"$dir/plots/$plot.csv") -gt 1 ]] || fail "$plot.csv has no data"
  done
  # The data behind the plots is the report's: the histogram's counts add
  # up to each design's fired timers, the survival curve runs from 100 % to
  # 0 at the max error, the softirq windows hold every run and cascade move.
  python3 - "$dir/plots" <<'PY' || fail "the plots' data does not match the report"
import csv, json, os, sys
d = sys.argv[1]
report = {x["name"]: x for x in json.load(open(os.path.join(d, "compare.json")))["designs"]}
hist = list(csv.DictReader(open(os.path.join(d, "error_histogram.csv"))))
for name, x in report.items():
    assert sum(int(r[name]) for r in hist) == x["timers"]["fired"], name
surv = list(csv.DictReader(open(os.path.join(d, "error_survival.csv"))))
for name, x in report.items():
    mine = [r for r in surv if r["design"] == name]
    assert float(mine[0]["share_later"]) == 1.0 and float(mine[-1]["share_later"]) == 0.0, name
    assert int(mine[-1]["error_jiffies"]) == x["error_jiffies"]["max"], name
    shares = [float(r["share_later"]) for r in mine]
    assert shares == sorted(shares, reverse=True), name
cost = list(csv.DictReader(open(os.path.join(d, "softirq_cost.csv"))))
for name, x in report.items():
    mine = [r for r in cost if r["design"] == name]
    assert sum(int(r["runs"]) for r in mine) == x["softirq"]["runs"], name
    assert sum(int(r["cascade_moves"]) for r in mine) == x["cascades"]["moves"], name
    assert max(int(r["max_ns"]) for r in mine) == x["softirq"]["max_stall_ns"], name
    assert all(int(r["p50_ns"]) <= int(r["p99_ns"]) <= int(r["max_ns"]) for r in mine), name
PY
  # Drawn again from the same report: the same data files, byte for byte.
  "$(dirname -- "$timersim")/timersim-plot" --out "$dir/again" "$dir/plots/compare.json" 2>/dev/null ||
    fail "timersim-plot failed on its own compare.json"
  for plot in "${plots[@]}"; do
    cmp -s "$dir/plots/$plot.csv" "$dir/again/$plot.csv" || fail "$plot.csv differs between two drawings"
  done
else
  echo "SKIP: matplotlib is not installed (apt-get install python3-matplotlib); plot files not checked"
fi

# No matplotlib: the report is still printed, exit 0, one line on stderr
# naming the package, no plots.
export TIMERSIM_PLOT_REEXEC=1
run_with_path "$dir/bare:$PATH" compare "${small[@]}" --plot "$dir/bare-plots"
unset TIMERSIM_PLOT_REEXEC
expect_status 0
expect_stdout_line '^Verdict: '
[[ $err == *"apt-get install python3-matplotlib"* && $(wc -l <<<"$err") -eq 1 ]] ||
  fail "expected one line saying how to install matplotlib"
[[ ! -e $dir/bare-plots/error_survival.png ]] || fail "plots drawn without matplotlib?"

# No python3 at all: the same.
run_with_path "$dir/empty" compare "${small[@]}" --plot "$dir/no-python"
expect_status 0
[[ $err == *"python3 is not installed"*"apt-get install python3-matplotlib"* && $(wc -l <<<"$err") -eq 1 ]] ||
  fail "expected one line saying python3 is missing"

# The script on its own refuses what is not a compare report.
echo '{"schema": "timersim.run.v1"}' >"$dir/run.json"
if $have_matplotlib; then
  status=0
  err=$("$(dirname -- "$timersim")/timersim-plot" --out "$dir/x" "$dir/run.json" 2>&1) || status=$?
  [[ $status -eq 2 && $err == *"not a timersim compare report"* ]] || {
    echo "timersim-plot accepted a run report (exit $status): $err"
    exit 1
  }
fi

# A plot directory that cannot be made fails before the simulation runs.
touch "$dir/a-file"
run compare "${small[@]}" --plot "$dir/a-file/plots"
expect_status 1
expect_empty_stdout
[[ $err == "timersim: --plot: cannot create directory $dir/a-file/plots"* ]] || fail "error does not name the plot directory"
