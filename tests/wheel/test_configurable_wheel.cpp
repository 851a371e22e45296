// The configurable wheel (wheel/configurable/wheel_spec.hpp, wheel/configurable/cascading_wheel.hpp,
// wheel/configurable/in_place_wheel.hpp).
//
// 1. Presets against the kernel queues: the `classic` and `classic-small`
//    presets run in lock step with ClassicWheel, `modern` with ModernWheel
//    (HZ 100, 250, 1000), on random operation streams (arm, re-arm near the
//    old expiry, cancel, ticks, late softirqs, budgeted passes with held
//    carry-over, idle gaps with the NOHZ next-event query, moves to another
//    CPU, callbacks that re-arm and cancel); every fired timer (id, expires,
//    base_clk, jiffy), every placement, the whole QueueCounters and every
//    next_timer_interrupt() answer must be equal. And every delay across
//    every level boundary, one batch per starting clock.
// 2. Other geometries against their promise, timer by timer, on the same
//    streams and at every level boundary: the lateness against the exact
//    heap (which fires at the expiry) is checked against bounds derived
//    from the geometry here, not from the queue.
#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"
#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "wheel/views/explain.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/build_flavour.hpp"

using namespace timersim;

namespace {

constexpr bool kThorough = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED;

struct Ev {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  Jiffies at;
  bool operator==(const Ev&) const = default;
};

std::string show(const std::vector<Ev>& log, std::size_t from) {
  std::string s;
  for (std::size_t i = from; i < log.size(); ++i)
    s += " {" + std::to_string(log[i].id) + " E" + std::to_string(log[i].expires) + " bc" +
         std::to_string(log[i].base_clk) + " @" + std::to_string(log[i].at) + "}";
  return s;
}

// One queue of the pair and what its callbacks do: decided from the timer
// and its fire count only, so both sides do the same while they agree.
template <class Q>
struct Side {
  Q q;
  std::uint64_t seed;
  unsigned timers;
  std::vector<Ev> log;
  std::vector<std::uint64_t> fires;
  Side(Q queue, std::uint64_t s, unsigned n) : q(std::move(queue)), seed(s), timers(n), fires(n, 0) {}
  auto cb() {
    return [this](const FiredTimer& f) {
      log.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      const std::uint64_t k = fires[f.id]++;
      const std::uint64_t h = (seed ^ (f.id * 0x9E3779B97F4A7C15ull)) + k * 0xBF58476D1CE4E5B9ull;
      switch (f.id % 5) {
      case 0: q.arm(f.id, q.jiffies() + 1 + h % 700); break;
      case 1: q.cancel(static_cast<TimerId>((f.id + 1 + h % 5) % timers)); break;
      case 2: q.arm(static_cast<TimerId>((f.id + 3) % timers), q.jiffies() + (h >> 8) % 100); break;
      default: break;
      }
    };
  }
};

// Delays over every level of every geometry here, a few in the past.
std::int64_t pick_delay(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 1000);
  if (r < 30) return -static_cast<std::int64_t>(rng() % 100);
  if (r < 450) return static_cast<std::int64_t>(rng() % 64);
  if (r < 700) return static_cast<std::int64_t>(rng() % 600);
  if (r < 880) return static_cast<std::int64_t>(rng() % 5000);
  if (r < 960) return static_cast<std::int64_t>(rng() % 40000);
  if (r < 995) return static_cast<std::int64_t>(rng() % 400000);
  return static_cast<std::int64_t>(rng() % 3000000);
}

std::string diff_placement(const Placement& a, const Placement& b) {
  if (a.pending == b.pending && a.deferrable_base == b.deferrable_base && a.level == b.level && a.slot == b.slot &&
      a.expires == b.expires && a.bucket_expiry == b.bucket_expiry)
    return "";
  return "kernel L" + std::to_string(a.level) + " slot " + std::to_string(a.slot) + " B" +
         std::to_string(a.bucket_expiry) + (a.pending ? "" : " idle") + " / configurable L" + std::to_string(b.level) +
         " slot " + std::to_string(b.slot) + " B" + std::to_string(b.bucket_expiry) + (b.pending ? "" : " idle");
}

// Applies one random stream to both sides; `check` runs after every operation.
template <class A, class B, class Check>
void drive(Side<A>& a, Side<B>& b, std::uint64_t seed, int ops, Check&& check) {
  std::mt19937_64 rng(seed);
  for (unsigned i = 0; i < a.timers; ++i) {
    const TimerFlags flags{.deferrable = i % 7 == 6};
    REQUIRE(a.q.create(flags) == i);
    REQUIRE(b.q.create(flags) == i);
  }
  auto both = [&](auto&& f) {
    f(a);
    f(b);
  };
  std::size_t seen = 0;
  for (int op = 0; op < ops; ++op) {
    const unsigned r = static_cast<unsigned>(rng() % 1000);
    const TimerId id = static_cast<TimerId>(rng() % a.timers);
    std::string what;
    if (r < 300) {
      const Jiffies E = a.q.jiffies() + static_cast<Jiffies>(pick_delay(rng));
      const ArmCall call = rng() % 5 == 0 ? ArmCall::mod_timer_pending : ArmCall::mod_timer;
      what = "arm " + std::to_string(id) + " E" + std::to_string(E);
      REQUIRE_MESSAGE(a.q.arm(id, E, call) == b.q.arm(id, E, call), what);
    } else if (r < 380) {
      const Placement p = a.q.placement(id);
      const Jiffies E = !p.pending ? a.q.jiffies() + rng() % 64 : rng() % 3 == 0 ? p.expires : p.expires + rng() % 17 - 8;
      what = "re-arm " + std::to_string(id) + " E" + std::to_string(E);
      REQUIRE_MESSAGE(a.q.arm(id, E) == b.q.arm(id, E), what);
    } else if (r < 440) {
      what = "cancel";
      REQUIRE(a.q.cancel(id) == b.q.cancel(id));
    } else if (r < 460) {
      // The first half of a move to another CPU, then the timer comes back.
      Jiffies ea = a.q.jiffies() + static_cast<Jiffies>(pick_delay(rng)), eb = ea;
      what = "arm_detach " + std::to_string(id);
      const ArmOutcome oa = a.q.arm_detach(id, ea), ob = b.q.arm_detach(id, eb);
      REQUIRE(oa == ob);
      REQUIRE(ea == eb);
      if (oa == ArmOutcome::queued) REQUIRE(a.q.arm(id, ea, ArmCall::mod_timer_pinned) == b.q.arm(id, eb, ArmCall::mod_timer_pinned));
    } else if (r < 760) {
      const Jiffies to = a.q.jiffies() + 1 + (r < 700 ? rng() % 8 : rng() % 400);
      what = "tick to " + std::to_string(to);
      both([&](auto& s) { tick_to(s.q, to, s.cb()); });
    } else if (r < 800) {
      const Jiffies to = a.q.jiffies() + 1 + rng() % 6;
      what = "late softirq at " + std::to_string(to);
      both([&](auto& s) { s.q.set_jiffies(to); });
      REQUIRE(a.q.softirq_due() == b.q.softirq_due());
      if (a.q.softirq_due()) both([&](auto& s) { s.q.run_softirq(s.cb()); });
    } else if (r < 860) {
      // A pass in budgets: sometimes resumed, sometimes ended for good.
      const Jiffies to = a.q.jiffies() + 1 + rng() % 40;
      const std::uint64_t budget = 1 + rng() % 3;
      const bool hold = rng() % 2;
      what = "budgeted pass at " + std::to_string(to);
      both([&](auto& s) { s.q.set_jiffies(to); });
      REQUIRE(a.q.carry_over() == b.q.carry_over());
      const bool ra = a.q.run_softirq(a.cb(), budget), rb = b.q.run_softirq(b.cb(), budget);
      REQUIRE(ra == rb);
      if (ra && hold) {
        a.q.hold_carry_over();
        b.q.hold_carry_over();
      } else if (ra) {
        REQUIRE(a.q.resume_softirq(a.cb(), 1000000) == b.q.resume_softirq(b.cb(), 1000000));
      }
      REQUIRE(a.q.carry_over() == b.q.carry_over());
    } else {
      const std::optional<Jiffies> na = a.q.next_timer_interrupt(), nb = b.q.next_timer_interrupt();
      REQUIRE_MESSAGE(na == nb, "next_timer_interrupt op " << op);
      const Jiffies to = a.q.jiffies() + 50 + rng() % (r < 990 ? 3000 : 200000);
      what = "idle until " + std::to_string(to);
      both([&](auto& s) {
        wake_at(s.q, to, s.cb());
        if constexpr (requires { s.q.clear_idle(); }) s.q.clear_idle();
      });
    }
    if (!std::equal(a.log.begin() + static_cast<std::ptrdiff_t>(seen), a.log.end(),
                    b.log.begin() + static_cast<std::ptrdiff_t>(seen), b.log.end()))
      FAIL("op " << op << " (" << what << "): fired differently\n  kernel:" << show(a.log, seen)
                 << "\n  configurable:" << show(b.log, seen));
    seen = a.log.size();
    check(op, what);
  }
}

template <class A, class B>
void lock_step(A ref, B conf, std::uint64_t seed, int ops) {
  Side<A> a(std::move(ref), seed, 40);
  Side<B> b(std::move(conf), seed, 40);
  drive(a, b, seed, ops, [&](int op, const std::string& what) {
    for (TimerId id = 0; id < a.timers; ++id) {
      const std::string d = diff_placement(a.q.placement(id), b.q.placement(id));
      if (!d.empty()) FAIL("op " << op << " (" << what << ") timer " << id << ": " << d);
    }
    if (!(a.q.counters() == b.q.counters())) FAIL("op " << op << " (" << what << "): counters differ");
    REQUIRE(a.q.pending() == b.q.pending());
  });
  CHECK(a.log.size() > static_cast<std::size_t>(ops) / 4); // the stream did fire timers
}

const std::vector<Jiffies> kStarts(unsigned hz) {
  return {initial_jiffies(hz), 0, (Jiffies{1} << 32) - 70, ~Jiffies{0} - 5000, 16383 * 256 - 3};
}

} // namespace

TEST_CASE("configurable wheel: spec strings, presets and their errors") {
  const WheelGeometry classic = parse_wheel_spec("wheel:classic").geometry(250);
  CHECK(classic.mode == WheelMode::cascade);
  CHECK(classic.depth == 5);
  CHECK(classic.shift[4] == 26); // tv5's slot width, 2^26 (classic_levels.hpp table)
  CHECK(classic.max_tval() == (Jiffies{1} << 32) - 1);
  const WheelGeometry modern = parse_wheel_spec("wheel:modern").geometry(1000);
  CHECK(modern.depth == 9);
  CHECK(parse_wheel_spec("wheel:modern").geometry(100).depth == 8); // LVL_DEPTH at HZ <= 100
  CHECK(modern.cutoff() == 1056964608);                            // the digest's WHEEL_TIMEOUT_CUTOFF
  CHECK(modern.timeout_max() == 1040187392);
  CHECK(modern.level_start(3) == 4032);
  // The 2015 draft as LWN describes it: 36 jiffies go to the next eight-jiffy slot, 40.
  const WheelGeometry rfc = parse_wheel_spec("rfc-2015").geometry(1000);
  CHECK(InPlaceWheel::index_of(rfc, 36, 0).bucket_expiry == 40);
  CHECK(InPlaceWheel::index_of(modern, 36, 0).bucket_expiry == 37);
  // Spelvin: 32 x 9 lists covering 5 + 2*8 = 21 bits.
  const WheelGeometry sp = parse_wheel_spec("spelvin-2016").geometry(1000);
  CHECK(sp.buckets() == 288);
  CHECK(sp.shift[8] + sp.bits[8] == 21);
  // v2-2016: a ~6 day cutoff at HZ=1000 with a 4 ms level 0.
  const WheelGeometry v2 = parse_wheel_spec("v2-2016").geometry(1000);
  CHECK(v2.granularity(0) == 4);
  CHECK(v2.cutoff() / 1000 / 86400 == 6);

  for (const auto& p : wheel_presets()) {
    const WheelSpec s = parse_wheel_spec("wheel:" + std::string(p.name));
    CHECK(to_string(s) == "wheel:" + std::string(p.name));
    CHECK(parse_wheel_spec(to_string(s.geometry(250))).geometry(250) == s.geometry(250));
  }
  const WheelSpec changed = parse_wheel_spec("wheel:modern:depth=6");
  CHECK(changed.geometry(250).depth == 6);
  CHECK(to_string(changed) != "wheel:modern");
  CHECK(parse_wheel_spec(to_string(changed)).geometry(250) == changed.geometry(250));
  CHECK(parse_wheel_spec("wheel:bits=8/6/6:mode=cascade").geometry(250).shift[2] == 14);

  for (const char* bad : {"wheel:", "wheel:nope", "wheel:bits=7x0", "wheel:bits=8:mode=sideways", "wheel:bits=6x4:shift=6",
                          "wheel:bits=6x4:shift=0", "wheel:classic:shift=3", "wheel:bits=7x3", "wheel:bits=6x4:shift=3/3",
                          "wheel:modern:colour=red", "wheel:bits=6x4:base=2:round=down", "wheel:bits=16x6:mode=cascade"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(
        {
          const WheelGeometry g = parse_wheel_spec(bad).geometry(250);
          InPlaceWheel w({.hz = 250, .geometry = g});
        },
        std::invalid_argument);
  }
}

TEST_CASE("configurable wheel: the classic presets fire with ClassicWheel, operation by operation") {
  const int ops = kThorough ? 15000 : 1500;
  for (const unsigned hz : {100u, 250u, 1000u})
    for (const Jiffies start : kStarts(hz))
      for (const std::optional<std::int64_t> slack : {std::optional<std::int64_t>(-1), std::optional<std::int64_t>(),
                                                     std::optional<std::int64_t>(3)}) {
        if (hz != 250 && slack != std::optional<std::int64_t>(-1)) continue; // slack variants at one HZ
        for (const bool small : {false, true}) {
          CAPTURE(hz);
          CAPTURE(start);
          CAPTURE(small);
          const WheelGeometry g = parse_wheel_spec(small ? "classic-small" : "classic").geometry(hz);
          ClassicWheel ref({.hz = hz, .start_jiffies = start,
                            .geometry = small ? classic::Geometry::base_small() : classic::Geometry::normal(),
                            .slack = slack});
          CascadingWheel conf({.hz = hz, .start_jiffies = start, .geometry = g, .slack = slack});
          lock_step(std::move(ref), std::move(conf), hz * 7919 + start + small, ops);
        }
      }
}

TEST_CASE("configurable wheel: the modern preset fires with ModernWheel, operation by operation") {
  const int ops = kThorough ? 30000 : 3000;
  for (const unsigned hz : {100u, 250u, 1000u})
    for (const Jiffies start : kStarts(hz))
      for (const bool def : {true, false}) {
        CAPTURE(hz);
        CAPTURE(start);
        CAPTURE(def);
        ModernWheel ref({.hz = hz, .start_jiffies = start, .deferrable_base = def});
        InPlaceWheel conf({.hz = hz, .start_jiffies = start, .geometry = parse_wheel_spec("modern").geometry(hz),
                           .deferrable_base = def});
        lock_step(std::move(ref), std::move(conf), hz * 104729 + start + def, ops);
      }
}

namespace {

// Every delay near every level boundary of g, and 0..2^10: the deltas a
// probe arms.
std::vector<Jiffies> boundary_delays(const WheelGeometry& g, Jiffies limit) {
  std::set<Jiffies> d;
  for (Jiffies x = 0; x <= 1024; ++x) d.insert(x);
  for (unsigned l = 0; l <= g.depth; ++l) {
    std::vector<Jiffies> edges;
    if (g.mode == WheelMode::in_place) {
      edges.push_back(g.level_start(std::min(l, g.depth)));
    } else if (l < g.depth) {
      edges.push_back(g.range_end(l));
    }
    if (l < g.depth) edges.push_back(Jiffies{1} << (g.shift[l] + g.bits[l]));
    for (Jiffies e : edges)
      for (Jiffies k = 0; k < 2 * g.granularity(std::min(l, g.depth - 1)) + 3 && k < 70; ++k)
        for (Jiffies x : {e + k, e - k - 1})
          if (x <= limit) d.insert(x);
  }
  return {d.begin(), d.end()};
}

// Arms one timer per delay at once, runs the queue until all fired (ticking,
// or jumping between next events), and returns the jiffy each fired at.
template <class Q>
std::map<TimerId, Jiffies> fire_all(Q& q, const std::vector<Jiffies>& delays, bool tick) {
  const Jiffies now = q.jiffies();
  for (std::size_t i = 0; i < delays.size(); ++i) q.arm(q.create(), now + delays[i]);
  std::map<TimerId, Jiffies> at;
  auto cb = [&](const FiredTimer& f) { at[f.id] = q.jiffies(); };
  while (q.pending() > 0) {
    if (tick) {
      tick_to(q, q.jiffies() + 1, cb);
    } else {
      const std::optional<Jiffies> next = q.next_timer_interrupt();
      REQUIRE(next);
      const std::size_t before = at.size();
      if (*next != q.jiffies()) {
        wake_at(q, *next, cb);
      } else if (q.softirq_due()) {
        q.run_softirq(cb);
      }
      if (at.size() == before && *next == q.jiffies()) tick_to(q, q.jiffies() + 1, cb);
      if constexpr (requires { q.clear_idle(); }) q.clear_idle();
    }
  }
  return at;
}

} // namespace

TEST_CASE("configurable wheel: presets at every level boundary, against the kernel queues") {
  for (const Jiffies start : kStarts(250)) {
    CAPTURE(start);
    {
      ModernWheel ref({.hz = 1000, .start_jiffies = start});
      const WheelGeometry g = parse_wheel_spec("modern").geometry(1000);
      InPlaceWheel conf({.hz = 1000, .start_jiffies = start, .geometry = g});
      const auto delays = boundary_delays(g, g.cutoff() + 100);
      CHECK(fire_all(ref, delays, false) == fire_all(conf, delays, false));
    }
    {
      const WheelGeometry g = parse_wheel_spec("classic-small").geometry(250);
      ClassicWheel ref({.hz = 250, .start_jiffies = start, .geometry = classic::Geometry::base_small(), .slack = {}});
      CascadingWheel conf({.hz = 250, .start_jiffies = start, .geometry = g, .slack = {}});
      const auto delays = boundary_delays(g, g.max_tval() + 100);
      CHECK(fire_all(ref, delays, true) == fire_all(conf, delays, true));
    }
    if (kThorough) {
      const WheelGeometry g = parse_wheel_spec("classic").geometry(250);
      ClassicWheel ref({.hz = 250, .start_jiffies = start, .slack = {}});
      CascadingWheel conf({.hz = 250, .start_jiffies = start, .geometry = g, .slack = {}});
      const auto delays = boundary_delays(g, Jiffies{1} << 21); // tv1..tv3 and into tv4
      CHECK(fire_all(ref, delays, true) == fire_all(conf, delays, true));
    }
  }
}

namespace {

// The promise of geometry g for a timer armed at `armed` (clock / T equal to
// it, ticking) with expiry E that fired at `at`, derived from the rules in
// the header: the level by the delta, then the bound of its rounding.
void check_promise(const WheelGeometry& g, Jiffies armed, Jiffies E, Jiffies at) {
  const Jiffies delta = E - armed;
  CAPTURE(delta);
  const std::int64_t late = jiffies_diff(at, E);
  REQUIRE(static_cast<std::int64_t>(delta) >= 0); // the probes never arm in the past
  if (g.mode == WheelMode::cascade) {
    if (g.round == WheelRound::down) {
      CHECK(late == 0); // exact, also beyond MAX_TVAL (laps)
      return;
    }
    unsigned level = 0;
    while (level + 1 < g.depth && delta >= g.range_end(level)) ++level;
    CHECK(late >= 0);
    CHECK(late < static_cast<std::int64_t>(g.granularity(level)));
    return;
  }
  if (delta >= g.cutoff()) { // clamped as 6.1: early, at the clamp
    CHECK(jiffies_diff(at, armed) <= static_cast<std::int64_t>(g.timeout_max() + g.granularity(g.depth - 1)));
    CHECK(jiffies_diff(at, armed) >= static_cast<std::int64_t>(g.timeout_max() - g.granularity(g.depth - 1)));
    return;
  }
  unsigned level = 0;
  while (level + 1 < g.depth && delta >= g.level_start(level + 1)) ++level;
  const auto gran = static_cast<std::int64_t>(g.granularity(level));
  if (g.round == WheelRound::up) {
    CHECK(late >= 1);
    CHECK(late <= gran);
  } else {
    CHECK(late <= 0); // rounding down in place: early, never late
    CHECK(late > -gran);
  }
}

const char* const kOtherGeometries[] = {
    "wheel:rfc-2015",
    "wheel:spelvin-2016",
    "wheel:v2-2016",
    "wheel:modern:round=down",
    "wheel:bits=4/6/3/5:shift=2/3/2",
    "wheel:bits=6x4:shift=5",
    "wheel:classic:round=up",
    "wheel:bits=4x6:mode=cascade",
    "wheel:bits=3/9/2/7:mode=cascade:round=up",
};

} // namespace

TEST_CASE("configurable wheel: other geometries keep their promise against the exact heap") {
  for (const char* spec : kOtherGeometries) {
    const WheelGeometry g = parse_wheel_spec(spec).geometry(250);
    for (const Jiffies start : kStarts(250)) {
      CAPTURE(spec);
      CAPTURE(start);
      const Jiffies limit = g.mode == WheelMode::cascade ? std::min<Jiffies>(g.max_tval() + 300, Jiffies{1} << 20)
                                                         : g.cutoff() + 300;
      const auto delays = boundary_delays(g, limit);
      HeapQueue heap({.hz = 250, .start_jiffies = start});
      const auto exact = fire_all(heap, delays, false);
      std::map<TimerId, Jiffies> got;
      if (g.mode == WheelMode::cascade) {
        // Ticking through 2^32 jiffies is too slow: wide cascading
        // geometries are checked on the random streams below.
        if (g.max_tval() >= (Jiffies{1} << 20)) continue;
        CascadingWheel q({.hz = 250, .start_jiffies = start, .geometry = g, .slack = {}});
        got = fire_all(q, delays, true);
      } else {
        InPlaceWheel q({.hz = 250, .start_jiffies = start, .geometry = g});
        got = fire_all(q, delays, false);
      }
      REQUIRE(got.size() == delays.size());
      for (std::size_t i = 0; i < delays.size(); ++i) {
        CHECK(exact.at(static_cast<TimerId>(i)) == start + delays[i]); // the heap: exactly at its expiry
        check_promise(g, start, start + delays[i], got.at(static_cast<TimerId>(i)));
        // explain's story ends where the queue fired it.
        const WheelExplanation e = explain_wheel(g, start, start + delays[i]);
        if (!e.truncated) CHECK(e.fires_at == got.at(static_cast<TimerId>(i)));
      }
    }
  }
}

TEST_CASE("configurable wheel: other geometries keep their promise on random streams") {
  const int ops = kThorough ? 20000 : 2000;
  for (const char* spec : kOtherGeometries) {
    const WheelGeometry g = parse_wheel_spec(spec).geometry(250);
    CAPTURE(spec);
    // Arm timers at random times while ticking, callbacks re-arming some;
    // each firing is checked against the arm that set it.
    std::mt19937_64 rng(std::hash<std::string>{}(spec));
    auto run = [&](auto q) {
      constexpr unsigned kTimers = 64;
      std::vector<Jiffies> armed_at(kTimers), expires(kTimers);
      std::vector<bool> pending(kTimers, false);
      std::size_t fired = 0;
      for (unsigned i = 0; i < kTimers; ++i) q.create();
      auto cb = [&](const FiredTimer& f) {
        REQUIRE(pending[f.id]);
        pending[f.id] = false;
        CHECK(f.expires == expires[f.id]);
        check_promise(g, armed_at[f.id], expires[f.id], q.jiffies());
        ++fired;
      };
      for (int op = 0; op < ops; ++op) {
        const TimerId id = static_cast<TimerId>(rng() % kTimers);
        const unsigned r = static_cast<unsigned>(rng() % 10);
        if (r < 4) {
          const std::int64_t d = pick_delay(rng);
          if (d < 1 || (g.mode == WheelMode::in_place && static_cast<Jiffies>(d) >= g.cutoff() - 2)) continue;
          // The clock a placement sees is jiffies, or jiffies + 1 right
          // after a softirq: a delta of d or d - 1, and the bounds of d's
          // level hold for both.
          const Jiffies E = q.jiffies() + static_cast<Jiffies>(d);
          if (pending[id] && expires[id] == E) continue; // the same-expiry shortcut: the old arm stands
          armed_at[id] = q.jiffies();
          expires[id] = E;
          q.arm(id, E);
          pending[id] = true;
        } else if (r < 5) {
          if (q.cancel(id)) pending[id] = false;
        } else {
          tick_to(q, q.jiffies() + 1 + rng() % 50, cb);
        }
      }
      CHECK(fired > 0);
    };
    if (g.mode == WheelMode::cascade)
      run(CascadingWheel({.hz = 250, .geometry = g, .slack = {}}));
    else
      run(InPlaceWheel({.hz = 250, .geometry = g, .deferrable_base = false}));
  }
}

unsigned g_offset_slot(const WheelGeometry& g, const WheelExplanation& w) {
  return g.offset(w.hops.at(0).level) + w.hops[0].slot;
}

TEST_CASE("configurable wheel: explain tells the kernel wheels' story for the presets") {
  const WheelGeometry modern = parse_wheel_spec("modern").geometry(250);
  const WheelGeometry small = parse_wheel_spec("classic-small").geometry(250);
  const WheelGeometry classic = parse_wheel_spec("classic").geometry(250);
  for (const Jiffies start : kStarts(250))
    for (const Jiffies d : boundary_delays(modern, modern.cutoff() + 5000)) {
      CAPTURE(start);
      CAPTURE(d);
      const ModernExplanation m = explain_modern(start, start + d, 250);
      const WheelExplanation w = explain_wheel(modern, start, start + d);
      CHECK(w.fires_at == m.index.bucket_expiry);
      CHECK(w.hops.at(0).level == m.index.level);
      CHECK(g_offset_slot(modern, w) == m.index.idx);
      CHECK(w.hops[0].clamped == m.index.clamped);
      for (const auto& [g, kg] : std::array{std::pair{small, classic::Geometry::base_small()}, std::pair{classic, classic::Geometry::normal()}}) {
        const ClassicExplanation c = explain_classic(start, start + d, std::nullopt, kg);
        const WheelExplanation x = explain_wheel(g, start, start + d);
        CHECK(x.fires_at == c.runs_at);
        // The same placements, up to explain_classic()'s folding of laps.
        if (c.hops.size() == x.hops.size())
          for (std::size_t i = 0; i < c.hops.size(); ++i) {
            CHECK(x.hops[i].clock == c.hops[i].timer_jiffies);
            CHECK(x.hops[i].level + 1 == c.hops[i].slot.array);
            CHECK(x.hops[i].slot == c.hops[i].slot.slot);
          }
        else
          CHECK(c.hops.size() < x.hops.size());
      }
    }
}
