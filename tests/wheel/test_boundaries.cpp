// The exhaustive boundary probe. One timer in a fresh queue, every delay
// 0..2^14 plus sampled delays up to the cutoff, from starting clocks just
// before level roll-overs, 2^32 and 2^64, and INITIAL_JIFFIES: the classic
// wheel (slack off) and the heap must run it at exactly its expiry, the
// modern wheel at exactly its bucket expiry B, with B - E in [1, 8^L] (never
// early) except the clamped beyond-cutoff case. Expected values come from the
// reference digest's rules (§2.2, §2.3, §3.1, §3.2), restated here, never
// from the queues themselves.
//
// Cost: a fresh ModernWheel or ClassicWheel costs ~1 us to build in a release
// build but ~80 us under ASan at -O0, and the classic wheel walks every jiffy
// (~4 ns release, ~130 ns ASan). So the single-timer probes run in full only
// in optimised, unsanitised builds; elsewhere the exhaustive single-timer
// sweep uses a few of the starting clocks (all delays still), the sampled
// sets are smaller, and the "all delays in one wheel" batches (cheap
// everywhere) cover every clock.
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_levels.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/build_flavour.hpp"

using namespace timersim;

namespace {

constexpr bool kThorough = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED;
constexpr Jiffies kTop = std::numeric_limits<Jiffies>::max();
constexpr Jiffies kExhaustive = Jiffies{1} << 14; // every delay 0..2^14

Jiffies initial(unsigned hz) { return (Jiffies{1} << 32) - 300 * Jiffies{hz}; }

// ---- expected values, from the reference digest ----------------------------

// §3.1: LVL_START(L) in jiffies, the same for every HZ.
constexpr Jiffies kLvlStart[10] = {0, 63, 504, 4032, 32256, 258048, 2064384, 16515072, 132120576, 1056964608};

struct ModernExpect {
  unsigned level;
  Jiffies B;
  bool clamped;
};

// §3.2: the level by the delta's range; B = the next multiple of 8^L after E;
// deltas >= CUTOFF = LVL_START(depth) are placed as clk + CUTOFF - 8^(depth-1).
ModernExpect expect_modern(Jiffies clk, Jiffies E, unsigned depth) {
  const Jiffies delta = E - clk; // the probes never arm in the past
  unsigned level = depth - 1;
  while (level > 0 && delta < kLvlStart[level]) --level;
  Jiffies x = E;
  const bool clamped = delta >= kLvlStart[depth];
  const Jiffies gran = Jiffies{1} << (3 * level);
  if (clamped) x = clk + kLvlStart[depth] - gran;
  return {level, (x / gran + 1) * gran, clamped};
}

struct Hop {
  unsigned array;
  unsigned slot;
};

unsigned classic_shift(unsigned array, const classic::Geometry& g) {
  return array == 1 ? 0 : g.tvr_bits + (array - 2) * g.tvn_bits;
}

// §2.2: array by the distance d from T; slot by the expiry's bits (of
// T + MAX_TVAL when d > MAX_TVAL).
Hop classic_place(Jiffies T, Jiffies E, const classic::Geometry& g) {
  const Jiffies d = E - T;
  const unsigned bits[5] = {g.tvr_bits, g.tvr_bits + g.tvn_bits, g.tvr_bits + 2 * g.tvn_bits,
                            g.tvr_bits + 3 * g.tvn_bits, g.tvr_bits + 4 * g.tvn_bits};
  unsigned array = 5;
  for (unsigned a = 1; a <= 4; ++a)
    if (d < (Jiffies{1} << bits[a - 1])) {
      array = a;
      break;
    }
  const Jiffies max_tval = (Jiffies{1} << bits[4]) - 1;
  const Jiffies x = array == 5 && d > max_tval ? T + max_tval : E;
  const Jiffies slots = array == 1 ? (Jiffies{1} << g.tvr_bits) : (Jiffies{1} << g.tvn_bits);
  return {array, static_cast<unsigned>((x >> classic_shift(array, g)) % slots)};
}

// §2.3: a slot of array a >= 2 is cascaded in the step T that is a multiple
// of 2^shift(a) whose next bits equal the slot; the timer is re-placed
// relative to that T. The path ends in tv1.
std::vector<Hop> classic_path(Jiffies T, Jiffies E, const classic::Geometry& g) {
  std::vector<Hop> path{classic_place(T, E, g)};
  while (path.back().array != 1) {
    const unsigned shift = classic_shift(path.back().array, g);
    const Jiffies n = Jiffies{1} << g.tvn_bits;
    const Jiffies k0 = (T >> shift) + ((T & ((Jiffies{1} << shift) - 1)) ? 1 : 0);
    T = (k0 + (path.back().slot + n - k0 % n) % n) << shift; // the cascading step
    path.push_back(classic_place(T, E, g));
  }
  return path;
}

// ---- probes -----------------------------------------------------------------

struct Fired {
  TimerId id;
  Jiffies base_clk;
  Jiffies at;
};

template <class Q>
auto recorder(const Q& q, std::vector<Fired>& log) {
  return [&q, &log](const FiredTimer& f) { log.push_back({f.id, f.base_clk, q.jiffies()}); };
}

std::string where(const char* what, Jiffies clk, Jiffies delay) {
  return std::string(what) + " clk=" + std::to_string(clk) + " delay=" + std::to_string(delay) + ": ";
}

// Collects failures without flooding the output.
struct Failures {
  std::size_t count = 0;
  void add(const std::string& msg) {
    if (++count <= 5) FAIL_CHECK(msg);
  }
  void report() const { CHECK(count == 0); }
};

// Runs one timer to its expected jiffy: the softirq of the current jiffy, a
// jump (one softirq) or ticks to just before `at`, then a tick onto `at`.
template <class Q>
std::string run_single(Q& q, TimerId id, Jiffies at, bool tick_all_the_way) {
  std::vector<Fired> log;
  auto rec = recorder(q, log);
  const Jiffies clk0 = q.jiffies();
  wake_at(q, clk0, rec);
  if (at != clk0) {
    if (tick_all_the_way)
      tick_to(q, at - 1, rec);
    else if (time_after(at - 1, clk0))
      wake_at(q, at - 1, rec);
    if (!log.empty()) return "fired early, base_clk " + std::to_string(log[0].base_clk);
    tick_to(q, at, rec);
  }
  if (log.size() != 1) return "fired " + std::to_string(log.size()) + " times by its jiffy";
  if (log[0].id != id) return "wrong timer";
  if (log[0].base_clk != at) return "base_clk " + std::to_string(log[0].base_clk) + " != " + std::to_string(at);
  if (log[0].at != at) return "ran at jiffy " + std::to_string(log[0].at);
  tick_to(q, at + 3, rec);
  if (log.size() != 1 || q.pending() != 0) return "fired again";
  return "";
}

std::string probe_modern(unsigned hz, Jiffies clk, Jiffies delay) {
  ModernWheel::Config cfg;
  cfg.hz = hz;
  cfg.start_jiffies = clk;
  ModernWheel q(cfg);
  const TimerId id = q.create();
  const Jiffies E = clk + delay;
  q.arm(id, E);
  const ModernExpect x = expect_modern(clk, E, q.depth());
  const Placement p = q.placement(id);
  const auto at = [&] { return where("modern", clk, delay); };
  if (p.level != x.level) return at() + "level " + std::to_string(p.level) + " != " + std::to_string(x.level);
  if (p.bucket_expiry != x.B) return at() + "B " + std::to_string(p.bucket_expiry) + " != " + std::to_string(x.B);
  if (p.slot != 64 * x.level + ((x.B >> (3 * x.level)) & 63)) return at() + "idx " + std::to_string(p.slot);
  // Never early, late by at most the level granularity; or clamped and early.
  const Jiffies late = x.B - E;
  if (!x.clamped && (late < 1 || late > (Jiffies{1} << (3 * x.level)))) return at() + "lateness out of range";
  if (x.clamped && time_after(x.B, E)) return at() + "clamped but not early";
  const std::string r = run_single(q, id, x.B, x.B - clk <= 70);
  return r.empty() ? r : at() + r;
}

std::string probe_heap(Jiffies clk, Jiffies delay) {
  HeapQueue q(HeapQueue::Config{.hz = 250, .start_jiffies = clk});
  const TimerId id = q.create();
  q.arm(id, clk + delay);
  const std::string r = run_single(q, id, clk + delay, delay <= 70);
  return r.empty() ? r : where("heap", clk, delay) + r;
}

ClassicWheel::Config classic_config(Jiffies clk, const classic::Geometry& g) {
  return ClassicWheel::Config{.hz = 250, .start_jiffies = clk, .geometry = g, .slack = std::nullopt};
}

std::string probe_classic(Jiffies clk, Jiffies delay, const classic::Geometry& g = classic::Geometry::normal()) {
  ClassicWheel q(classic_config(clk, g));
  const TimerId id = q.create();
  const Jiffies E = clk + delay;
  q.arm(id, E);
  const std::vector<Hop> path = classic_path(clk, E, g);
  const Placement p = q.placement(id);
  const auto at = [&] { return where("classic", clk, delay); };
  if (p.level != path[0].array || p.slot != path[0].slot)
    return at() + "placed tv" + std::to_string(p.level) + "[" + std::to_string(p.slot) + "], expected tv" +
           std::to_string(path[0].array) + "[" + std::to_string(path[0].slot) + "]";
  if (p.bucket_expiry != E) return at() + "runs_at " + std::to_string(p.bucket_expiry);
  const std::string r = run_single(q, id, E, false);
  if (!r.empty()) return at() + r;
  if (q.counters().cascade_moves != path.size() - 1)
    return at() + "cascades " + std::to_string(q.counters().cascade_moves) + " != " + std::to_string(path.size() - 1);
  std::array<std::uint64_t, kMaxLevels> from{};
  for (std::size_t i = 0; i + 1 < path.size(); ++i) ++from[path[i].array];
  if (from != q.counters().cascade_moves_from_level) return at() + "cascades per level differ";
  if (q.counters().jiffies_walked != delay + 1) return at() + "walked " + std::to_string(q.counters().jiffies_walked);
  return "";
}

// ---- starting clocks ----------------------------------------------------------

struct Start {
  Jiffies clk;
  unsigned hz;
};

// Just before each modern level rolls over (k * 8^(L+1) - small), 2^32, 2^64,
// and INITIAL_JIFFIES at HZ 100/250/1000.
std::vector<Start> modern_starts() {
  std::vector<Start> out;
  for (unsigned level = 0; level < 9; ++level) {
    const Jiffies period = Jiffies{1} << (3 * (level + 1));
    out.push_back({3 * period - 1, 250});
    out.push_back({3 * period - 2, 250});
    out.push_back({period - 1, 250});
  }
  for (Jiffies c : {(Jiffies{1} << 32) - 1, (Jiffies{1} << 32) - 2, kTop, kTop - 1}) out.push_back({c, 250});
  for (unsigned hz : {100u, 250u, 1000u}) out.push_back({initial(hz), hz});
  return out;
}

// The single-timer sweep's clocks outside thorough builds.
std::vector<Start> modern_starts_reduced() {
  return {{3 * 4096 - 1, 250}, {kTop, 250}, {initial(1000), 1000}};
}

// Just before the classic arrays cascade (k * 2^8, 2^14, 2^20, 2^26), 2^32,
// 2^64, and INITIAL_JIFFIES.
std::vector<Jiffies> classic_starts() {
  std::vector<Jiffies> out;
  for (unsigned s : {8u, 14u, 20u, 26u}) {
    out.push_back(3 * (Jiffies{1} << s) - 1);
    out.push_back(3 * (Jiffies{1} << s) - 2);
  }
  for (Jiffies c : {(Jiffies{1} << 32) - 1, (Jiffies{1} << 32) - 2, kTop, kTop - 1}) out.push_back(c);
  for (unsigned hz : {100u, 250u, 1000u}) out.push_back(initial(hz));
  return out;
}

// Sampled modern delays: every level start +-2, every granularity step
// +-1 around it, the cutoff +-2 and beyond, and random ones (log-uniform).
std::vector<Jiffies> modern_sampled_delays(unsigned depth, std::size_t random_count, std::uint64_t seed) {
  std::set<Jiffies> d;
  for (unsigned level = 1; level <= depth; ++level)
    for (int k = -2; k <= 2; ++k) d.insert(kLvlStart[level] + static_cast<Jiffies>(k));
  for (unsigned level = 0; level < depth; ++level) {
    const Jiffies g = Jiffies{1} << (3 * level);
    for (Jiffies m : {Jiffies{64}, Jiffies{65}, Jiffies{100}})
      for (int k = -1; k <= 1; ++k) d.insert(m * g + static_cast<Jiffies>(k));
  }
  d.insert(Jiffies{1} << 40);
  d.insert(kLvlStart[depth] * 2);
  std::mt19937_64 rng(seed);
  const std::size_t target = d.size() + random_count;
  while (d.size() < target) {
    const unsigned bits = 1 + static_cast<unsigned>(rng() % 30);
    const Jiffies v = rng() % (Jiffies{1} << bits);
    if (v < kLvlStart[depth]) d.insert(v);
  }
  return {d.begin(), d.end()};
}

} // namespace

TEST_CASE("boundaries: the expectations restate the reference tables") {
  // A few rows of §8.1 and §8.2 through the test's own formulas.
  CHECK(expect_modern(0, 63, 9).level == 1);
  CHECK(expect_modern(0, 63, 9).B == 64);
  CHECK(expect_modern(1001, 1064, 9).B == 1072);
  CHECK(expect_modern(0, 132120576, 8).B == 132120576);
  CHECK(expect_modern(0, 132120576, 8).clamped);
  CHECK(expect_modern(0, 1099511627776, 9).B == 1056964608);
  CHECK(expect_modern(4294667296, 4301867296, 9).B == 4302045184);
  CHECK(expect_modern(4294667296, 4301867296, 9).level == 6);
  const auto n = classic::Geometry::normal();
  CHECK(classic_path(0, 1065223, n).size() == 4);
  CHECK(classic_path(0, 1065223, n).back().slot == 7);
  CHECK(classic_path(4294667296, 4294727296, n).size() == 3);
  CHECK(classic_path(5, 67109164, n)[1].array == 2);
  CHECK(classic_path(0, (Jiffies{1} << 32) + 5, n).size() == 3);
  CHECK(classic_path(0, (Jiffies{1} << 32) + 5, n)[1].array == 5);
  CHECK(classic_path(3, 8388688, classic::Geometry::base_small()).size() == 5);
}

TEST_CASE("boundaries: modern wheel, one timer per fresh wheel, every delay 0..2^14") {
  Failures f;
  std::size_t probes = 0;
  for (const Start& s : kThorough ? modern_starts() : modern_starts_reduced()) {
    for (Jiffies d = 0; d <= kExhaustive; ++d) {
      const std::string r = probe_modern(s.hz, s.clk, d);
      if (!r.empty()) f.add(r);
      ++probes;
    }
  }
  f.report();
  CHECK(probes >= 3 * (kExhaustive + 1));
}

TEST_CASE("boundaries: modern wheel, one timer per fresh wheel, sampled delays up to the cutoff") {
  Failures f;
  for (const Start& s : modern_starts()) {
    for (unsigned hz : {100u, 1000u}) {
      const unsigned depth = hz > 100 ? 9 : 8;
      for (Jiffies d : modern_sampled_delays(depth, kThorough ? 2000 : 150, s.clk ^ hz)) {
        const std::string r = probe_modern(hz, s.clk, d);
        if (!r.empty()) f.add(r);
      }
    }
  }
  f.report();
}

TEST_CASE("boundaries: modern wheel, every delay 0..2^14 in one wheel per starting clock") {
  Failures f;
  for (const Start& s : modern_starts()) {
    ModernWheel::Config cfg;
    cfg.hz = s.hz;
    cfg.start_jiffies = s.clk;
    ModernWheel q(cfg);
    std::vector<Jiffies> expect_b;
    for (Jiffies d = 0; d <= kExhaustive; ++d) {
      q.arm(q.create(), s.clk + d);
      expect_b.push_back(expect_modern(s.clk, s.clk + d, q.depth()).B);
    }
    std::vector<Fired> log;
    tick_to(q, s.clk + kExhaustive + 600, recorder(q, log));
    if (log.size() != expect_b.size()) f.add(where("modern batch", s.clk, 0) + "fired " + std::to_string(log.size()));
    std::vector<int> seen(expect_b.size(), 0);
    for (const Fired& x : log) {
      if (++seen[x.id] == 1 && x.base_clk == expect_b[x.id] && x.at == expect_b[x.id]) continue;
      f.add(where("modern batch", s.clk, x.id) + "fired " + std::to_string(seen[x.id]) + " times, base_clk " +
            std::to_string(x.base_clk) + " at jiffy " + std::to_string(x.at) + ", expected " +
            std::to_string(expect_b[x.id]));
    }
  }
  f.report();
}

TEST_CASE("boundaries: heap, one timer per fresh queue, every delay 0..2^14") {
  Failures f;
  for (Jiffies clk : {Jiffies{0}, (Jiffies{1} << 32) - 1, kTop, kTop - 8192, initial(250)}) {
    for (Jiffies d = 0; d <= kExhaustive; ++d) {
      const std::string r = probe_heap(clk, d);
      if (!r.empty()) f.add(r);
    }
    std::mt19937_64 rng(clk);
    for (int i = 0; i < 200; ++i) {
      const std::string r = probe_heap(clk, rng() % (Jiffies{1} << (1 + rng() % 40)));
      if (!r.empty()) f.add(r);
    }
  }
  f.report();
}

TEST_CASE("boundaries: classic wheel (slack off), every delay 0..2^14 in one wheel per starting clock") {
  // Many timers per slot: every cascade moves a whole slot, the shared walk
  // passes every tv2 cascade of the range and one tv3 cascade.
  Failures f;
  for (const classic::Geometry g : {classic::Geometry::normal(), classic::Geometry::base_small()}) {
    for (Jiffies clk : classic_starts()) {
      ClassicWheel q(classic_config(clk, g));
      std::uint64_t cascades = 0;
      for (Jiffies d = 0; d <= kExhaustive; ++d) {
        const TimerId id = q.create();
        q.arm(id, clk + d);
        const std::vector<Hop> path = classic_path(clk, clk + d, g);
        const Placement p = q.placement(id);
        if (p.level != path[0].array || p.slot != path[0].slot) f.add(where("classic batch", clk, d) + "placement");
        cascades += path.size() - 1;
      }
      std::vector<Fired> log;
      auto rec = recorder(q, log);
      wake_at(q, clk, rec); // the softirq of the starting jiffy
      tick_to(q, clk + kExhaustive + 1, rec);
      if (log.size() != kExhaustive + 1) f.add(where("classic batch", clk, 0) + "fired " + std::to_string(log.size()));
      std::vector<int> seen(kExhaustive + 1, 0);
      for (const Fired& x : log) {
        if (++seen[x.id] == 1 && x.base_clk == clk + x.id && x.at == clk + x.id) continue;
        f.add(where("classic batch", clk, x.id) + "fired " + std::to_string(seen[x.id]) + " times, base_clk " +
              std::to_string(x.base_clk) + " at jiffy " + std::to_string(x.at));
      }
      if (q.counters().cascade_moves != cascades)
        f.add(where("classic batch", clk, 0) + "cascade moves " + std::to_string(q.counters().cascade_moves) +
              " != " + std::to_string(cascades));
    }
  }
  f.report();
}

TEST_CASE("boundaries: classic wheel (slack off), one timer per fresh wheel") {
  Failures f;
  const std::vector<Jiffies> starts = classic_starts();
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const Jiffies clk = starts[i];
    // Every delay: to 2^14 from two clocks in thorough builds (each probe
    // walks its whole delay), to 1100 (past four tv2 cascades) elsewhere.
    const Jiffies max = kThorough && (clk == 3 * 16384 - 1 || clk == kTop) ? kExhaustive : 1100;
    for (Jiffies d = 0; d <= max; ++d) {
      const std::string r = probe_classic(clk, d);
      if (!r.empty()) f.add(r);
    }
    // Array boundaries +-2: tv2/tv3 always, tv4 (a 2^20-jiffy walk) from
    // every clock in thorough builds and from two elsewhere.
    std::vector<Jiffies> sampled;
    for (Jiffies b : {Jiffies{256}, Jiffies{16384}})
      for (int k = -2; k <= 2; ++k) sampled.push_back(b + static_cast<Jiffies>(k));
    if (kThorough || i % 8 == 0)
      for (int k = -2; k <= 2; ++k) sampled.push_back((Jiffies{1} << 20) + static_cast<Jiffies>(k));
    std::mt19937_64 rng(clk);
    for (int k = 0; k < (kThorough ? 60 : 8); ++k) sampled.push_back(rng() % (Jiffies{1} << (kThorough ? 18 : 15)));
    for (Jiffies d : sampled) {
      const std::string r = probe_classic(clk, d);
      if (!r.empty()) f.add(r);
    }
  }
  f.report();
}

TEST_CASE("boundaries: classic wheel, CONFIG_BASE_SMALL boundaries up to and beyond MAX_TVAL") {
  // BASE_SMALL makes tv5 (2^18) and MAX_TVAL (2^22 - 1) reachable: the same
  // code paths as the normal wheel's 2^26 and 2^32, walked for real.
  const auto g = classic::Geometry::base_small();
  Failures f;
  std::vector<Jiffies> delays;
  for (Jiffies b : {Jiffies{64}, Jiffies{1024}, Jiffies{16384}, Jiffies{262144}})
    for (int k = -2; k <= 2; ++k) delays.push_back(b + static_cast<Jiffies>(k));
  const Jiffies max_tval = g.max_tval();
  for (int k = -1; k <= 2; ++k) delays.push_back(max_tval + static_cast<Jiffies>(k));
  if (kThorough) delays.push_back(2 * max_tval + 100); // two laps
  for (Jiffies clk : {Jiffies{3 * 262144 - 1}, kTop - 5, initial(250)}) {
    for (Jiffies d : delays) {
      // Outside thorough builds the 2^22-jiffy walks run from one clock only.
      if (!kThorough && d > 262146 && (clk != kTop - 5 || d > max_tval + 1 || d < max_tval)) continue;
      const std::string r = probe_classic(clk, d, g);
      if (!r.empty()) f.add(r);
    }
  }
  f.report();
}
