# The configurable wheel on the command line: the presets of the kernel
# wheels give the kernel wheels' whole run report (only the design's name
# differs), levels and explain describe any geometry with the numbers of its
# sources, and a bad spec is one usage line naming --design.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

# Same machine, same workload: the same JSON but for "design" and the
# queue's bytes per timer (the presets keep their buckets in their own data
# structure: the same timers in the same buckets, another footprint).
same_but_memory() { sed -E 's/"bytes_per_timer": [0-9]+/"bytes_per_timer": N/g' <<<"$1" | grep -v '"design"'; }
for d in modern classic; do
  for args in "--duration 10 --nohz --cpus 2" "--duration 10 --workload connection-churn --connections 200 --max-expiries-per-softirq 3"; do
    # shellcheck disable=SC2086
    run run --design "$d" $args --format json
    expect_status 0
    kernel=$out
    # shellcheck disable=SC2086
    run run --design "wheel:$d" $args --format json
    expect_status 0
    expect_stdout_line "^  \"design\": \"wheel:$d\",$"
    [[ $(diff <(same_but_memory "$kernel") <(same_but_memory "$out")) == "" ]] ||
      fail "wheel:$d $args differs from $d beyond the design's name"
  done
done

# LWN 646950: in the 2015 draft 36 jiffies go to the next eight-jiffy slot, 40.
run explain --now 0 --expires 36 --design wheel:rfc-2015
expect_status 0
expect_stdout_line 'level 1 slot 5 '
expect_stdout_line 'fires at jiffy 40, never moving: 4 jiffies'
# The digest's §8.2 classic example on the classic preset: 2 cascades, exact.
run explain --now 0 --expires 16640 --design wheel:classic
expect_status 0
expect_stdout_line '^  At jiffy 16384 that slot is cascaded: d = 256; .* level 1 slot 1 '
expect_stdout_line 'fires at jiffy 16640, after 2 cascades: exactly on time'
# Rounding down in place fires early, and says so.
run explain --now 0 --expires 100 --design wheel:modern:round=down
expect_status 0
expect_stdout_line 'fires at jiffy 96, never moving: 4 jiffies .* EARLY'

# Level tables: the modern preset restates 6.1's LVL_START values; George
# Spelvin's geometry has 288 lists covering 21 bits.
run levels --design wheel:modern --hz 1000
expect_status 0
expect_stdout_line '^ +1 +64 +64 +8 jiffies \(8 ms\) +63 \.\. 503 '
expect_stdout_line '^ +8 +512 +64 .* 132120576 \.\. 1056964607 '
run levels --design wheel:spelvin-2016
expect_status 0
expect_stdout_line '9 levels, 288 buckets'
expect_stdout_line '^ +8 +256 +32 +65536 jiffies'
run levels --design wheel:bits=8x3:mode=cascade
expect_status 0
expect_stdout_line 'MAX_TVAL = 16777215 jiffies'

for bad in wheel:nope wheel:bits=6x4:shift=6 wheel:classic:shift=3 wheel:bits=9x3 wheel:modern:colour=red; do
  run run --design "$bad" --duration 1
  expect_usage_error "^timersim: --design: $bad: " "try 'timersim run --help'"
  run levels --design "$bad"
  expect_usage_error "^timersim: --design: $bad: " "try 'timersim levels --help'"
done
run run --help
expect_status 0
expect_stdout_line '^  rfc-2015 +mode=in-place:round=up:bits=5x8:shift=3$'
