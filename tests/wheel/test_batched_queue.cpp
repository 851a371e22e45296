// BatchedQueue<Q> against Q itself: the same random stream of creates,
// arms, cancels, destroys, ticks, sleeps and softirq passes (unbounded,
// budgeted and held over, with callbacks that arm and cancel through the
// side's own front) goes to a plain queue and to the batched front, which
// applies arms and cancels kBatch at a time. Compared after every tick and
// at random points inside a batch: every counter, the pending count, every
// timer's placement, and every fired timer in order with its clocks. The
// streams reach the automatic flush (a full buffer), a flush by a query
// half way through a batch, and a tick that flushes.
#include "bench/peers/batched_queue.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
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

template <class Q>
struct Side {
  Q q;
  std::vector<Fire> fired;
};

template <class Plain, class Batched>
std::string difference(const Side<Plain>& plain, const Side<Batched>& batched, std::size_t timers) {
  const Plain& a = plain.q;
  const Batched& b = batched.q;
  if (!(a.counters() == b.counters())) return "counters";
  if (a.pending() != b.pending()) return "pending";
  for (TimerId id = 0; id < timers; ++id) {
    const Placement p = a.placement(id);
    const Placement r = b.placement(id);
    if (p.pending != r.pending || p.expires != r.expires || p.level != r.level || p.slot != r.slot ||
        p.bucket_expiry != r.bucket_expiry || p.deferrable_base != r.deferrable_base)
      return "placement of timer " + std::to_string(id);
  }
  if (plain.fired != batched.fired) return "fired";
  return "";
}

Jiffies draw_expires(std::mt19937_64& rng, Jiffies now) {
  switch (rng() % 8) {
  case 0: return now - rng() % 40;                        // past
  case 1: return now + (Jiffies{1} << 30) + rng() % 1000; // clamped
  case 2: return now + rng() % 64;                        // level 0
  default: return now + (rng() % (Jiffies{1} << (6 + 3 * (rng() % 7))));
  }
}

// What a callback does with the timer it runs: re-arm it, or re-arm or
// cancel another one, through its own side's arm and cancel.
template <class S>
auto on_fire(S& side, std::uint64_t r, std::size_t timers) {
  return [&side, r, timers](const FiredTimer& f) mutable {
    side.fired.push_back({f.id, f.expires, f.base_clk});
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    const auto other = static_cast<TimerId>((r >> 20) % timers);
    if ((r >> 60) < 5) side.q.arm(f.id, side.q.jiffies() + (r >> 40) % 700, ArmCall::mod_timer);
    else if ((r >> 60) == 5) side.q.arm(other, side.q.jiffies() + (r >> 30) % 90, ArmCall::mod_timer);
    else if ((r >> 60) == 6) side.q.cancel(other);
  };
}

template <class Q, std::size_t kBatch>
void run_stream(Q make(), std::uint64_t seed, std::size_t steps) {
  CAPTURE(Q::name);
  CAPTURE(kBatch);
  CAPTURE(seed);
  Side<Q> plain{make(), {}};
  Side<BatchedQueue<Q, kBatch>> batched{BatchedQueue<Q, kBatch>(make()), {}};
  constexpr std::size_t kTimers = 200;
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < kTimers; ++i) {
    const TimerFlags flags{.deferrable = rng() % 6 == 0};
    REQUIRE(plain.q.create(flags) == batched.q.create(flags));
  }
  std::size_t deepest = 0; // the most calls the front held at once
  std::size_t mid_batch_queries = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    const std::uint64_t what = rng() % 100;
    deepest = std::max(deepest, batched.q.buffered());
    if (what < 58) {
      const auto id = static_cast<TimerId>(rng() % kTimers);
      const ArmCall call = rng() % 10 == 0 ? ArmCall::mod_timer_pending
                           : rng() % 10 == 0 ? ArmCall::mod_timer_pinned
                                             : ArmCall::mod_timer;
      // Drawn from the plain side: a query of the front would flush it.
      Jiffies expires = draw_expires(rng, plain.q.jiffies());
      if (rng() % 10 == 0) expires = plain.q.placement(id).expires;           // same expiry
      if (rng() % 10 == 0) expires = plain.q.placement(id).expires + rng() % 3; // maybe the same bucket
      plain.q.arm(id, expires, call);
      batched.q.arm(id, expires, call);
    } else if (what < 91) {
      const auto id = static_cast<TimerId>(rng() % kTimers);
      plain.q.cancel(id);
      batched.q.cancel(id);
    } else if (what < 93) {
      // A query half way through a batch flushes it.
      const auto id = static_cast<TimerId>(rng() % kTimers);
      if (batched.q.buffered() > 0) ++mid_batch_queries;
      REQUIRE(plain.q.is_pending(id) == batched.q.is_pending(id));
      REQUIRE(batched.q.buffered() == 0);
    } else if (what == 93) {
      // A timer destroyed and created again (the pool hands its id back).
      const auto id = static_cast<TimerId>(rng() % kTimers);
      plain.q.destroy(id);
      batched.q.destroy(id);
      REQUIRE(plain.q.create() == batched.q.create());
    } else {
      // Time moves: one tick, or a gap the base sleeps through.
      const Jiffies by = rng() % 4 == 0 ? 1 + rng() % 5000 : 1;
      plain.q.set_jiffies(plain.q.jiffies() + by);
      batched.q.set_jiffies(batched.q.jiffies() + by);
      REQUIRE(plain.q.softirq_due() == batched.q.softirq_due());
      const std::uint64_t r = rng();
      if (rng() % 3 == 0) {
        const std::uint64_t budget = 1 + rng() % 4;
        REQUIRE(plain.q.run_softirq(on_fire(plain, r, kTimers), budget) ==
                batched.q.run_softirq(on_fire(batched, r, kTimers), budget));
        if (rng() % 2 == 0) {
          plain.q.hold_carry_over();
          batched.q.hold_carry_over();
        } else if (plain.q.carry_over()) {
          REQUIRE(plain.q.resume_softirq(on_fire(plain, r + 1, kTimers), 2) ==
                  batched.q.resume_softirq(on_fire(batched, r + 1, kTimers), 2));
        }
      } else if (plain.q.softirq_due()) {
        plain.q.run_softirq(on_fire(plain, r, kTimers));
        batched.q.run_softirq(on_fire(batched, r, kTimers));
      }
      REQUIRE(difference(plain, batched, kTimers) == "");
    }
  }
  REQUIRE(difference(plain, batched, kTimers) == "");
  // The stream did what it is for: full batches, queries inside one, fires.
  CHECK(deepest == kBatch - 1);
  CHECK(mid_batch_queries > 0);
  CHECK(plain.q.counters().expired > 0);
}

ModernWheel make_modern() { return ModernWheel(ModernWheel::Config{.hz = 250, .start_jiffies = 1000}); }
ModernWheel make_modern_wrapping() {
  return ModernWheel(ModernWheel::Config{.hz = 1000, .start_jiffies = (Jiffies{1} << 32) - 2000});
}
ClassicWheel make_classic() {
  return ClassicWheel(ClassicWheel::Config{.hz = 250, .start_jiffies = 1000}); // default slack
}
HeapQueue make_heap() { return HeapQueue(HeapQueue::Config{.hz = 250}); }

constexpr std::size_t kSteps = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED ? 8000 : 1500;

} // namespace

TEST_CASE("batched front: the modern wheel behind it does exactly what it does alone") {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    run_stream<ModernWheel, 32>(make_modern, seed, kSteps);
    run_stream<ModernWheel, 5>(make_modern, seed + 10, kSteps);
    run_stream<ModernWheel, 32>(make_modern_wrapping, seed + 20, kSteps);
  }
}

TEST_CASE("batched front: the classic wheel and the heap behind it do exactly what they do alone") {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    run_stream<ClassicWheel, 32>(make_classic, seed, kSteps);
    run_stream<ClassicWheel, 7>(make_classic, seed + 10, kSteps);
    run_stream<HeapQueue, 16>(make_heap, seed + 20, kSteps);
  }
}

TEST_CASE("batched front: calls wait in the buffer until it is full or something else is asked") {
  BatchedQueue<ModernWheel, 8> q(make_modern());
  std::vector<TimerId> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(q.create());
  for (std::size_t i = 0; i < 7; ++i) q.arm(ids[i], q.jiffies() + 10 + i);
  CHECK(q.buffered() == 7);
  q.arm(ids[7], q.jiffies() + 100); // the eighth call fills it: applied
  CHECK(q.buffered() == 0);
  q.cancel(ids[0]);
  q.cancel(ids[1]);
  CHECK(q.buffered() == 2);
  CHECK(q.jiffies() == 1000); // jiffies() is not a reason to flush
  CHECK(q.buffered() == 2);
  CHECK(q.pending() == 6);
  CHECK(q.buffered() == 0);
  // A jump of time applies what was made before it, at the old jiffies:
  // the placement is the one of arm-then-jump, which differs from
  // jump-then-arm.
  ModernWheel arm_first = make_modern(), jump_first = make_modern();
  for (ModernWheel* w : {&arm_first, &jump_first})
    while (w->create() != ids[8]) {}
  arm_first.arm(ids[8], 1100);
  arm_first.set_jiffies(1100);
  jump_first.set_jiffies(1100);
  jump_first.arm(ids[8], 1100);
  REQUIRE(arm_first.placement(ids[8]).bucket_expiry != jump_first.placement(ids[8]).bucket_expiry);
  q.arm(ids[8], 1100);
  q.set_jiffies(1100);
  CHECK(q.buffered() == 0);
  CHECK(q.placement(ids[8]).bucket_expiry == arm_first.placement(ids[8]).bucket_expiry);
}

TEST_CASE("batched front: a failing call throws from the flush that applies it; the rest is kept") {
  BatchedQueue<ModernWheel, 8> q(make_modern());
  const TimerId a = q.create();
  const TimerId gone = q.create();
  const TimerId b = q.create();
  q.destroy(gone);
  q.arm(a, q.jiffies() + 10);
  q.arm(gone, q.jiffies() + 10); // buffered: nothing is thrown yet
  q.arm(b, q.jiffies() + 20);
  CHECK(q.buffered() == 3);
  CHECK_THROWS_AS((void)q.pending(), std::invalid_argument);
  CHECK(q.buffered() == 1); // b's arm, after the failing one, waits
  CHECK(q.queue().is_pending(a));
  CHECK(q.buffered() == 0);
  CHECK(q.is_pending(b));
  CHECK(q.pending() == 2);
}
