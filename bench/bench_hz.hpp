// The HZ the queue benchmarks build their queues at: 250, the clock their
// delays (delay_tables.hpp, peers_delays.hpp) and their reports ("hz" in
// the context) are written for. No queue's Config defaults its hz
// (wheel/core/clock.hpp): a benchmark names it, `Q::Config{.hz = kBenchHz}`.
#pragma once

namespace timersim::bench {

inline constexpr unsigned kBenchHz = 250;

} // namespace timersim::bench
