// ModernWheel (Linux 6.1 non-cascading wheel): the test vectors of the
// reference digest §8.1 (computed independently of this code) and the 6.1
// rules of §3, each checked on a real wheel.
#include "wheel/modern_levels.hpp"
#include "wheel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

using namespace timersim;

namespace {

constexpr Jiffies kMaxDelta = (Jiffies{1} << 30) - 1; // NEXT_TIMER_MAX_DELTA
constexpr Jiffies kTop = std::numeric_limits<Jiffies>::max(); // 2^64 - 1

struct Fired {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  Jiffies at; // jiffies when the callback ran
};

// A callback that records into `log`.
auto recorder(const ModernWheel& q, std::vector<Fired>& log) {
  return [&q, &log](const FiredTimer& f) { log.push_back({f.id, f.expires, f.base_clk, q.jiffies()}); };
}

ModernWheel::Config config(unsigned hz, std::optional<Jiffies> start = std::nullopt) {
  ModernWheel::Config c;
  c.hz = hz;
  c.start_jiffies = start;
  return c;
}

ModernWheel wheel_at(Jiffies clk, unsigned hz = 250) { return ModernWheel(config(hz, clk)); }

// Runs the current tick's softirq, jumps to just before `at` (one softirq
// that would run anything due earlier) and ticks onto `at`. Returns all that
// fired on the way.
std::vector<Fired> run_through(ModernWheel& q, Jiffies at) {
  std::vector<Fired> log;
  auto rec = recorder(q, log);
  wake_at(q, q.jiffies(), rec);
  if (time_after(at, q.jiffies() + 1)) wake_at(q, at - 1, rec);
  tick_to(q, at, rec);
  return log;
}

std::vector<TimerId> ids_of(const std::vector<Fired>& log) {
  std::vector<TimerId> out;
  for (const Fired& f : log) out.push_back(f.id);
  return out;
}

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

TEST_CASE("modern: mod_timer same-expiry shortcut") {
  ModernWheel q = wheel_at(5000);
  const TimerId t = q.create();
  CHECK(q.arm(t, 5300) == ArmOutcome::queued);
  const Placement before = q.placement(t);
  tick_to(q, 5100, [](const FiredTimer&) {});
  CHECK(q.arm(t, 5300) == ArmOutcome::same_expiry);
  CHECK(q.arm(t, 5300, ArmCall::mod_timer_pending) == ArmOutcome::same_expiry);
  CHECK(q.counters().same_expiry_shortcuts == 2);
  CHECK(q.counters().same_bucket_shortcuts == 0);
  CHECK(q.counters().enqueues == 1);
  CHECK(q.counters().arms == 3);
  CHECK(q.placement(t).slot == before.slot);
  CHECK(q.placement(t).bucket_expiry == before.bucket_expiry);
}

TEST_CASE("modern: mod_timer same-bucket shortcut (§8.1 rows 4294667296/4294667299)") {
  ModernWheel q = wheel_at(4294667296, 1000);
  const TimerId t = q.create();
  CHECK(q.arm(t, 4294667496) == ArmOutcome::queued);
  CHECK(q.placement(t).slot == 94);
  std::vector<Fired> log;
  auto rec = recorder(q, log);
  tick_to(q, 4294667299, rec);
  // 3 jiffies later the same relative timeout lands in the same bucket.
  CHECK(q.arm(t, 4294667499) == ArmOutcome::same_bucket);
  CHECK(q.counters().same_bucket_shortcuts == 1);
  CHECK(q.counters().enqueues == 1);
  CHECK(q.placement(t).expires == 4294667499);
  CHECK(q.placement(t).slot == 94);
  CHECK(q.placement(t).bucket_expiry == 4294667504);
  // Repeating the same expires is now the cheaper same-expiry shortcut.
  CHECK(q.arm(t, 4294667499) == ArmOutcome::same_expiry);
  tick_to(q, 4294667503, rec);
  CHECK(log.empty());
  tick_to(q, 4294667504, rec);
  REQUIRE(log.size() == 1);
  CHECK(log[0].expires == 4294667499);
  CHECK(log[0].base_clk == 4294667504);
}

TEST_CASE("modern: a same-bucket re-arm keeps the bucket (expiry and list position)") {
  // clk 1000: E=1500 is level 1, bucket expiry 1504, idx 64 + 188 % 64 = 124.
  ModernWheel q = wheel_at(1000);
  const TimerId a = q.create(), b = q.create();
  q.arm(a, 1500);
  q.arm(b, 1501); // same bucket, now at the head
  REQUIRE(q.placement(a).slot == q.placement(b).slot);
  std::vector<Fired> log;
  auto rec = recorder(q, log);

  SUBCASE("re-armed earlier within the bucket: still fires at 1504, behind b") {
    CHECK(q.arm(a, 1497) == ArmOutcome::same_bucket);
    CHECK(q.placement(a).bucket_expiry == 1504);
    tick_to(q, 1503, rec);
    CHECK(log.empty());
    tick_to(q, 1504, rec);
    CHECK(ids_of(log) == std::vector<TimerId>{b, a}); // a kept its place: not re-enqueued
    CHECK(log[1].expires == 1497);
    CHECK(log[1].base_clk == 1504);
  }
  SUBCASE("re-armed later within the bucket, after time moved on: fires at the old bucket") {
    tick_to(q, 1003, rec);
    CHECK(q.arm(a, 1502) == ArmOutcome::same_bucket);
    CHECK(q.placement(a).bucket_expiry == 1504);
    tick_to(q, 1504, rec);
    CHECK(ids_of(log) == std::vector<TimerId>{b, a});
    CHECK(log[1].expires == 1502);
    CHECK(log[1].at == 1504);
  }
  SUBCASE("control: a real dequeue + enqueue puts a at the head") {
    CHECK(q.cancel(a));
    CHECK(q.arm(a, 1497) == ArmOutcome::queued);
    tick_to(q, 1504, rec);
    CHECK(ids_of(log) == std::vector<TimerId>{a, b});
  }
  SUBCASE("re-armed into another bucket: moves, the old bucket fires only b") {
    CHECK(q.arm(a, 1580) == ArmOutcome::queued); // delta 580: level 2, B 1600
    CHECK(q.counters().enqueues == 3);
    CHECK(q.placement(a).bucket_expiry == 1600);
    tick_to(q, 1504, rec);
    CHECK(ids_of(log) == std::vector<TimerId>{b});
    tick_to(q, 1600, rec);
    CHECK(ids_of(log) == std::vector<TimerId>{b, a});
    CHECK(log[1].base_clk == 1600);
  }
}

TEST_CASE("modern: mod_timer_pending") {
  ModernWheel q = wheel_at(0);
  const auto& base = q.base(ModernWheel::base_std);
  const TimerId t = q.create();
  q.set_jiffies(700);
  // 6.1 __mod_timer(): the base is locked and forwarded before the
  // MOD_TIMER_PENDING_ONLY check, so an idle timer still forwards it.
  CHECK(q.arm(t, 800, ArmCall::mod_timer_pending) == ArmOutcome::not_pending);
  CHECK_FALSE(q.is_pending(t));
  CHECK(q.counters().enqueues == 0);
  CHECK(base.clk == 700);
  CHECK(q.arm(t, 800) == ArmOutcome::queued);
  CHECK(q.arm(t, 900, ArmCall::mod_timer_pending) == ArmOutcome::queued);
  CHECK(q.placement(t).expires == 900);
  CHECK(q.arm(t, 901, ArmCall::mod_timer_pinned) == ArmOutcome::same_bucket);
}

TEST_CASE("modern: forward_timer_base") {
  std::vector<Fired> log;

  SUBCASE("not while clk is ahead of jiffies: a callback measures from B + 1") {
    // E=1009 at clk 1000: level 0, B=1010. In its callback jiffies=1010 and
    // clk=1011, so E=1073 is delta 62 (level 0, B=1074); measured from
    // jiffies it would be delta 63 (level 1, B=1080).
    ModernWheel q = wheel_at(1000);
    const TimerId t = q.create(), u = q.create();
    q.arm(t, 1009);
    Placement inner;
    tick_to(q, 1010, [&](const FiredTimer& f) {
      CHECK(f.id == t);
      CHECK(q.base(ModernWheel::base_std).clk == 1011);
      q.arm(u, 1073);
      inner = q.placement(u);
    });
    CHECK(inner.level == 0);
    CHECK(inner.bucket_expiry == 1074);
    CHECK(q.base(ModernWheel::base_std).clk == 1011);
  }
  SUBCASE("a late softirq: callbacks forward the base to jiffies") {
    // B=1010, but the softirq only runs at jiffies 1100. After collecting,
    // clk=1011 and no bucket is due, so an arm forwards clk to 1100: E=1150
    // is delta 50 (level 0, B=1151), not delta 139 (level 1, B=1152).
    ModernWheel q = wheel_at(1000);
    const TimerId t = q.create(), u = q.create();
    q.arm(t, 1009);
    q.set_jiffies(1100);
    Placement inner;
    q.run_softirq([&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      q.arm(u, 1150);
      inner = q.placement(u);
    });
    REQUIRE(log.size() == 1);
    CHECK(log[0].base_clk == 1010);
    CHECK(log[0].at == 1100);
    CHECK(inner.level == 0);
    CHECK(inner.bucket_expiry == 1151);
    CHECK(q.base(ModernWheel::base_std).clk == 1100);
  }
  SUBCASE("an idle base jumps to jiffies when nothing is due") {
    ModernWheel q = wheel_at(1000);
    const TimerId t = q.create(), u = q.create();
    q.arm(t, 90000); // level 4, B far away
    q.set_jiffies(5000);
    q.arm(u, 5100); // delta 100 from 5000 (level 1), not 4100 from 1000 (level 3)
    CHECK(q.base(ModernWheel::base_std).clk == 5000);
    CHECK(q.placement(u).level == 1);
    CHECK(q.placement(u).bucket_expiry == 5104);
  }
  SUBCASE("cancel does not forward") {
    ModernWheel q = wheel_at(1000);
    const TimerId t = q.create();
    q.arm(t, 90000);
    q.set_jiffies(5000);
    q.cancel(t);
    CHECK(q.base(ModernWheel::base_std).clk == 1000);
  }
}

TEST_CASE("modern: deferrable timers use BASE_DEF, which idle decisions ignore") {
  std::vector<Fired> log;
  SUBCASE("with NO_HZ_COMMON (two bases)") {
    ModernWheel q = wheel_at(2000);
    auto rec = recorder(q, log);
    const TimerId d = q.create(TimerFlags{.deferrable = true});
    const TimerId s = q.create();
    q.arm(d, 2100); // level 1, B 2104
    CHECK(q.placement(d).deferrable_base);
    CHECK(q.base(ModernWheel::base_def).queued == 1);
    CHECK(q.base(ModernWheel::base_std).queued == 0);
    CHECK(q.base(ModernWheel::base_def).next_expiry == 2104);
    CHECK(q.next_timer_interrupt() == std::nullopt);
    q.arm(s, 2500); // level 1, B 2504
    CHECK_FALSE(q.placement(s).deferrable_base);
    CHECK(q.next_timer_interrupt() == Jiffies{2504});
    // On a ticking CPU the deferrable timer runs at its bucket expiry.
    tick_to(q, 2103, rec);
    CHECK(log.empty());
    tick_to(q, 2104, rec);
    REQUIRE(log.size() == 1);
    CHECK(log[0].id == d);
    CHECK(log[0].base_clk == 2104);
    CHECK(q.pending() == 1);
  }
  SUBCASE("one softirq runs the standard base before the deferrable one") {
    ModernWheel q = wheel_at(2000);
    auto rec = recorder(q, log);
    const TimerId d = q.create(TimerFlags{.deferrable = true});
    const TimerId s = q.create();
    q.arm(d, 2010);
    q.arm(s, 2010);
    tick_to(q, 2011, rec);
    CHECK(ids_of(log) == std::vector<TimerId>{s, d});
  }
  SUBCASE("without NO_HZ_COMMON (one base) they are ordinary timers") {
    ModernWheel q(ModernWheel::Config{.hz = 250, .start_jiffies = 2000, .deferrable_base = false});
    const TimerId d = q.create(TimerFlags{.deferrable = true});
    q.arm(d, 2100);
    CHECK_FALSE(q.placement(d).deferrable_base);
    CHECK(q.base(ModernWheel::base_std).queued == 1);
    CHECK(q.next_timer_interrupt() == Jiffies{2104});
  }
}

TEST_CASE("modern: next_timer_interrupt") {
  ModernWheel q = wheel_at(0);
  const auto& base = q.base(ModernWheel::base_std);

  SUBCASE("empty base: no event, clk forwarded, base idle") {
    q.set_jiffies(500);
    CHECK(q.next_timer_interrupt() == std::nullopt);
    CHECK(base.clk == 500);
    CHECK(base.is_idle);
  }
  SUBCASE("a future event forwards clk to jiffies") {
    const TimerId t = q.create();
    q.arm(t, 1000); // level 2, B 1024
    CHECK(q.placement(t).bucket_expiry == 1024);
    q.set_jiffies(500);
    CHECK(q.next_timer_interrupt() == Jiffies{1024});
    CHECK(base.clk == 500);
    CHECK(base.is_idle);
    q.clear_idle();
    CHECK_FALSE(base.is_idle);

    // Already due (softirq not run): "now", and clk only up to next_expiry.
    q.set_jiffies(1030);
    CHECK(q.next_timer_interrupt() == Jiffies{1030});
    CHECK(base.clk == 1024);
    CHECK_FALSE(base.is_idle);
  }
  SUBCASE("one tick away: is_idle is not set, and not cleared either") {
    const TimerId t = q.create(), u = q.create();
    q.arm(t, 5000);
    CHECK(q.next_timer_interrupt() == q.placement(t).bucket_expiry);
    CHECK(base.is_idle);
    q.arm(u, 0); // delta 0: B = 1
    CHECK(q.next_timer_interrupt() == Jiffies{1});
    // 6.1 get_next_timer_interrupt() only ever sets is_idle here.
    CHECK(base.is_idle);
    q.clear_idle();
    CHECK(q.next_timer_interrupt() == Jiffies{1});
    CHECK_FALSE(base.is_idle);
  }
}

TEST_CASE("modern: firing order in one collected clock: higher level first, each bucket LIFO") {
  // All ten timers get bucket expiry 4096 = 8^4, which collects levels 0..4.
  // Levels are set by arming at different distances; the wheel starts below
  // 2^64 so that level 4 is reachable and the run crosses the wrap.
  ModernWheel q = wheel_at(kTop - 29999); // jiffies 2^64 - 30000
  std::vector<Fired> log;
  auto rec = recorder(q, log);
  struct Arm {
    Jiffies at;
    Jiffies expires;
    unsigned level;
  };
  const Arm plan[] = {
      {kTop - 29999, 4000, 4}, {kTop - 29999, 3000, 4}, // deltas 34000, 33000
      {0, 4040, 3},            {0, 4095, 3},
      {3000, 4050, 2},         {3000, 4033, 2},
      {3900, 4090, 1},         {3900, 4089, 1},
      {4050, 4095, 0},         {4050, 4095, 0},
  };
  std::vector<TimerId> ids;
  for (const Arm& a : plan) {
    tick_to(q, a.at, rec);
    const TimerId t = q.create();
    q.arm(t, a.expires);
    CAPTURE(a.expires);
    CHECK(q.placement(t).level == a.level);
    CHECK(q.placement(t).bucket_expiry == 4096);
    ids.push_back(t);
  }
  CHECK(log.empty());
  tick_to(q, 4096, rec);
  const std::vector<TimerId> expected = {ids[1], ids[0], ids[3], ids[2], ids[5],
                                         ids[4], ids[7], ids[6], ids[9], ids[8]};
  CHECK(ids_of(log) == expected);
  for (const Fired& f : log) CHECK(f.base_clk == 4096);
}

TEST_CASE("modern: callbacks that re-arm") {
  // Collected clock c = 1032 (a multiple of 8, not of 64: levels 0 and 1).
  // From clk 900, E=1030 and E=1031 are level 1 with B=1032, idx 65.
  ModernWheel q = wheel_at(900);
  const TimerId y = q.create(), x = q.create();
  q.arm(y, 1031);
  q.arm(x, 1030); // x is at the head: runs first
  REQUIRE(q.placement(x).slot == 65);
  REQUIRE(q.placement(y).slot == 65);
  std::vector<Fired> log;

  SUBCASE("into the bucket being expired: it must wait a full lap") {
    // From clk 1033, E = c + 504 = 1536 is delta 503: level 1, idx 65 again,
    // B = 1544.
    tick_to(q, 1032, [&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      if (f.id == x) {
        q.arm(x, 1536);
        CHECK(q.placement(x).slot == 65);
        CHECK(q.placement(x).bucket_expiry == 1544);
      }
    });
    CHECK(ids_of(log) == std::vector<TimerId>{x, y});
    log.clear();
    tick_to(q, 1543, recorder(q, log));
    CHECK(log.empty());
    tick_to(q, 1544, recorder(q, log));
    REQUIRE(log.size() == 1);
    CHECK(log[0].id == x);
    CHECK(log[0].base_clk == 1544);
  }
  SUBCASE("a collected timer re-armed into its own idx takes the same-bucket shortcut and runs now") {
    // y is on the expiry list, still pending, idx 65: __mod_timer() only
    // updates ->expires and y runs in this pass with the new expires.
    tick_to(q, 1032, [&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      if (f.id == x) CHECK(q.arm(y, 1536) == ArmOutcome::same_bucket);
    });
    REQUIRE(ids_of(log) == std::vector<TimerId>{x, y});
    CHECK(log[1].expires == 1536);
    CHECK(log[1].base_clk == 1032);
    CHECK(q.pending() == 0);
  }
  SUBCASE("a collected timer re-armed elsewhere leaves the expiry list") {
    tick_to(q, 1032, [&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      if (f.id == x) CHECK(q.arm(y, 1100) == ArmOutcome::queued);
    });
    CHECK(ids_of(log) == std::vector<TimerId>{x});
    CHECK(q.placement(y).bucket_expiry == 1104);
    tick_to(q, 1104, recorder(q, log));
    CHECK(ids_of(log) == std::vector<TimerId>{x, y});
    CHECK(log[1].base_clk == 1104);
  }
  SUBCASE("periodic: re-armed from its own callback every 10 jiffies") {
    // At level 0 a re-arm to jiffies + 10 from the callback at B is delta 9
    // from clk = B + 1: the next bucket is B + 11.
    const TimerId p = q.create();
    q.arm(p, 909); // B 910
    tick_to(q, 1000, [&](const FiredTimer& f) {
      if (f.id != p) return;
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      q.arm(p, q.jiffies() + 10);
    });
    REQUIRE(log.size() == 9);
    for (std::size_t i = 0; i < log.size(); ++i) CHECK(log[i].base_clk == 910 + 11 * i);
  }
}

TEST_CASE("modern: callbacks that cancel timers due later in the same run") {
  std::vector<Fired> log;
  SUBCASE("same bucket") {
    ModernWheel q = wheel_at(1000);
    const TimerId b = q.create(), a = q.create();
    q.arm(b, 1009);
    q.arm(a, 1009); // head
    tick_to(q, 1010, [&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      if (f.id == a) CHECK(q.cancel(b));
    });
    CHECK(ids_of(log) == std::vector<TimerId>{a});
    CHECK_FALSE(q.is_pending(b));
    CHECK(q.counters().expired == 1);
    tick_to(q, 2000, recorder(q, log));
    CHECK(log.size() == 1);
  }
  SUBCASE("a lower level collected at the same clock") {
    // 1016 collects level 0 (bucket 1016) and level 1 (bucket 127).
    ModernWheel q = wheel_at(900);
    const TimerId hi = q.create(), lo = q.create();
    q.arm(hi, 1010); // delta 110: level 1, B 1016
    tick_to(q, 1000, recorder(q, log));
    q.arm(lo, 1015); // delta 15: level 0, B 1016
    REQUIRE(q.placement(hi).bucket_expiry == 1016);
    REQUIRE(q.placement(lo).bucket_expiry == 1016);
    tick_to(q, 1016, [&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      if (f.id == hi) CHECK(q.cancel(lo));
    });
    CHECK(ids_of(log) == std::vector<TimerId>{hi});
  }
  SUBCASE("a later bucket in the same catch-up run") {
    ModernWheel q = wheel_at(1000);
    const TimerId a = q.create(), b = q.create();
    q.arm(a, 1009); // B 1010
    q.arm(b, 1019); // B 1020
    wake_at(q, 1050, [&](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      if (f.id == a) CHECK(q.cancel(b));
    });
    CHECK(ids_of(log) == std::vector<TimerId>{a});
    CHECK(q.counters().expired == 1);
    CHECK(q.pending() == 0);
  }
}

TEST_CASE("modern: a catch-up run fires each bucket at its own clock, in clock order") {
  ModernWheel q = wheel_at(10000);
  std::vector<Fired> log;
  const Jiffies expiries[] = {10005, 10040, 10100, 10700, 15000, 10041};
  std::vector<TimerId> ids;
  for (Jiffies e : expiries) {
    ids.push_back(q.create());
    q.arm(ids.back(), e);
  }
  wake_at(q, 20000, recorder(q, log));
  REQUIRE(log.size() == 6);
  // B: 10006, 10041, 10042 (level 0), 10104 (level 1), 10752 (level 2),
  // 15360 (level 3)
  const Jiffies expected_b[] = {10006, 10041, 10042, 10104, 10752, 15360};
  const TimerId expected_id[] = {ids[0], ids[1], ids[5], ids[2], ids[3], ids[4]};
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(log[i].id == expected_id[i]);
    CHECK(log[i].base_clk == expected_b[i]);
    CHECK(log[i].at == 20000);
    CHECK(log[i].base_clk > log[i].expires);
  }
  CHECK(q.counters().softirq_runs == 1);
  // The run leaves clk one past the last collected clock; only the next arm
  // or idle entry forwards it to jiffies.
  CHECK(q.base(ModernWheel::base_std).clk == 15361);
}
