// ModernWheel (Linux 6.1 non-cascading wheel): the test vectors of the
// reference digest §8.1 (computed independently of this code) and the 6.1
// rules of §3, each checked on a real wheel.
#include "tests/wheel/modern_wheel_helpers.hpp"
#include "wheel/kernel/modern_levels.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

using namespace timersim;
using namespace timersim::test;

namespace {
// One row of the §8.1 table.
struct Row {
  Jiffies clk;
  Jiffies expires;
  unsigned depth;
  unsigned level;
  unsigned idx;
  Jiffies bucket_expiry;
};

// §8.1, copied from the reference (the two 32-bit-wrap rows are below).
constexpr Row kRows[] = {
    {0, 0, 9, 0, 1, 1},
    {0, 1, 9, 0, 2, 2},
    {0, 62, 9, 0, 63, 63},
    {0, 63, 9, 1, 72, 64},
    {0, 64, 9, 1, 73, 72},
    {0, 503, 9, 1, 127, 504},
    {0, 504, 9, 2, 136, 512},
    {0, 4031, 9, 2, 191, 4032},
    {0, 4032, 9, 3, 200, 4096},
    {0, 32255, 9, 3, 255, 32256},
    {0, 32256, 9, 4, 264, 32768},
    {0, 258047, 9, 4, 319, 258048},
    {0, 258048, 9, 5, 328, 262144},
    {0, 2064383, 9, 5, 383, 2064384},
    {0, 2064384, 9, 6, 392, 2097152},
    {0, 16515071, 9, 6, 447, 16515072},
    {0, 16515072, 9, 7, 456, 16777216},
    {0, 132120575, 9, 7, 511, 132120576},
    {0, 132120576, 9, 8, 520, 134217728},
    {0, 1056964607, 9, 8, 575, 1056964608},
    {0, 1056964608, 9, 8, 575, 1056964608},
    {0, 1099511627776, 9, 8, 575, 1056964608},
    {1000, 999, 9, 0, 40, 1000},
    {1000, 900, 9, 0, 40, 1000},
    {1000, 1000, 9, 0, 41, 1001},
    {1000, 1036, 9, 0, 13, 1037},
    {1000, 1063, 9, 1, 69, 1064},
    {1001, 1064, 9, 1, 70, 1072},
    {1005, 1068, 9, 1, 70, 1072},
    {7, 70, 9, 1, 73, 72},
    {4294667296, 4294667496, 9, 1, 94, 4294667504},
    {4294667299, 4294667499, 9, 1, 94, 4294667504},
    {4294667296, 4294667336, 9, 0, 9, 4294667337},
    {4294667296, 4294668296, 9, 2, 129, 4294668352},
    {4294667296, 4294727296, 9, 4, 262, 4294729728},
    {4294667296, 4301867296, 9, 6, 411, 4302045184},
    {4294892296, 4294892346, 9, 0, 59, 4294892347},
    {4294892296, 4294892546, 9, 1, 65, 4294892552},
    {4294892296, 4294907296, 9, 3, 203, 4294907392},
    {4294892296, 4296692296, 9, 5, 373, 4296704000},
    {4294892296, 4294922296, 9, 3, 233, 4294922752},
    {0, 16515072, 8, 7, 456, 16777216},
    {0, 132120575, 8, 7, 511, 132120576},
    {0, 132120576, 8, 7, 511, 132120576},
};

// §8.1's last two rows use 32-bit arithmetic (clk 2^32-16 / 2^32-256). The
// same low bits one wrap higher: clk 2^64-16 / 2^64-256.
constexpr Row kWrapRows[] = {
    {kTop - 15, 16, 9, 0, 17, 17},
    {kTop - 255, 256, 9, 2, 133, 320},
};

} // namespace

TEST_CASE("modern: depth by HZ") {
  CHECK(modern::depth_for_hz(100) == 8);
  CHECK(modern::depth_for_hz(250) == 9);
  CHECK(modern::depth_for_hz(300) == 9);
  CHECK(modern::depth_for_hz(1000) == 9);
  for (unsigned hz : {100u, 250u, 300u, 1000u}) {
    CAPTURE(hz);
    CHECK(ModernWheel(config(hz)).depth() == (hz == 100 ? 8u : 9u));
    // Jiffies start at INITIAL_JIFFIES (reference: 2^32 - 300*HZ).
    CHECK(ModernWheel(config(hz)).jiffies() == (Jiffies{1} << 32) - 300 * Jiffies{hz});
  }
  CHECK(modern::timeout_cutoff(8) == 132120576);
  CHECK(modern::timeout_max(8) == 130023424);
  CHECK(modern::timeout_cutoff(9) == 1056964608);
  CHECK(modern::timeout_max(9) == 1040187392);
}

TEST_CASE("modern: §8.1 vectors through calc_wheel_index") {
  for (const Row& r : kRows) {
    CAPTURE(r.clk);
    CAPTURE(r.expires);
    CAPTURE(r.depth);
    const modern::WheelIndex wi = modern::calc_wheel_index(r.expires, r.clk, r.depth);
    CHECK(wi.level == r.level);
    CHECK(wi.idx == r.idx);
    CHECK(wi.bucket_expiry == r.bucket_expiry);
    CHECK(wi.past == time_before(r.expires, r.clk));
    CHECK(wi.clamped == (r.expires - r.clk >= modern::timeout_cutoff(r.depth) && !wi.past));
  }
}

// calc_wheel_index() picks the level in closed form; the kernel walks the
// bounds one after the other. Both must agree at and around every bound, at
// both depths, and on a sweep of the whole range.
TEST_CASE("modern: the closed-form level equals the kernel's chain of bounds") {
  for (unsigned depth : {8u, 9u}) {
    CAPTURE(depth);
    auto chain = [depth](Jiffies delta) {
      unsigned level = 0;
      while (level + 1 < depth && delta >= modern::level_start(level + 1)) ++level;
      return level;
    };
    auto check = [&](Jiffies delta) {
      CAPTURE(delta);
      const Jiffies clk = 1000;
      const modern::WheelIndex wi = modern::calc_wheel_index(clk + delta, clk, depth);
      CHECK(wi.level == chain(delta));
      CHECK(wi.idx == modern::place_at_level(clk + delta, chain(delta)).idx);
      CHECK_FALSE(wi.clamped);
      CHECK_FALSE(wi.past);
    };
    const Jiffies cutoff = modern::timeout_cutoff(depth);
    for (unsigned l = 1; l <= depth; ++l)
      for (Jiffies d = modern::level_start(l) - 64; d <= modern::level_start(l) + 64; ++d)
        if (d < cutoff) check(d);
    for (Jiffies d = 0; d < cutoff; d += 4099) check(d);
  }
}

TEST_CASE("modern: §8.1 vectors through a real wheel (placement, then the jiffy it fires at)") {
  for (const Row& r : kRows) {
    for (unsigned hz : r.depth == 8 ? std::vector<unsigned>{100} : std::vector<unsigned>{250, 1000}) {
      CAPTURE(r.clk);
      CAPTURE(r.expires);
      CAPTURE(hz);
      ModernWheel q = wheel_at(r.clk, hz);
      const TimerId t = q.create();
      CHECK(q.arm(t, r.expires) == ArmOutcome::queued);
      const Placement p = q.placement(t);
      CHECK(p.pending);
      CHECK_FALSE(p.deferrable_base);
      CHECK(p.level == r.level);
      CHECK(p.slot == r.idx);
      CHECK(p.expires == r.expires);
      CHECK(p.bucket_expiry == r.bucket_expiry);
      CHECK(q.base(ModernWheel::base_std).next_expiry == r.bucket_expiry);

      const std::vector<Fired> log = run_through(q, r.bucket_expiry);
      REQUIRE(log.size() == 1);
      CHECK(log[0].id == t);
      CHECK(log[0].base_clk == r.bucket_expiry);
      CHECK(log[0].at == r.bucket_expiry);
      CHECK(log[0].expires == r.expires);
      CHECK_FALSE(q.is_pending(t));
    }
  }
}

TEST_CASE("modern: §8.1 32-bit wrap rows, one wrap higher (2^64)") {
  for (const Row& r : kWrapRows) {
    CAPTURE(r.clk);
    CAPTURE(r.expires);
    const modern::WheelIndex wi = modern::calc_wheel_index(r.expires, r.clk, 9);
    CHECK(wi.level == r.level);
    CHECK(wi.idx == r.idx);
    CHECK(wi.bucket_expiry == r.bucket_expiry);
    CHECK_FALSE(wi.past);
    CHECK_FALSE(wi.clamped);

    ModernWheel q = wheel_at(r.clk);
    const TimerId t = q.create();
    q.arm(t, r.expires);
    CHECK(q.placement(t).slot == r.idx);
    CHECK(q.placement(t).bucket_expiry == r.bucket_expiry);
    const std::vector<Fired> log = run_through(q, r.bucket_expiry);
    REQUIRE(log.size() == 1);
    CHECK(log[0].base_clk == r.bucket_expiry);
    CHECK(log[0].at == r.bucket_expiry);
  }
}

TEST_CASE("modern: sequence vectors A and B (stale empty base, re-arm after expiry)") {
  ModernWheel q = wheel_at(0, 1000);
  const auto& base = q.base(ModernWheel::base_std);
  CHECK(base.clk == 0);
  CHECK(base.next_expiry == kMaxDelta);
  const TimerId t = q.create();
  std::vector<Fired> log;
  auto rec = recorder(q, log);

  // A: the tick ran to 1000 without a softirq (nothing due): clk is stale.
  tick_to(q, 1000, rec);
  CHECK(q.counters().softirq_runs == 0);
  CHECK(base.clk == 0);
  CHECK(q.arm(t, 1100) == ArmOutcome::queued);
  CHECK(base.clk == 1000); // forwarded before the index computation
  CHECK(q.placement(t).level == 1);
  CHECK(q.placement(t).slot == 74);
  CHECK(q.placement(t).bucket_expiry == 1104);
  tick_to(q, 1103, rec);
  CHECK(log.empty());
  tick_to(q, 1104, rec);
  REQUIRE(log.size() == 1);
  CHECK(log[0].base_clk == 1104);
  CHECK(log[0].at == 1104);

  // B: after the run clk is one ahead; the re-arm measures from 1105.
  CHECK(base.clk == 1105);
  CHECK(q.arm(t, 1114) == ArmOutcome::queued);
  CHECK(base.clk == 1105);
  CHECK(q.placement(t).level == 0);
  CHECK(q.placement(t).slot == 27);
  CHECK(q.placement(t).bucket_expiry == 1115);
  log.clear();
  tick_to(q, 1114, rec);
  CHECK(log.empty());
  tick_to(q, 1115, rec);
  REQUIRE(log.size() == 1);
  CHECK(log[0].base_clk == 1115);
}

TEST_CASE("modern: sequence vector C (forwarding stops at a due bucket)") {
  ModernWheel q = wheel_at(1950);
  const auto& base = q.base(ModernWheel::base_std);
  const TimerId x = q.create(), y = q.create(), z = q.create();
  q.arm(x, 1997);
  CHECK(q.placement(x).bucket_expiry == 1998);
  // jiffies reaches 2000 but the softirq has not run (deferred to ksoftirqd).
  q.set_jiffies(2000);
  q.arm(y, 2060);
  CHECK(base.clk == 1998); // next_expiry, not jiffies
  CHECK(q.placement(y).level == 0);
  CHECK(q.placement(y).bucket_expiry == 2061);
  q.arm(z, 2061);
  CHECK(q.placement(z).level == 1);
  CHECK(q.placement(z).slot == 66);
  CHECK(q.placement(z).bucket_expiry == 2064);

  std::vector<Fired> log;
  auto rec = recorder(q, log);
  REQUIRE(q.softirq_due());
  q.run_softirq(rec);
  REQUIRE(log.size() == 1);
  CHECK(log[0].id == x);
  CHECK(log[0].base_clk == 1998);
  CHECK(log[0].at == 2000);
  tick_to(q, 2064, rec);
  REQUIRE(log.size() == 3);
  CHECK(log[1].id == y);
  CHECK(log[1].base_clk == 2061);
  CHECK(log[2].id == z);
  CHECK(log[2].base_clk == 2064);
}

TEST_CASE("modern: sequence vector D (a delete leaves next_expiry stale: one spurious softirq)") {
  ModernWheel q = wheel_at(1000);
  const auto& base = q.base(ModernWheel::base_std);
  const TimerId e1 = q.create(), e2 = q.create();
  q.arm(e1, 1010);
  q.arm(e2, 1500);
  CHECK(base.next_expiry == 1011);
  std::vector<Fired> log;
  auto rec = recorder(q, log);

  SUBCASE("ticking on: the tick at 1011 raises the softirq for nothing") {
    CHECK(q.cancel(e1));
    CHECK(base.next_expiry == 1011); // not recomputed by the delete
    CHECK(base.next_expiry_recalc);
    tick_to(q, 1010, rec);
    CHECK(q.counters().softirq_runs == 0);
    tick_to(q, 1011, rec);
    CHECK(log.empty());
    CHECK(q.counters().softirq_runs == 1);
    CHECK(q.counters().empty_runs == 1);
    CHECK(base.clk == 1012);
    CHECK(base.next_expiry == 1504);
    tick_to(q, 1504, rec);
    REQUIRE(log.size() == 1);
    CHECK(log[0].id == e2);
    CHECK(log[0].base_clk == 1504);
    CHECK(q.counters().softirq_runs == 2);
    CHECK(q.counters().empty_runs == 1);
  }
  SUBCASE("an idle entry in between recomputes next_expiry: no spurious run") {
    CHECK(q.cancel(e1));
    CHECK(q.next_timer_interrupt() == Jiffies{1504});
    CHECK(base.next_expiry == 1504);
    CHECK_FALSE(base.next_expiry_recalc);
    tick_to(q, 1504, rec);
    REQUIRE(log.size() == 1);
    CHECK(q.counters().softirq_runs == 1);
    CHECK(q.counters().empty_runs == 0);
  }
  SUBCASE("deleting a timer that shares its bucket does not flag a recalc") {
    const TimerId e3 = q.create();
    q.arm(e3, 1010);
    CHECK(q.cancel(e1));
    CHECK_FALSE(base.next_expiry_recalc);
    tick_to(q, 1011, rec);
    REQUIRE(log.size() == 1);
    CHECK(log[0].id == e3);
    CHECK(q.counters().empty_runs == 0);
  }
}

TEST_CASE("modern: set_flags() moves an idle timer to the other base; a pending one is refused") {
  ModernWheel q = wheel_at(1000, 250);
  const TimerId t = q.create(TimerFlags{.deferrable = false});
  q.set_flags(t, TimerFlags{.deferrable = true});
  q.arm(t, 1010);
  CHECK(q.placement(t).deferrable_base);
  CHECK_THROWS_AS(q.set_flags(t, TimerFlags{.deferrable = false}), std::logic_error);
  CHECK(q.placement(t).deferrable_base);
  q.cancel(t);
  q.set_flags(t, TimerFlags{.deferrable = false});
  q.arm(t, 1010);
  CHECK_FALSE(q.placement(t).deferrable_base);
  CHECK(q.base(ModernWheel::base_std).next_expiry == q.placement(t).bucket_expiry);
}
