// Delay tables: the random timer delays the benchmarks arm with, drawn up
// front from fixed seeds so that no random number generator runs inside a
// timed loop and every run arms the same timers.
//
// Two shapes, both over 1 .. kMaxDelay jiffies (240 s at HZ=250):
//   uniform      the bulk of a busy machine's timers: long protocol timeouts
//                (TCP retransmit/keepalive-like). Most land on the modern
//                wheel's levels 3 and 4 and the classic wheel's tv2/tv3.
//   log-uniform  every power of two equally likely, so each wheel level gets
//                a similar share (modern levels 0..4, classic tv1..tv3); used
//                for the single timer that the arm+cancel benchmark times.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/core/timer_queue.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace timersim::bench {

inline constexpr Jiffies kMaxDelay = 60000;

std::vector<Jiffies> uniform_delays(std::size_t count, std::uint64_t seed,
                                    Jiffies lo = 1, Jiffies hi = kMaxDelay);
std::vector<Jiffies> log_uniform_delays(std::size_t count, std::uint64_t seed,
                                        Jiffies lo = 1, Jiffies hi = kMaxDelay);
// `count` indices drawn uniformly from 0 .. range-1.
std::vector<std::uint32_t> uniform_indices(std::size_t count, std::size_t range,
                                           std::uint64_t seed);

// Table lengths for the timed loops: a power of two for delays and a
// different, coprime length for timer picks, so that a (timer, delay) pair
// only repeats after 2^32 iterations and a re-arm never hits the expiry the
// same timer got one table lap earlier.
inline constexpr std::size_t kDelayTableSize = std::size_t{1} << 16;
inline constexpr std::size_t kPickTableSize = kDelayTableSize + 1;

} // namespace timersim::bench
