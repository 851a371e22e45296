#include "wheel/views/wheel_snapshot.hpp"

#include <numeric>
#include <utility>

namespace timersim {

std::uint64_t LevelOccupancy::total() const noexcept {
    return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

unsigned modern_pointer(Jiffies clk, unsigned level) noexcept {
    return static_cast<unsigned>((clk >> modern::level_shift(level)) & modern::kLevelMask);
}

unsigned classic_pointer(Jiffies timer_jiffies, unsigned array, const classic::Geometry& g) noexcept {
    return static_cast<unsigned>((timer_jiffies >> g.shift(array)) & (g.slots(array) - 1));
}

ModernSnapshot snapshot(const ModernWheel& wheel, ModernWheel::BaseIndex base) {
    const ModernWheel::Base& b = wheel.base(base);
    ModernSnapshot s;
    s.jiffies = wheel.jiffies();
    s.clk = b.clk;
    s.next_expiry = b.next_expiry;
    s.next_expiry_stale = b.next_expiry_recalc;
    s.timers_pending = b.timers_pending;
    s.pending = b.queued;
    s.levels.reserve(wheel.depth());
    for (unsigned level = 0; level < wheel.depth(); ++level) {
        LevelOccupancy l;
        l.level = level;
        l.pointer = modern_pointer(b.clk, level);
        l.counts.resize(modern::kLevelSize);
        for (unsigned slot = 0; slot < modern::kLevelSize; ++slot)
            l.counts[slot] = wheel.bucket_count(base, modern::level_offset(level) + slot);
        s.levels.push_back(std::move(l));
    }
    return s;
}

ClassicSnapshot snapshot(const ClassicWheel& wheel) {
    const classic::Geometry& g = wheel.geometry();
    ClassicSnapshot s;
    s.jiffies = wheel.jiffies();
    s.timer_jiffies = wheel.timer_jiffies();
    s.pending = wheel.pending();
    s.levels.reserve(classic::kArrays);
    for (unsigned array = 1; array <= classic::kArrays; ++array) {
        LevelOccupancy l;
        l.level = array;
        l.pointer = classic_pointer(s.timer_jiffies, array, g);
        l.counts.resize(g.slots(array));
        for (unsigned slot = 0; slot < g.slots(array); ++slot) l.counts[slot] = wheel.slot_count(array, slot);
        s.levels.push_back(std::move(l));
    }
    return s;
}

} // namespace timersim
