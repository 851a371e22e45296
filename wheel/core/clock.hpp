// A run's clock as one value: CONFIG_HZ, the jiffies at time 0 and where
// they came from. It is resolved once, from --hz or from the trace a run
// replays, and every layer below takes it as given instead of guessing HZ
// and correcting it later. kMaxHz is the one bound every HZ is checked
// against: options, trace headers, the engine.
#pragma once

#include "wheel/core/jiffies.hpp"

namespace timersim {

// The kernel offers HZ of 100, 250, 300 and 1000; timersim takes any
// 1..kMaxHz (finer ticks are a what-if, not a kernel).
inline constexpr unsigned kMaxHz = 10000;

constexpr bool valid_hz(unsigned hz) noexcept { return hz >= 1 && hz <= kMaxHz; }

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
