// Helpers shared by the classic wheel's test suites: a firing recorder and
// a wheel configuration at a given start.
#pragma once

#include "wheel/kernel/classic_levels.hpp"
#include "wheel/kernel/classic_wheel.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace timersim::test {

struct Fired {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  Jiffies at;
};

inline auto recorder(const ClassicWheel& q, std::vector<Fired>& log) {
  return [&q, &log](const FiredTimer& f) { log.push_back({f.id, f.expires, f.base_clk, q.jiffies()}); };
}

inline ClassicWheel::Config config_at(Jiffies start, std::optional<std::int64_t> slack = std::nullopt,
                               classic::Geometry g = classic::Geometry::normal()) {
  return ClassicWheel::Config{.hz = 250, .start_jiffies = start, .geometry = g, .slack = slack};
}

} // namespace timersim::test
