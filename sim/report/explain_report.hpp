// The sentences of `timersim explain`: where a timer armed with mod_timer()
// lands in each wheel and why, step by step (wheel/views/explain.hpp computes the
// steps). The CLI prints them; the browser playground (web/) shows the same
// text for the timer a user selects.
#pragma once

#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/jiffies.hpp"
#include "wheel/kernel/classic_levels.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace timersim {

// "exactly on time", "3 jiffies (12 ms) late", "1 jiffy (4 ms) EARLY".
std::string late_words(std::int64_t late, unsigned hz);

// `clk`: the wheel's own clock (modern base->clk, classic timer_jiffies) when
// it is not `now`; see explain_modern() and explain_classic().
std::string explain_modern_text(Jiffies now, Jiffies expires, unsigned hz, std::optional<Jiffies> clk);
// modern-6.9: which of the arming CPU's three bases the timer goes on (6.9
// get_timer_cpu_base(): deferrable -> BASE_DEF, else pinned -> BASE_LOCAL,
// else BASE_GLOBAL), then explain_modern_text(): every base is that wheel.
std::string explain_modern69_text(Jiffies now, Jiffies expires, unsigned hz, std::optional<Jiffies> clk, bool pinned,
                                  bool deferrable);
std::string explain_classic_text(Jiffies now, Jiffies expires, unsigned hz, std::optional<std::int64_t> slack,
                                 const classic::Geometry& g, std::optional<Jiffies> clk);

// The first line: "A timer armed at jiffies N to expire at E (+D jiffies, T), HZ=H."
std::string explain_wheel_text(Jiffies now, Jiffies expires, unsigned hz, const std::string& name,
                               const WheelGeometry& g, std::optional<Jiffies> clk);

std::string explain_title(Jiffies now, Jiffies expires, unsigned hz);

} // namespace timersim
