// The kernel wheels' inline arm() (and arm_inlined(), the same with more of
// it inline) against arm_general(), the whole __mod_timer() they shortcut.
// Two wheels take the same random stream in lock step, one armed through
// arm() or arm_inlined() (their short paths where they apply), the other
// through arm_general() only: every outcome, every timer's placement, the
// wheel's state, every counter and every fired timer (in order) must be the
// same, and for the modern wheel each bucket's order too. The stream
// reaches the short paths (idle and, modern, pending timers with room in
// the bucket) and every way out of them: modern, a base that needs
// forwarding, the deferrable base, same bucket; classic, slack (default,
// fixed, off) and an empty wheel; both, deltas past the cutoff and in the
// past, mod_timer_pending, pinned calls, same expiry, a timer leaving a
// bucket it is the last in, a full bucket that needs a compaction or
// growth, collected timers in a work list (callbacks re-arm them) and
// budgeted passes.
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/build_flavour.hpp"

using namespace timersim;

namespace {

struct Fire {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  bool operator==(const Fire&) const = default;
};

enum class Entry { arm, arm_inlined, arm_general };

template <class Wheel>
struct Side {
  Wheel q;
  Entry entry;
  std::vector<Fire> fired;

  ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call) {
    switch (entry) {
    case Entry::arm: return q.arm(id, expires, call);
    case Entry::arm_inlined: return q.arm_inlined(id, expires, call);
    case Entry::arm_general: break;
    }
    return q.arm_general(id, expires, call);
  }
};

// The first difference in what only one wheel has, or "": classic, T;
// modern, the bases and (when asked) each bucket's order.
std::string state_difference(const ClassicWheel& a, const ClassicWheel& b, std::size_t, bool) {
  if (a.timer_jiffies() != b.timer_jiffies()) return "timer_jiffies";
  return "";
}

std::string state_difference(const ModernWheel& a, const ModernWheel& b, std::size_t timers, bool bucket_order) {
  for (const auto base : {ModernWheel::base_std, ModernWheel::base_def}) {
    const ModernWheel::Base& x = a.base(base);
    const ModernWheel::Base& y = b.base(base);
    if (x.clk != y.clk || x.next_expiry != y.next_expiry || x.next_expiry_recalc != y.next_expiry_recalc ||
        x.timers_pending != y.timers_pending || x.pending_map != y.pending_map || x.queued != y.queued)
      return "base " + std::to_string(base);
  }
  // Placements are the same (difference() compared them first).
  for (TimerId id = 0; bucket_order && id < timers; ++id) {
    const Placement p = a.placement(id);
    const auto base = ModernWheel::BaseIndex{p.deferrable_base};
    if (p.pending && a.bucket_timers(base, p.slot) != b.bucket_timers(base, p.slot))
      return "bucket order of timer " + std::to_string(id);
  }
  return "";
}

// The first difference between the two wheels, or "" (one assertion per
// step: the stream is long).
template <class Wheel>
std::string difference(const Side<Wheel>& fast, const Side<Wheel>& general, std::size_t timers, bool bucket_order) {
  const Wheel& a = fast.q;
  const Wheel& b = general.q;
  if (!(a.counters() == b.counters())) return "counters";
  if (a.pending() != b.pending()) return "pending";
  if (a.bucket_entries() != b.bucket_entries()) return "bucket entries";
  for (TimerId id = 0; id < timers; ++id) {
    const Placement p = a.placement(id);
    const Placement r = b.placement(id);
    if (p.pending != r.pending || p.expires != r.expires || p.level != r.level || p.slot != r.slot ||
        p.bucket_expiry != r.bucket_expiry || p.deferrable_base != r.deferrable_base)
      return "placement of timer " + std::to_string(id);
  }
  if (fast.fired != general.fired) return "fired";
  return state_difference(a, b, timers, bucket_order);
}

// A delay that lands in every level, sometimes at or past the cutoff,
// sometimes in the past.
Jiffies draw_expires(std::mt19937_64& rng, Jiffies now) {
  switch (rng() % 8) {
  case 0: return now - rng() % 40;                           // past
  case 1: return now + (Jiffies{1} << 30) + rng() % 1000;    // clamped
  case 2: return now + rng() % 64;                           // level 0
  default: return now + (rng() % (Jiffies{1} << (6 + 3 * (rng() % 7))));
  }
}

template <class Wheel>
void run_stream(const typename Wheel::Config& config, Entry entry, std::uint64_t seed, std::size_t steps) {
  CAPTURE(Wheel::name);
  CAPTURE(static_cast<int>(entry));
  CAPTURE(seed);
  CAPTURE(config.hz);
  Side<Wheel> fast{Wheel(config), entry, {}};
  Side<Wheel> general{Wheel(config), Entry::arm_general, {}};
  constexpr std::size_t kTimers = 200;
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < kTimers; ++i) {
    const TimerFlags flags{.deferrable = rng() % 6 == 0};
    REQUIRE(fast.q.create(flags) == general.q.create(flags));
  }
  // The callbacks re-arm some of the timers they run and others still
  // waiting in the same work list, through the side's own arm.
  auto on_fire = [](Side<Wheel>& side, std::uint64_t r) {
    return [&side, r](const FiredTimer& f) mutable {
      side.fired.push_back({f.id, f.expires, f.base_clk});
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      if ((r >> 60) < 5) side.arm(f.id, side.q.jiffies() + (r >> 40) % 700, ArmCall::mod_timer);
      if ((r >> 60) == 5) side.arm(static_cast<TimerId>((r >> 20) % kTimers), side.q.jiffies() + (r >> 30) % 90, ArmCall::mod_timer);
    };
  };
  for (std::size_t step = 0; step < steps; ++step) {
    const std::uint64_t what = rng() % 100;
    if (what < 60) {
      const TimerId id = static_cast<TimerId>(rng() % kTimers);
      const ArmCall call = rng() % 10 == 0 ? ArmCall::mod_timer_pending
                           : rng() % 10 == 0 ? ArmCall::mod_timer_pinned
                                             : ArmCall::mod_timer;
      Jiffies expires = draw_expires(rng, fast.q.jiffies());
      // Same expiry, and a small move that may stay in the same bucket.
      if (rng() % 10 == 0) expires = fast.q.placement(id).expires;
      if (rng() % 10 == 0) expires = fast.q.placement(id).expires + rng() % 3;
      REQUIRE(fast.arm(id, expires, call) == general.arm(id, expires, call));
    } else if (what < 80) {
      const TimerId id = static_cast<TimerId>(rng() % kTimers);
      REQUIRE(fast.q.cancel(id) == general.q.cancel(id));
    } else if (what == 80 && rng() % 4 == 0) {
      // Everything cancelled: the next arm finds an empty wheel.
      for (TimerId id = 0; id < kTimers; ++id) REQUIRE(fast.q.cancel(id) == general.q.cancel(id));
    } else {
      // Time moves: one tick, or a gap the base sleeps through.
      const Jiffies by = rng() % 4 == 0 ? 1 + rng() % 5000 : 1;
      fast.q.set_jiffies(fast.q.jiffies() + by);
      general.q.set_jiffies(general.q.jiffies() + by);
      REQUIRE(fast.q.softirq_due() == general.q.softirq_due());
      const std::uint64_t r = rng();
      if (rng() % 3 == 0) {
        // A budgeted pass, sometimes held over.
        const std::uint64_t budget = 1 + rng() % 4;
        REQUIRE(fast.q.run_softirq(on_fire(fast, r), budget) == general.q.run_softirq(on_fire(general, r), budget));
        if (rng() % 2 == 0) {
          fast.q.hold_carry_over();
          general.q.hold_carry_over();
        }
      } else if (fast.q.softirq_due()) {
        fast.q.run_softirq(on_fire(fast, r));
        general.q.run_softirq(on_fire(general, r));
      }
    }
    REQUIRE(difference(fast, general, kTimers, step % 32 == 0) == "");
  }
  // The stream ran timers and left some pending.
  CHECK(fast.q.counters().expired > 0);
  CHECK(fast.q.counters().enqueues > 0);
}

ModernWheel::Config modern_config(unsigned hz, Jiffies start) {
  ModernWheel::Config c;
  c.hz = hz;
  c.start_jiffies = start;
  return c;
}

ClassicWheel::Config classic_config(unsigned hz, Jiffies start, std::optional<std::int64_t> slack) {
  ClassicWheel::Config c;
  c.hz = hz;
  c.start_jiffies = start;
  c.slack = slack;
  return c;
}

constexpr std::size_t kSteps = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED ? 6000 : 1000;

} // namespace

TEST_CASE("modern: arm()'s and arm_inlined()'s short paths do what arm_general() does, on random streams") {
  for (const Entry entry : {Entry::arm, Entry::arm_inlined})
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      run_stream<ModernWheel>(modern_config(250, 1000), entry, seed, kSteps);
      run_stream<ModernWheel>(modern_config(1000, (Jiffies{1} << 32) - 2000), entry, seed + 100, kSteps); // jiffies wraps 32 bits
      run_stream<ModernWheel>(modern_config(100, ~Jiffies{0} - 3000), entry, seed + 200, kSteps);         // and 64 bits
    }
}

TEST_CASE("classic: arm()'s and arm_inlined()'s short paths do what arm_general() does, on random streams") {
  for (const Entry entry : {Entry::arm, Entry::arm_inlined})
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      run_stream<ClassicWheel>(classic_config(250, 1000, std::nullopt), entry, seed, kSteps);
      run_stream<ClassicWheel>(classic_config(1000, (Jiffies{1} << 32) - 2000, -1), entry, seed + 100, kSteps);
      run_stream<ClassicWheel>(classic_config(100, ~Jiffies{0} - 3000, 3), entry, seed + 200, kSteps);
    }
}
