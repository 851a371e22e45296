// A run's clock as one value: CONFIG_HZ, the jiffies at time 0 and where
// they came from. It is resolved once, from --hz or from the trace a run
// replays, and every layer below takes it as given instead of guessing HZ
// and correcting it later: no queue's, softirq CPU's or engine's Config
// defaults its hz (0 is none given). kMaxHz is the one bound every HZ is
// checked against: options, trace headers, the queues, the engine.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <stdexcept>
#include <string>

namespace timersim {

// The kernel offers HZ of 100, 250, 300 and 1000; timersim takes any
// 1..kMaxHz (finer ticks are a what-if, not a kernel).
inline constexpr unsigned kMaxHz = 10000;

constexpr bool valid_hz(unsigned hz) noexcept { return hz >= 1 && hz <= kMaxHz; }

// What a queue's or a softirq CPU's constructor does with its Config's hz,
// which has no default: std::invalid_argument unless valid_hz() (0, the
// field's value when a Config is built without one, included).
inline void check_config_hz(unsigned hz) {
    if (!valid_hz(hz)) throw std::invalid_argument("hz must be 1.." + std::to_string(kMaxHz));
}

enum class ClockSource {
    option, // --hz (or its default): a machine booted at INITIAL_JIFFIES
    trace,  // a trace's header, or the HZ its kernel text shows
};

struct Clock {
    unsigned hz;
    Jiffies start_jiffies;
    ClockSource source;
};

// The clock of a machine booted at `hz`: jiffies start at INITIAL_JIFFIES.
constexpr Clock boot_clock(unsigned hz) noexcept { return {hz, initial_jiffies(hz), ClockSource::option}; }

} // namespace timersim
