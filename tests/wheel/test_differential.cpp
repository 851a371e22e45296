// Randomized differential tests. Long random operation streams (arm, re-arm,
// cancel, ticks, late softirqs, idle gaps with the NOHZ next-event query,
// callbacks that re-arm and cancel) are applied in lock step to a wheel and
// to a plain model of the same kernel rules (tests/model/), comparing every
// fired (timer, jiffy of the softirq, base_clk, expires) in order and, after
// every operation, every timer's placement, the bases' clocks and the
// counters. A second set runs the same stream on the exact heap and both
// wheels and checks the wheels' timing against it.
//
// Streams cover HZ 100/250/1000, starts at INITIAL_JIFFIES, just below 2^32
// and just below 2^64 (so jiffies wraps inside the stream), classic slack
// default / fixed / off, CONFIG_BASE_SMALL, and the modern wheel with and
// without a deferrable base.
#include "tests/model/plain_classic.hpp"
#include "tests/model/plain_modern.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/build_flavour.hpp"

using namespace timersim;
using timersim::model::PlainClassic;
using timersim::model::PlainModern;

namespace {

constexpr bool kThorough = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED;
constexpr Jiffies kTop = std::numeric_limits<Jiffies>::max();

Jiffies initial(unsigned hz) { return (Jiffies{1} << 32) - 300 * Jiffies{hz}; }

std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^ c * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 29;
  return x;
}

struct Ev {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  Jiffies at; // jiffies when the callback ran
  bool operator==(const Ev&) const = default;
};

std::string show(const Ev& e) {
  return "{id " + std::to_string(e.id) + " expires " + std::to_string(e.expires) + " base_clk " +
         std::to_string(e.base_clk) + " at " + std::to_string(e.at) + "}";
}

std::string show(std::optional<Jiffies> v) { return v ? std::to_string(*v) : "none"; }

// What callbacks do, decided only from the timer, how often it has fired and
// what it fired with: the same on both sides as long as both fire the same.
// Timers 0 .. random-1 take the random operations. The `far.size()` timers
// after them are long-lived: armed far ahead at the start, re-armed far ahead
// whenever they fire, never touched by the random operations, so the outer
// levels / arrays always hold something (and the wheel is never empty).
struct Policy {
  std::uint64_t seed;
  bool active;
  unsigned random;          // timers under random operations
  std::vector<Jiffies> far; // delays of the long-lived timers

  unsigned timers() const { return random + static_cast<unsigned>(far.size()); }

  template <class Q>
  void apply(Q& q, const FiredTimer& f, std::uint64_t k) const {
    const std::uint64_t h = mix(seed, f.id, k);
    if (f.id >= random) {
      q.arm(f.id, q.jiffies() + far[(f.id + k) % far.size()], ArmCall::mod_timer);
      return;
    }
    if (!active) return;
    switch (f.id % 6) {
    case 0: // periodic
      q.arm(f.id, q.jiffies() + 1 + mix(seed, f.id) % 700, ArmCall::mod_timer);
      break;
    case 1: // cancels another timer, maybe one due later in this run
      if (h % 2) q.cancel(static_cast<TimerId>((f.id + 1 + h % 5) % random));
      break;
    case 2: // arms another timer, maybe one already collected for this run
      q.arm(static_cast<TimerId>((f.id + 3) % random), q.jiffies() + (h >> 8) % 100,
            (h >> 20) % 3 == 0 ? ArmCall::mod_timer_pending : ArmCall::mod_timer);
      break;
    case 3: // re-arms itself relative to its old expiry (maybe in the past)
      q.arm(f.id, f.expires + 64 * (h % 10), ArmCall::mod_timer);
      break;
    default:
      break;
    }
  }
};

template <class Q>
struct Side {
  Q q;
  const Policy* policy;
  std::vector<Ev> log;
  std::vector<std::uint64_t> fires;

  Side(Q queue, const Policy* p) : q(std::move(queue)), policy(p), fires(p->timers(), 0) {}
  auto cb() {
    return [this](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      policy->apply(q, f, fires[f.id]++);
    };
  }
};

// Delays spanning every level: mostly short, a tail to hundreds of thousands
// of jiffies, a little in the past, and (big) some far beyond.
std::int64_t pick_delay(std::mt19937_64& rng, Jiffies big) {
  const unsigned r = static_cast<unsigned>(rng() % 1000);
  if (r < 30) return -static_cast<std::int64_t>(rng() % 100);
  if (r < 500) return static_cast<std::int64_t>(rng() % 64);
  if (r < 750) return static_cast<std::int64_t>(63 + rng() % 500);
  if (r < 900) return static_cast<std::int64_t>(500 + rng() % 4000);
  if (r < 960) return static_cast<std::int64_t>(4000 + rng() % 30000);
  if (r < 990) return static_cast<std::int64_t>(30000 + rng() % 300000);
  return static_cast<std::int64_t>(300000 + rng() % big);
}

ArmCall pick_call(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 10);
  return r < 7 ? ArmCall::mod_timer : r < 9 ? ArmCall::mod_timer_pending : ArmCall::mod_timer_pinned;
}

struct Stream {
  std::string name;
  std::uint64_t seed;
  Jiffies start;
  bool gaps;      // idle gaps: next_timer_interrupt, then wake_at far ahead
  bool callbacks; // callbacks re-arm / cancel / arm
  int ops;
  Jiffies big;    // range of the rare far delays
  Jiffies deep;   // > 0: some idle gaps are this long, up to twice that
  unsigned random = 44; // timers under random operations
  bool far = true;      // plus 4 long-lived far timers
};

// Drives a wheel and its model through one stream. `diff` compares their
// state after each operation; `nti` compares next_timer_interrupt answers.
template <class Real, class Model, class Diff, class Nti>
void drive(Side<Real>& real, Side<Model>& model, const Stream& s, Diff&& diff, Nti&& nti) {
  std::mt19937_64 rng(s.seed);
  const unsigned n = real.policy->timers();
  const unsigned nrand = real.policy->random;
  for (unsigned i = 0; i < n; ++i) {
    const TimerFlags flags{.deferrable = i % 8 == 7 && i < nrand};
    REQUIRE(real.q.create(flags) == i);
    REQUIRE(model.q.create(flags) == i);
  }
  std::size_t compared = 0;
  auto both = [&](auto&& f) {
    f(real);
    f(model);
  };
  const std::vector<Jiffies>& far = real.policy->far;
  for (unsigned i = nrand; i < n; ++i) {
    const Jiffies E = model.q.jiffies() + far[i % far.size()];
    REQUIRE(real.q.arm(i, E, ArmCall::mod_timer) == model.q.arm(i, E, ArmCall::mod_timer));
  }
  for (int op = 0; op < s.ops; ++op) {
    const unsigned r = static_cast<unsigned>(rng() % 1000);
    const TimerId id = static_cast<TimerId>(rng() % nrand);
    std::string what;
    if (r < 300) {
      const Jiffies E = model.q.jiffies() + static_cast<Jiffies>(pick_delay(rng, s.big));
      const ArmCall call = pick_call(rng);
      what = "arm " + std::to_string(id) + " E=" + std::to_string(E);
      const ArmOutcome a = real.q.arm(id, E, call), b = model.q.arm(id, E, call);
      REQUIRE_MESSAGE(a == b, s.name << " op " << op << " " << what << ": outcome "
                                     << static_cast<int>(a) << " vs model " << static_cast<int>(b));
    } else if (r < 400) {
      // Re-arm near the current expiry: the same-expiry and (modern)
      // same-bucket shortcuts.
      const Placement p = model.q.placement(id);
      const Jiffies E = !p.pending        ? model.q.jiffies() + rng() % 64
                        : rng() % 3 == 0 ? p.expires // same expiry
                                         : p.expires + rng() % 17 - 8;
      what = "re-arm " + std::to_string(id) + " E=" + std::to_string(E);
      const ArmOutcome a = real.q.arm(id, E, ArmCall::mod_timer), b = model.q.arm(id, E, ArmCall::mod_timer);
      REQUIRE_MESSAGE(a == b, s.name << " op " << op << " " << what << ": outcome "
                                     << static_cast<int>(a) << " vs model " << static_cast<int>(b));
    } else if (r < 480) {
      what = "cancel " + std::to_string(id);
      REQUIRE_MESSAGE(real.q.cancel(id) == model.q.cancel(id), s.name << " op " << op << " " << what);
    } else if (r < 780 || (r >= 950 && !s.gaps)) {
      const Jiffies to = model.q.jiffies() + 1 + rng() % 8;
      what = "tick to " + std::to_string(to);
      both([&](auto& side) { tick_to(side.q, to, side.cb()); });
    } else if (r < 850) {
      const Jiffies to = model.q.jiffies() + 8 + rng() % 300;
      what = "tick to " + std::to_string(to);
      both([&](auto& side) { tick_to(side.q, to, side.cb()); });
    } else if (r < 880) {
      const Jiffies to = model.q.jiffies() + 1 + rng() % 6;
      what = "jiffies to " + std::to_string(to) + " (softirq late)";
      both([&](auto& side) { side.q.set_jiffies(to); });
    } else if (r < 900) {
      what = "softirq now";
      REQUIRE(real.q.softirq_due() == model.q.softirq_due());
      both([&](auto& side) {
        if (side.q.softirq_due()) side.q.run_softirq(side.cb());
      });
    } else if (r < 950) {
      what = "next_timer_interrupt";
      nti(real.q, model.q, s.name + " op " + std::to_string(op));
    } else {
      const unsigned kind = static_cast<unsigned>(rng() % 10);
      const Jiffies to = s.deep && kind == 0 ? model.q.jiffies() + s.deep + rng() % s.deep
                                             : model.q.jiffies() + 100 + rng() % (kind < 3 ? 60000 : 5000);
      what = "idle until " + std::to_string(to);
      nti(real.q, model.q, s.name + " op " + std::to_string(op) + " (idle entry)");
      both([&](auto& side) {
        wake_at(side.q, to, side.cb());
        if constexpr (requires { side.q.clear_idle(); }) side.q.clear_idle();
      });
    }
    // What fired during this operation, in order.
    if (real.log.size() != model.log.size() ||
        !std::equal(real.log.begin() + static_cast<std::ptrdiff_t>(compared), real.log.end(),
                    model.log.begin() + static_cast<std::ptrdiff_t>(compared))) {
      std::string msg = s.name + " op " + std::to_string(op) + " (" + what + "): fired differently\n  wheel:";
      for (std::size_t i = compared; i < real.log.size(); ++i) msg += " " + show(real.log[i]);
      msg += "\n  model:";
      for (std::size_t i = compared; i < model.log.size(); ++i) msg += " " + show(model.log[i]);
      FAIL(msg);
    }
    compared = real.log.size();
    const std::string d = diff(real.q, model.q, n);
    if (!d.empty()) FAIL(s.name << " op " << op << " (" << what << "): " << d);
  }
}

std::string diff_placement(const Placement& a, const Placement& b, TimerId id) {
  if (a.pending != b.pending || a.deferrable_base != b.deferrable_base || a.level != b.level ||
      a.slot != b.slot || a.expires != b.expires || a.bucket_expiry != b.bucket_expiry)
    return "timer " + std::to_string(id) + " placement: wheel " + (a.pending ? "pending" : "idle") + " L" +
           std::to_string(a.level) + " slot " + std::to_string(a.slot) + " E " + std::to_string(a.expires) +
           " B " + std::to_string(a.bucket_expiry) + " / model " + (b.pending ? "pending" : "idle") + " L" +
           std::to_string(b.level) + " slot " + std::to_string(b.slot) + " E " + std::to_string(b.expires) +
           " B " + std::to_string(b.bucket_expiry);
  return "";
}

std::string diff_modern(const ModernWheel& q, const PlainModern& m, unsigned n) {
  if (q.jiffies() != m.jiffies()) return "jiffies";
  for (unsigned b = 0; b < 2; ++b) {
    const auto& x = q.base(b == 0 ? ModernWheel::base_std : ModernWheel::base_def);
    const auto& y = m.base(b);
    const std::string base = b == 0 ? "std base " : "def base ";
    if (x.clk != y.clk) return base + "clk " + std::to_string(x.clk) + " vs model " + std::to_string(y.clk);
    if (x.next_expiry != y.next_expiry)
      return base + "next_expiry " + std::to_string(x.next_expiry) + " vs model " + std::to_string(y.next_expiry);
    if (x.next_expiry_recalc != y.recalc) return base + "next_expiry_recalc";
    if (x.timers_pending != y.timers_pending) return base + "timers_pending";
    if (x.is_idle != y.is_idle) return base + "is_idle";
    if (x.queued != y.queued) return base + "queued";
  }
  for (TimerId id = 0; id < n; ++id) {
    const std::string d = diff_placement(q.placement(id), m.placement(id), id);
    if (!d.empty()) return d;
  }
  const QueueCounters& c = q.counters();
  const PlainModern::Counters& k = m.counters();
  if (c.enqueues != k.enqueues || c.same_expiry_shortcuts != k.same_expiry_shortcuts ||
      c.same_bucket_shortcuts != k.same_bucket_shortcuts || c.cancels != k.cancels || c.expired != k.expired ||
      c.softirq_runs != k.softirq_runs || c.empty_runs != k.empty_runs)
    return "counters";
  if (k.inconsistencies != 0) return "model inconsistency";
  return "";
}

std::string diff_classic(const ClassicWheel& q, const PlainClassic& m, unsigned n) {
  if (q.jiffies() != m.jiffies()) return "jiffies";
  if (q.timer_jiffies() != m.timer_jiffies())
    return "timer_jiffies " + std::to_string(q.timer_jiffies()) + " vs model " + std::to_string(m.timer_jiffies());
  if (q.pending() != m.pending()) return "pending count";
  for (TimerId id = 0; id < n; ++id) {
    const std::string d = diff_placement(q.placement(id), m.placement(id), id);
    if (!d.empty()) return d;
  }
  const QueueCounters& c = q.counters();
  const PlainClassic::Counters& k = m.counters();
  if (c.enqueues != k.enqueues || c.same_expiry_shortcuts != k.same_expiry_shortcuts || c.cancels != k.cancels ||
      c.expired != k.expired || c.cascades != k.cascades || c.cascade_moves != k.cascade_moves ||
      c.jiffies_walked != k.jiffies_walked || c.softirq_runs != k.softirq_runs)
    return "counters";
  for (unsigned a = 1; a <= 5; ++a)
    if (c.cascade_moves_from_level[a] != k.cascade_moves_from_level[a]) return "cascades from tv" + std::to_string(a);
  if (k.inconsistencies != 0) return "model inconsistency";
  if (m.overdue_timer()) return "a pending timer's step went by";
  return "";
}

int stream_ops() { return kThorough ? 3000 : 700; }

std::vector<Jiffies> starts_for(unsigned hz) { return {initial(hz), (Jiffies{1} << 32) - 700, kTop - 700}; }

// Far delays for the long-lived timers: levels 5..8 and the clamp.
const std::vector<Jiffies> kModernFar = {300007, 3000017, 20000003, Jiffies{1} << 31};
// tv3, tv4, tv4, tv5 of the normal wheel.
const std::vector<Jiffies> kClassicFar = {(Jiffies{1} << 17) + 5, (Jiffies{1} << 21) + 7, (Jiffies{1} << 23) + 3,
                                          (Jiffies{1} << 27) + 11};
// CONFIG_BASE_SMALL: tv4, tv5, tv5 and beyond MAX_TVAL (2^22 - 1).
const std::vector<Jiffies> kSmallFar = {(Jiffies{1} << 15) + 5, (Jiffies{1} << 19) + 7, (Jiffies{1} << 21) + 3,
                                        (Jiffies{1} << 22) + 11};

void run_modern(const Stream& s, unsigned hz, bool deferrable_base) {
  CAPTURE(s.name);
  const Policy policy{s.seed, s.callbacks, s.random, s.far ? kModernFar : std::vector<Jiffies>{}};
  ModernWheel::Config cfg;
  cfg.hz = hz;
  cfg.start_jiffies = s.start;
  cfg.deferrable_base = deferrable_base;
  Side<ModernWheel> real(ModernWheel(cfg), &policy);
  Side<PlainModern> model(PlainModern(PlainModern::Config{hz, s.start, deferrable_base}), &policy);
  drive(real, model, s, diff_modern, [](ModernWheel& q, PlainModern& m, const std::string& where) {
    const std::optional<Jiffies> a = q.next_timer_interrupt(), b = m.next_timer_interrupt();
    REQUIRE_MESSAGE(a == b, where << ": next_timer_interrupt " << show(a) << " vs model " << show(b));
  });
  CHECK(real.log.size() > static_cast<std::size_t>(s.ops) / 10);
  CHECK(real.q.counters().same_bucket_shortcuts > 0);
}

struct CounterTotals {
  std::array<std::uint64_t, kMaxLevels> from_level{};
  void add(const QueueCounters& c) {
    for (unsigned a = 0; a < kMaxLevels; ++a) from_level[a] += c.cascade_moves_from_level[a];
  }
};

QueueCounters run_classic(const Stream& s, unsigned hz, std::optional<std::int64_t> slack, classic::Geometry g) {
  CAPTURE(s.name);
  const Policy policy{s.seed, s.callbacks, s.random,
                      !s.far ? std::vector<Jiffies>{} : g.tvr_bits == 8 ? kClassicFar : kSmallFar};
  Side<ClassicWheel> real(ClassicWheel(ClassicWheel::Config{.hz = hz, .start_jiffies = s.start, .geometry = g, .slack = slack}),
                          &policy);
  Side<PlainClassic> model(PlainClassic(PlainClassic::Config{hz, s.start, g.tvr_bits, g.tvn_bits, slack}), &policy);
  drive(real, model, s, diff_classic, [](ClassicWheel& q, PlainClassic& m, const std::string& where) {
    const std::optional<Jiffies> a = q.next_timer_interrupt();
    const auto answers = m.next_timer_interrupt_answers();
    REQUIRE_MESSAGE(answers.count(a) == 1, where << ": next_timer_interrupt " << show(a) << " vs model "
                                                 << show(*answers.begin()));
  });
  CHECK(real.log.size() > static_cast<std::size_t>(s.ops) / 10);
  CHECK(real.q.counters().cascade_moves > 0);
  return real.q.counters();
}

} // namespace

TEST_CASE("differential: modern wheel vs the plain 6.1 model") {
  std::uint64_t seed = 100;
  for (unsigned hz : {100u, 250u, 1000u}) {
    for (Jiffies start : starts_for(hz)) {
      for (bool gaps : {false, true}) {
        ++seed;
        const Stream s{"modern hz" + std::to_string(hz) + " start " + std::to_string(start) +
                           (gaps ? " gaps" : ""),
                       seed, start, gaps, true, stream_ops(), Jiffies{1} << 31, 0};
        run_modern(s, hz, true);
      }
    }
  }
}

TEST_CASE("differential: modern wheel variants (long idles, no callbacks, one base)") {
  // Long idle jumps (2^24..2^25 jiffies) run the outer levels and the clamped
  // timers; cheap, since the modern softirq jumps between due buckets.
  run_modern(Stream{"modern deep hz100", 5, initial(100), true, true, stream_ops(), Jiffies{1} << 31, Jiffies{1} << 24},
             100, true);
  run_modern(Stream{"modern deep hz1000", 6, kTop - 300, true, true, stream_ops(), Jiffies{1} << 31, Jiffies{1} << 24},
             1000, true);
  run_modern(Stream{"modern no callbacks", 7, initial(250), true, false, stream_ops(), Jiffies{1} << 31, 0}, 250, true);
  run_modern(Stream{"modern one base", 8, kTop - 300, true, true, stream_ops(), Jiffies{1} << 31, 0}, 1000, false);
}

TEST_CASE("differential: classic wheel vs the plain 4.x model") {
  std::uint64_t seed = 200;
  for (unsigned hz : {100u, 250u, 1000u}) {
    for (Jiffies start : starts_for(hz)) {
      for (const std::optional<std::int64_t> slack : {std::optional<std::int64_t>(-1), std::optional<std::int64_t>()}) {
        for (bool gaps : {false, true}) {
          ++seed;
          const Stream s{"classic hz" + std::to_string(hz) + " start " + std::to_string(start) +
                             (slack ? " slack" : " no-slack") + (gaps ? " gaps" : ""),
                         seed, start, gaps, true, stream_ops(), 3000000, 0};
          run_classic(s, hz, slack, classic::Geometry::normal());
        }
      }
    }
  }
}

TEST_CASE("differential: classic wheel variants (long idles, CONFIG_BASE_SMALL, fixed slack, no callbacks)") {
  const auto normal = classic::Geometry::normal();
  const auto small = classic::Geometry::base_small();
  // Long idles walk 2^19..2^20 jiffies: tv4 cascades (every 2^20), with the
  // far timers sitting in tv3..tv5. (tv5 of the normal wheel cascades every
  // 2^26 jiffies: see test_classic_wheel.cpp's shared 2^26 walk.)
  const Jiffies deep = Jiffies{1} << 19;
  CounterTotals totals;
  totals.add(run_classic(Stream{"classic deep", 30, (Jiffies{1} << 32) - 700, true, true, stream_ops(), 3000000, deep},
                         1000, -1, normal));
  // BASE_SMALL: tv5 cascades every 2^18 jiffies and MAX_TVAL is 2^22 - 1, so
  // the far timers go through tv5 (and beyond MAX_TVAL) within the stream.
  for (std::uint64_t seed : {33u, 34u})
    totals.add(run_classic(Stream{"classic base_small " + std::to_string(seed), seed,
                                  seed == 33 ? initial(100) : kTop - 900, true, true, stream_ops(), Jiffies{1} << 23,
                                  deep},
                           100, seed == 33 ? std::optional<std::int64_t>(-1) : std::nullopt, small));
  run_classic(Stream{"classic fixed slack 20", 31, initial(1000), true, true, stream_ops(), 3000000, 0}, 1000, 20, normal);
  run_classic(Stream{"classic no callbacks", 32, kTop - 500, true, false, stream_ops(), 3000000, 0}, 250, -1, normal);
  // The deep streams did cascade out of every array.
  for (unsigned a = 2; a <= 5; ++a) {
    CAPTURE(a);
    CHECK(totals.from_level[a] > 0);
  }
}

TEST_CASE("differential: sparse streams (few timers, the wheel often empty)") {
  // Without the long-lived timers and with only 5 timers, the queues keep
  // running empty:
  // the classic T snaps to jiffies on the last delete, on the first arm and
  // in the run loop; the modern base goes idle with a stale or empty
  // next_expiry.
  std::uint64_t seed = 400;
  for (Jiffies start : {initial(250), kTop - 700}) {
    for (const std::optional<std::int64_t> slack : {std::optional<std::int64_t>(-1), std::optional<std::int64_t>()}) {
      Stream s{"classic sparse start " + std::to_string(start) + (slack ? " slack" : " no-slack"), ++seed, start,
               true, true, stream_ops(), 3000000, 0};
      s.random = 5;
      s.far = false;
      run_classic(s, 250, slack, classic::Geometry::normal());
    }
    for (unsigned hz : {100u, 1000u}) {
      Stream s{"modern sparse hz" + std::to_string(hz) + " start " + std::to_string(start), ++seed, start, true, true,
               stream_ops(), Jiffies{1} << 31, 0};
      s.random = 5;
      s.far = false;
      run_modern(s, hz, true);
    }
  }
  Stream s{"classic sparse base_small", ++seed, initial(100), true, true, stream_ops(), Jiffies{1} << 23, 0};
  s.random = 5;
  s.far = false;
  run_classic(s, 100, std::nullopt, classic::Geometry::base_small());
}

// ---- the wheels against the exact heap -----------------------------------------

namespace {

struct Instance {
  TimerId id;
  std::uint64_t arm; // the how-many-th arm of this timer
  bool operator<(const Instance& o) const { return id != o.id ? id < o.id : arm < o.arm; }
};

struct Shot {
  Jiffies at;
  Jiffies expires;
  Jiffies base_clk;
};

// One queue in the heap comparison: every fire is recorded under the arm
// instance it belongs to.
template <class Q>
struct Tracker {
  Q q;
  const std::vector<std::uint64_t>* arms;
  std::map<Instance, Shot> shots;
  std::size_t duplicate = 0;

  auto cb() {
    return [this](const FiredTimer& f) {
      const Instance inst{f.id, (*arms)[f.id]};
      if (!shots.emplace(inst, Shot{q.jiffies(), f.expires, f.base_clk}).second) ++duplicate;
    };
  }
};

void run_against_heap(unsigned hz, Jiffies start, std::uint64_t seed, int ops) {
  const std::string name = "heap comparison hz" + std::to_string(hz) + " start " + std::to_string(start);
  CAPTURE(name);
  std::mt19937_64 rng(seed);
  const unsigned n = 64;
  const unsigned depth = hz > 100 ? 9 : 8;
  const Jiffies cutoff = PlainModern::kLevelStart[depth];
  std::vector<std::uint64_t> arms(n, 0);
  Tracker<HeapQueue> heap{HeapQueue(HeapQueue::Config{.hz = hz, .start_jiffies = start}), &arms, {}, 0};
  Tracker<ClassicWheel> classic{
      ClassicWheel(ClassicWheel::Config{.hz = hz, .start_jiffies = start, .geometry = {}, .slack = std::nullopt}),
      &arms, {}, 0};
  ModernWheel::Config mcfg;
  mcfg.hz = hz;
  mcfg.start_jiffies = start;
  Tracker<ModernWheel> modern{ModernWheel(mcfg), &arms, {}, 0};
  for (unsigned i = 0; i < n; ++i) {
    heap.q.create();
    classic.q.create();
    modern.q.create(TimerFlags{.deferrable = i % 8 == 7});
  }
  // The modern bucket expiry and level of each arm instance, for the bound.
  std::map<Instance, Placement> armed_modern;
  auto all = [&](auto&& f) {
    f(heap);
    f(classic);
    f(modern);
  };
  for (int op = 0; op < ops; ++op) {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    const TimerId id = static_cast<TimerId>(rng() % n);
    if (r < 35) {
      // Only mod_timer, always in the future and below the modern cutoff:
      // after the call the timer is pending with this expiry in all three.
      std::int64_t d = pick_delay(rng, 3000000);
      if (d < 1) d = 1 - d;
      const Jiffies E = heap.q.jiffies() + static_cast<Jiffies>(d) % (cutoff - 1);
      ++arms[id];
      all([&](auto& t) { t.q.arm(id, E, ArmCall::mod_timer); });
      armed_modern[Instance{id, arms[id]}] = modern.q.placement(id);
    } else if (r < 45) {
      all([&](auto& t) { t.q.cancel(id); });
    } else if (r < 85) {
      const Jiffies to = heap.q.jiffies() + 1 + rng() % (r < 75 ? 10 : 400);
      all([&](auto& t) { tick_to(t.q, to, t.cb()); });
    } else if (r < 90) {
      const Jiffies to = heap.q.jiffies() + 1 + rng() % 5;
      all([&](auto& t) { t.q.set_jiffies(to); });
    } else if (r < 94) {
      all([&](auto& t) {
        if (t.q.softirq_due()) t.q.run_softirq(t.cb());
      });
    } else {
      const Jiffies to = heap.q.jiffies() + rng() % 20000;
      all([&](auto& t) { wake_at(t.q, to, t.cb()); });
    }
    // Classic (slack off) == heap, instance by instance, as they happen.
    REQUIRE_MESSAGE(classic.shots.size() == heap.shots.size(), name << " op " << op);
  }
  CHECK(heap.duplicate == 0);
  CHECK(classic.duplicate == 0);
  CHECK(modern.duplicate == 0);
  std::size_t mismatched = 0, early = 0, out_of_bound = 0, not_in_heap = 0;
  for (const auto& [inst, h] : heap.shots) {
    CHECK(h.base_clk == h.expires);
    const auto c = classic.shots.find(inst);
    if (c == classic.shots.end() || c->second.at != h.at || c->second.base_clk != h.expires) ++mismatched;
  }
  for (const auto& [inst, m] : modern.shots) {
    const auto h = heap.shots.find(inst);
    if (h == heap.shots.end()) {
      ++not_in_heap; // the modern wheel fired something the heap did not (yet)
      continue;
    }
    if (time_before(m.at, h->second.at) || !time_after(m.base_clk, m.expires)) ++early;
    const Placement& p = armed_modern.at(inst);
    const Jiffies gran = Jiffies{1} << (3 * p.level);
    if (m.base_clk != p.bucket_expiry || m.base_clk - m.expires > gran) ++out_of_bound;
  }
  CHECK(mismatched == 0);
  CHECK(early == 0);
  CHECK(out_of_bound == 0);
  CHECK(not_in_heap == 0);
  CHECK(heap.shots.size() > static_cast<std::size_t>(ops) / 10);
  CHECK(modern.shots.size() > heap.shots.size() / 2);
}

} // namespace

TEST_CASE("differential: every timer fires in the classic wheel (slack off) when the heap fires it, "
          "and in the modern wheel never earlier than the heap and never before expires") {
  std::uint64_t seed = 300;
  for (unsigned hz : {100u, 250u, 1000u})
    for (Jiffies start : starts_for(hz)) run_against_heap(hz, start, ++seed, kThorough ? 4000 : 1000);
}
