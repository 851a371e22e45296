# The seeds' designs (schemes 1, 2, 4, 5, 6, netty, cog) on the command line:
# selectable in run, compare, step, explain and levels, by name and alias,
# with their Varghese-Lauck costs and held garbage in the reports.
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

for d in scheme1 scheme2 scheme4 scheme5 scheme6 netty cog; do
  run run --design "$d" --duration 4 --connections 200
  expect_status 0
  expect_stdout_line "^timersim run: $d design"
  expect_stdout_line '^  fired early +0$'
  expect_stdout_line '^Varghese-Lauck costs'
  expect_stdout_line '^  PER_TICK_BOOKKEEPING +[0-9]+'
  run run --design "$d" --duration 4 --connections 200 --format json
  expect_status 0
  expect_stdout_line '"paper_costs": \{"start": [0-9]+, "stop": [0-9]+, "per_tick": [0-9]+, "expiry": [0-9]+\}'
done

# Only netty and cog hold cancelled entries.
run run --design cog --duration 4 --connections 200
expect_stdout_line '^Cancelled entries still held \(tombstones'
run run --design netty --duration 4 --connections 200 --format json
expect_stdout_line '"garbage": \{"peak": [0-9]+, "at_end": [0-9]+, "entry_bytes": [0-9]+\}'
run run --design scheme6 --duration 4 --connections 200
grep -q 'Cancelled entries' <<<"$out" && fail "scheme6 holds no cancelled entries"

# Aliases name the same design; the kernel designs report no paper costs.
run run --design hashed-unsorted --duration 2 --connections 50
expect_stdout_line '^timersim run: scheme6 design'
run run --design modern --duration 2 --connections 50
grep -q 'Varghese-Lauck' <<<"$out" && fail "modern counts no paper costs"

# compare: all designs, the seeds' rows only when one of them is compared.
run compare --design all --duration 4 --connections 200
expect_status 0
expect_stdout_line '^ +classic +modern +modern-6.9 +heap +scheme1 +scheme2 +scheme4 +scheme5 +scheme6 +netty +cog$'
expect_stdout_line '^  START_TIMER +- +- +- +- +[0-9,]+'
run compare --design classic,modern,heap --duration 4 --connections 200
grep -q 'Varghese-Lauck' <<<"$out" && fail "the default designs show no paper-cost rows"
run compare --design netty,cog --duration 4 --connections 200 --format csv
expect_stdout_line '^cog,garbage_peak,[0-9]+$'
expect_stdout_line '^netty,paper_per_tick,[0-9]+$'
run compare --design scheme7 --duration 2
expect_usage_error "unknown design 'scheme7'" "try 'timersim compare --help'"

# step draws their rings and lists.
run step --timeouts 36,300,20000 --ticks 1 --hz 1000 --design cog
expect_status 0
expect_stdout_line '^  armed #2 \(20000\) for tick 20000: ring2\[59\], due at tick 20000$'
run step --timeouts 600 --ticks 2 --design netty
expect_stdout_line '^  queue: 1 entry$'
expect_stdout_line '^  wheel\|'
run step --timeouts 36 --ticks 1 --from 35 --design scheme2
expect_stdout_line '^  fired #0 \(36\): asked for tick 36, exactly on time$'
run step --timeouts 36 --ticks 1 --design scheme5 --format json
expect_stdout_line '^\{"schema":"timersim.step.v1","design":"scheme5"'

# explain and levels where they apply; a clear refusal, exit 2, where not.
run explain --design scheme6 --timeout 5000 --hz 250 --now 0
expect_status 0
expect_stdout_line 'slot\[136\]'
expect_stdout_line 'with 19 rounds'
expect_stdout_line 'exactly on time'
run explain --design cog --timeout 5000 --now 0
expect_stdout_line 'ring2\[1\]'
# Its way down (tests/wheel/test_cog_explain.cpp checks every hop against the
# queue): 5000 = 1*4096 + 14*64 + 8, so ring 2's slot 1 cascades at 4096,
# ring 1's slot 14 at 4992, and ring 0 drains slot 8 on tick 5000.
expect_stdout_line '^  At tick 4096 \(a multiple of 4096\) ring2\[1\] cascades: delta 904 -> ring1\[14\]\.$'
expect_stdout_line '^  At tick 4992 \(a multiple of 64\) ring1\[14\] cascades: delta 8 -> ring0\[8\]\.$'
expect_stdout_line '^  It fires on tick 5000 \(ring0\[8\] drains\), after 2 cascades: exactly on time\.$'
run explain --design scheme1 --timeout 5
expect_usage_error 'explain does not apply to scheme1' "try 'timersim explain --help'"
run levels --design cog
expect_status 0
expect_stdout_line '^   2  4096 jiffies'
run levels --design scheme2
expect_usage_error 'levels does not apply to scheme2' "try 'timersim levels --help'"
