// Geometry of the non-cascading timer wheel of Linux 4.8+ (as in 6.1
// kernel/time/timer.c): 64 buckets per level, each level 8x coarser than the
// one below, a timer placed once by its distance from base->clk and expired
// in place, rounded *up* to its level's granularity.
//
//   Level Offset  Granularity   Delta range (jiffies)      HZ=1000: gran   range
//   0        0           1      0 ..         62                   1 ms   0 ms - 62 ms
//   1       64           8      63 ..        503                  8 ms   63 ms - 503 ms
//   2      128          64      504 ..       4031                64 ms   504 ms - 4 s
//   3      192         512      4032 ..      32255              512 ms   4 s - 32 s
//   4      256        4096      32256 ..     258047           4.096 s   32 s - 4.3 m
//   5      320       32768      258048 ..    2064383         32.768 s   4.3 m - 34 m
//   6      384      262144      2064384 ..   16515071           4.4 m   34 m - 4.6 h
//   7      448     2097152      16515072 ..  132120575           35 m   4.6 h - 1.5 d
//   8      512    16777216      132120576 .. 1056964607         4.6 h   1.5 d - 12 d
//
// LVL_DEPTH is 9 for HZ > 100 and 8 for HZ <= 100 (level 7 is then the last).
// Delta ranges are the same in jiffies for every HZ; they start at
// LVL_START(n) = 63 << 3(n-1), not at the [64*gran/8, 64*gran) bounds printed
// in timer.c's own comment (see docs and the reference digest, §3.1).
// Deltas at or beyond WHEEL_TIMEOUT_CUTOFF = LVL_START(depth) are clamped to
// clk + WHEEL_TIMEOUT_MAX and so fire *early*; negative deltas (expiry in the
// past) go to level 0 bucket clk & 63 and fire at clk.
// `timersim levels --design modern --hz H` prints this table for any HZ.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <bit>
#include <cstdint>

namespace timersim::modern {

inline constexpr unsigned kClkShift = 3;  // LVL_CLK_SHIFT
inline constexpr unsigned kLevelBits = 6; // LVL_BITS
inline constexpr unsigned kLevelSize = 1u << kLevelBits;
inline constexpr unsigned kLevelMask = kLevelSize - 1;
inline constexpr unsigned kClkMask = (1u << kClkShift) - 1;
inline constexpr unsigned kMaxDepth = 9;
inline constexpr Jiffies kNextTimerMaxDelta = (Jiffies{1} << 30) - 1; // NEXT_TIMER_MAX_DELTA

// 6.1 LVL_DEPTH: deeper wheel when HZ > 100 so ~12 days stay reachable at HZ=1000.
constexpr unsigned depth_for_hz(unsigned hz) noexcept { return hz > 100 ? 9 : 8; }

constexpr unsigned level_shift(unsigned level) noexcept { return level * kClkShift; }
constexpr Jiffies level_granularity(unsigned level) noexcept { return Jiffies{1} << level_shift(level); }
constexpr unsigned level_offset(unsigned level) noexcept { return level * kLevelSize; }
// LVL_START(n): the smallest delta that no longer fits level n-1.
constexpr Jiffies level_start(unsigned level) noexcept {
    return level == 0 ? 0 : Jiffies{kLevelSize - 1} << level_shift(level - 1);
}
constexpr Jiffies timeout_cutoff(unsigned depth) noexcept { return level_start(depth); }
constexpr Jiffies timeout_max(unsigned depth) noexcept {
    return timeout_cutoff(depth) - level_granularity(depth - 1);
}
constexpr unsigned wheel_size(unsigned depth) noexcept { return kLevelSize * depth; }

struct WheelIndex {
    unsigned idx;          // the kernel's bucket number, 0 .. 64*depth-1
    unsigned level;        // idx / 64
    Jiffies bucket_expiry; // the clock value at which this bucket is collected
    bool clamped;          // delta >= cutoff: fires at clk + MAX, before expires
    bool past;             // expires before clk: level 0 bucket of clk itself
};

// 6.1 calc_index(): round up to the level granularity so a timer never fires
// early, even when armed at the very edge of a tick.
constexpr WheelIndex place_at_level(Jiffies expires, unsigned level) noexcept {
    const Jiffies q = (expires >> level_shift(level)) + 1;
    return WheelIndex{static_cast<unsigned>(level_offset(level) + (q & kLevelMask)), level,
                      q << level_shift(level), false, false};
}

// The level of a delta below WHEEL_TIMEOUT_CUTOFF, in closed form. Level L
// holds [63 << 3(L-1), 63 << 3L), so q = delta / 63 lies in [8^(L-1), 8^L)
// and its bit width in 3L-2 .. 3L (q = 0, i.e. delta < 63, is level 0). The
// kernel tests the bounds one after the other; this gives the same level for
// every such delta at depth 8 and 9 (checked exhaustively for all 2^30 of
// them, and against the chain at every bound by tests/wheel), in a few
// instructions and without the unpredictable branches (arms alternate
// between levels) or a loop over the runtime depth.
//
// Every delta below the cutoff is below 2^30, where delta / 63 is exactly
// (delta * ceil(2^36 / 63)) >> 36 (the rounding error stays under
// 2^30 / 2^36 < 1/63; part of the exhaustive check): one multiply, where the
// compiler's general 64-bit division by 63 takes seven instructions.
// bit_width(2q+1) is bit_width(q) + 1 without bit_width(0)'s special case.
constexpr unsigned level_of_delta(Jiffies delta) noexcept {
    static_assert(timeout_cutoff(kMaxDepth) <= (Jiffies{1} << 30));
    constexpr Jiffies kDiv63 = ((Jiffies{1} << 36) + kLevelMask - 1) / kLevelMask;
    const auto q = static_cast<std::uint32_t>((delta * kDiv63) >> 36);
    return (static_cast<unsigned>(std::bit_width(2 * q + 1)) + 1) / 3;
}

// 6.1 calc_wheel_index(): the level is chosen by the distance from clk.
// Past and clamped deltas lie at or beyond the cutoff and take the slow path.
constexpr WheelIndex calc_wheel_index(Jiffies expires, Jiffies clk, unsigned depth) noexcept {
    const Jiffies delta = expires - clk;
    if (delta < timeout_cutoff(depth)) [[likely]]
        return place_at_level(expires, level_of_delta(delta));
    if (static_cast<std::int64_t>(delta) < 0)
        return WheelIndex{static_cast<unsigned>(clk & kLevelMask), 0, clk, false, true};
    WheelIndex wi = place_at_level(clk + timeout_max(depth), depth - 1);
    wi.clamped = true;
    return wi;
}

} // namespace timersim::modern
