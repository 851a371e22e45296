// Helpers shared by the modern wheel's test suites: a firing recorder, a
// wheel at a given clock, running it through a jiffy.
#pragma once

#include "wheel/kernel/modern_levels.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace timersim::test {


constexpr Jiffies kMaxDelta = (Jiffies{1} << 30) - 1; // NEXT_TIMER_MAX_DELTA
constexpr Jiffies kTop = std::numeric_limits<Jiffies>::max(); // 2^64 - 1

struct Fired {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  Jiffies at; // jiffies when the callback ran
};

// A callback that records into `log`.
inline auto recorder(const ModernWheel& q, std::vector<Fired>& log) {
  return [&q, &log](const FiredTimer& f) { log.push_back({f.id, f.expires, f.base_clk, q.jiffies()}); };
}

inline ModernWheel::Config config(unsigned hz, std::optional<Jiffies> start = std::nullopt) {
  ModernWheel::Config c;
  c.hz = hz;
  c.start_jiffies = start;
  return c;
}

inline ModernWheel wheel_at(Jiffies clk, unsigned hz = 250) { return ModernWheel(config(hz, clk)); }

// Runs the current tick's softirq, jumps to just before `at` (one softirq
// that would run anything due earlier) and ticks onto `at`. Returns all that
// fired on the way.
inline std::vector<Fired> run_through(ModernWheel& q, Jiffies at) {
  std::vector<Fired> log;
  auto rec = recorder(q, log);
  wake_at(q, q.jiffies(), rec);
  if (time_after(at, q.jiffies() + 1)) wake_at(q, at - 1, rec);
  tick_to(q, at, rec);
  return log;
}

inline std::vector<TimerId> ids_of(const std::vector<Fired>& log) {
  std::vector<TimerId> out;
  for (const Fired& f : log) out.push_back(f.id);
  return out;
}

} // namespace timersim::test
