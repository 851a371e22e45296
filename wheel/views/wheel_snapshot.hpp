// A wheel at one instant, as plain numbers: for every level (modern) or tv
// array (classic), how many timers each bucket holds and which bucket the
// wheel's clock points at. `timersim step` draws these; keeping them apart
// from the drawing lets tests check them against placement() directly.
//
// Pointers:
//   modern level L    (base->clk >> 3L) & 63: the bucket of the current clock
//                     on that level (collect_expired_timers() looks at it when
//                     clk is a multiple of 8^L)
//   classic tv1       timer_jiffies & 255: the slot the next loop step runs
//   classic tv2..tv5  (timer_jiffies >> (8 + 6(n-2))) & 63: the slot the next
//                     cascade of that array takes
// (with CONFIG_BASE_SMALL the classic masks and shifts shrink accordingly).
#pragma once

#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <cstdint>
#include <vector>

namespace timersim {

struct LevelOccupancy {
    unsigned level = 0;                 // modern level 0..depth-1; classic tv number 1..5
    unsigned pointer = 0;               // bucket inside the level the clock points at
    std::vector<std::uint32_t> counts;  // timers per bucket, indexed by slot in the level
    std::uint64_t total() const noexcept;
};

struct ModernSnapshot {
    Jiffies jiffies = 0;
    Jiffies clk = 0;
    Jiffies next_expiry = 0;
    bool next_expiry_stale = false; // next_expiry_recalc: a delete emptied a bucket since the last search
    bool timers_pending = false;
    std::size_t pending = 0;        // timers queued on this base
    std::vector<LevelOccupancy> levels; // level 0 .. depth-1
};

struct ClassicSnapshot {
    Jiffies jiffies = 0;
    Jiffies timer_jiffies = 0;
    std::size_t pending = 0;
    std::vector<LevelOccupancy> levels; // tv1 .. tv5 (level = 1 .. 5)
};

// The bucket of `clk` on modern level `level`.
unsigned modern_pointer(Jiffies clk, unsigned level) noexcept;
// The slot of `timer_jiffies` in classic array `array` (1..5).
unsigned classic_pointer(Jiffies timer_jiffies, unsigned array, const classic::Geometry& geometry) noexcept;

ModernSnapshot snapshot(const ModernWheel& wheel, ModernWheel::BaseIndex base = ModernWheel::base_std);
ClassicSnapshot snapshot(const ClassicWheel& wheel);

} // namespace timersim
