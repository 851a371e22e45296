// The Configs the queues share. Designated initializers name every field
// (`{.hz = hz, .geometry = g}`), and C++20 cannot name a base's field that
// way, so a shared Config is one aggregate that a queue names as its own
// (`using Config = ...`), not a base a queue's Config derives from.
#pragma once

#include "wheel/core/clock.hpp"
#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <optional>

namespace timersim {

// Where a queue's clock starts: what a queue with nothing else to
// configure (the exact heap) takes. No Config defaults its hz: the run's
// clock is resolved once, above (wheel/core/clock.hpp), and the queue's
// constructor rejects a Config without one.
struct ClockConfig {
    unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
    std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
};

// A cascading wheel of Linux <= 4.7's rules: ClassicWheel with the
// kernel's tv1..tv5 geometry, CascadingWheel with any (wheel:SPEC). The
// default geometry is the kernel's own, in the geometry type's terms.
template <class Geometry, Geometry (*KernelGeometry)()>
struct CascadeConfig {
    unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
    std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
    Geometry geometry = KernelGeometry();
    // Timer slack applied by mod_timer(): nullopt = off (never applied),
    // -1 = the kernel default (delay/256), N >= 0 = a fixed N jiffies.
    std::optional<std::int64_t> slack = -1;
};

} // namespace timersim
