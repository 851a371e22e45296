# timersim levels and explain print the numbers of the reference digest.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

run levels --hz 1000 --design modern
expect_status 0
expect_stdout_line '^ +0 +0 +1 jiffy \(1 ms\) +0 \.\. 62 '
expect_stdout_line '^ +1 +64 +8 jiffies \(8 ms\) +63 \.\. 503 '
expect_stdout_line '^ +8 +512 +16777216 jiffies .* 132120576 \.\. 1056964607 '

run levels --hz 100 --design modern
expect_status 0
expect_stdout_line '^ +7 +448 .* 16515072 \.\. 132120575 '
grep -Eq '^ +8 ' <<<"$out" && fail "HZ=100 has 8 levels, not 9"

run levels --design classic --base-small
expect_status 0
expect_stdout_line '^ +tv1 +64 '
expect_stdout_line 'MAX_TVAL = 4194303 jiffies'

# reference §8.1: HZ=1000 TIME_WAIT lands on level 4, idx 262, bucket 4294729728.
run explain --hz 1000 --timeout 60s
expect_status 0
expect_stdout_line 'goes to level 4 '
expect_stdout_line 'idx = level offset 256 \+ .* = 262 '
expect_stdout_line 'clk reaches 4294729728: the timer fires 2432 jiffies'
# reference §8.3: default slack moves it to +128.
expect_stdout_line 'becomes 4294727424 \(\+128 jiffies'

# reference §8.2: tv3[1] > tv2[1] > tv1[0], fires at 16640.
run explain --now 0 --expires 16640 --design classic --slack off
expect_status 0
expect_stdout_line '-> tv3\[1\]\.$'
expect_stdout_line '^  At jiffy 16384 .* -> tv2\[1\]\.$'
expect_stdout_line 'timer_jiffies == 16640, after 2 cascades: exactly on time'

run explain --hz 1000 --timeout 36
expect_status 0
expect_stdout_line 'goes to level 0 '
expect_stdout_line 'fires 1 jiffy \(1 ms\) late'

run explain --timeout 5parsecs
expect_usage_error '--timeout: .*unknown unit' "try 'timersim explain --help'"
run explain --timeout 5 --expires 7
expect_usage_error 'exactly one of --timeout and --expires' "try 'timersim explain --help'"
run explain --expires banana
expect_usage_error '--expires' "try 'timersim explain --help'"

# A timeout of centuries laps the classic tv5 hundreds of millions of times:
# the story compresses the laps instead of listing each (and stays fast).
run explain --timeout 99999999999d --design classic
expect_status 0
expect_stdout_line 'then laps tv5 [0-9]+ more times'
[[ $(wc -l <<<"$out") -lt 12 ]] || fail "lapping timer explained in too many lines"

# --clk: the index comes from the wheel's clock, not jiffies. Right after a
# softirq both clocks are jiffies + 1, which moves timers across level edges.
run explain --hz 1000 --now 1000 --expires 1063 --design modern
expect_stdout_line 'goes to level 1 '
run explain --hz 1000 --now 1000 --clk 1001 --expires 1063 --design modern
expect_status 0
expect_stdout_line '^  base->clk is 1001 \(--clk\), one ahead of jiffies'
expect_stdout_line '^  delta = expires - clk = 62 jiffies'
expect_stdout_line 'goes to level 0 '
run explain --hz 1000 --now 1000 --expires 1256 --design classic --slack off
expect_stdout_line '-> tv2\['
run explain --hz 1000 --now 1000 --clk 1001 --expires 1256 --design classic --slack off
expect_status 0
expect_stdout_line '^  At timer_jiffies 1001: d = expires - timer_jiffies = 255 .* -> tv1\[232\]\.$'
run explain --clk soon --timeout 5
expect_usage_error '--clk' "try 'timersim explain --help'"

# modern-6.9: modern's levels on each of three bases; explain names the
# base the timer's flags pick (6.9 get_timer_cpu_base()) and places it as
# modern does.
run levels --design modern-6.9
expect_status 0
expect_stdout_line '^  BASE_LOCAL +pinned timers'
expect_stdout_line '^  BASE_GLOBAL +the others'
expect_stdout_line '^  BASE_DEF +deferrable timers'
expect_stdout_line '^ +3 +192 +512 jiffies \(2\.05 s\) +4032 \.\. 32255 '
run explain --timeout 5000 --design modern
expect_status 0
modern_idx=$(grep -E '^  Bucket index idx' <<<"$out")
[[ -n $modern_idx ]] || fail "modern's explain names no bucket"
for flags in "" --pinned --deferrable "--pinned --deferrable"; do
  # shellcheck disable=SC2086 # flags: zero, one or two words
  run explain --timeout 5000 --design modern-6.9 $flags
  expect_status 0
  case $flags in
    "") expect_stdout_line "puts it on the arming CPU's BASE_GLOBAL" ;;
    --pinned) expect_stdout_line "puts it on the arming CPU's BASE_LOCAL" ;;
    *) expect_stdout_line "puts it on the arming CPU's BASE_DEF" ;;
  esac
  grep -qxF -- "$modern_idx" <<<"$out" || fail "modern-6.9 places the timer elsewhere than modern ($modern_idx)"
done
run explain --timeout 5000 --design modern --pinned
expect_usage_error '^timersim: --pinned: only modern-6.9 chooses a timer base by the timer.s flags, not --design modern$' "try 'timersim explain --help'"
run explain --timeout 5000 --deferrable
expect_usage_error '^timersim: --deferrable: only modern-6.9 ' "try 'timersim explain --help'"
