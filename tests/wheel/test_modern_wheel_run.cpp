// The modern wheel (6.1) beyond placement: mod_timer's shortcuts,
// forward_timer_base, the deferrable base, next_timer_interrupt, and
// softirq runs with callbacks that re-arm and cancel.
#include "tests/wheel/fire_hint_check.hpp"
#include "tests/wheel/modern_wheel_helpers.hpp"
#include "wheel/kernel/modern_levels.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <vector>

using namespace timersim;
using namespace timersim::test;

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

TEST_CASE("modern: a held carry-over timer re-armed into its old bucket number is enqueued anew, not fired early") {
  // Two timers for 1009 sit in bucket 1010 (6.1 rounds up by a jiffy at
  // level 0). A budget of one runs the head (a) and the engine's bound ends
  // the run: b is held carry-over. Fifty jiffies later b is re-armed for
  // 1073, whose bucket (1074, delta 13: level 0) has the bucket number b was
  // collected from (1074 & 63 == 1010 & 63). 6.1's same-bucket shortcut would
  // leave b in the work list, and the next pass would fire it at 1061, 12
  // jiffies early.
  std::vector<Fired> log;
  ModernWheel q = wheel_at(1000);
  const TimerId b = q.create(), a = q.create();
  q.arm(b, 1009);
  q.arm(a, 1009); // head: runs first
  q.set_jiffies(1010);
  REQUIRE(q.softirq_due());
  CHECK(q.run_softirq(recorder(q, log), 1));
  CHECK(ids_of(log) == std::vector<TimerId>{a});
  REQUIRE(q.carry_over());
  q.hold_carry_over();
  q.set_jiffies(1060);
  CHECK(q.arm(b, 1073) == ArmOutcome::queued);
  CHECK(q.placement(b).bucket_expiry == 1074);
  tick_to(q, 1100, recorder(q, log));
  REQUIRE(log.size() == 2);
  CHECK(log[1].id == b);
  CHECK(log[1].at == 1074);
}

TEST_CASE("modern: without a hold, a collected timer keeps 6.1's same-bucket shortcut") {
  // The same re-arm from a callback of the run that collected b (the
  // kernel's own window) keeps the shortcut: b stays collected and runs in
  // that run, as 6.1 __mod_timer() + expire_timers() do.
  std::vector<Fired> log;
  ModernWheel q = wheel_at(1000);
  const TimerId b = q.create(), a = q.create();
  q.arm(b, 1009);
  q.arm(a, 1009);
  ArmOutcome outcome = ArmOutcome::queued;
  tick_to(q, 1010, [&](const FiredTimer& f) {
    log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
    // clk is 1011 now: 1073 is delta 62, level 0, bucket 1074 (& 63 == 1010 & 63).
    if (f.id == a) outcome = q.arm(b, 1073);
  });
  CHECK(outcome == ArmOutcome::same_bucket);
  CHECK(ids_of(log) == std::vector<TimerId>{a, b});
}

TEST_CASE("modern: a fire's look-ahead hint names a timer the same pass fires later") {
  // Twelve timers in two level-0 buckets (level 0 runs at expires + 1).
  for (const bool bounded : {false, true}) {
    CAPTURE(bounded);
    ModernWheel q = wheel_at(1000);
    for (int i = 0; i < 12; ++i) q.arm(q.create(), 1040 + (i % 2));
    check_fire_hints(q, 1045, bounded, 12);
  }
}
