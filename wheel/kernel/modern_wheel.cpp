#include "wheel/kernel/modern_wheel.hpp"

#include <algorithm>

namespace timersim {

using namespace modern;

ModernWheel::ModernWheel(Config config)
    : depth_(depth_for_hz(config.hz)), cutoff_(timeout_cutoff(depth_)),
      deferrable_base_(config.deferrable_base),
      jiffies_(config.start_jiffies.value_or(initial_jiffies(config.hz))),
      bases_{Base(wheel_size(depth_) + depth_, jiffies_), Base(wheel_size(depth_) + depth_, jiffies_)} {
    check_config_hz(config.hz);
}

// The slow half of forward_timer_base(): the base is behind jiffies.
void ModernWheel::forward_idle_base(Base& b) noexcept {
    timersim::forward_idle_base(b, jiffies_);
}

// 6.1 collect_expired_timers(): clk jumps to next_expiry; the level-L bucket
// of clock value c is looked at only while the lower 3L bits of c are zero.
unsigned ModernWheel::collect_expired_timers(Base& b) noexcept {
    Jiffies c = b.clk = b.next_expiry;
    b.collected_clk = c;
    unsigned levels = 0;
    for (unsigned level = 0; level < depth_; ++level) {
        const unsigned bit = static_cast<unsigned>(c & kLevelMask);
        ++counters_.buckets_scanned;
        if (b.pending_map[level] & (std::uint64_t{1} << bit)) {
            b.pending_map[level] &= ~(std::uint64_t{1} << bit);
            b.buckets.collect(level_offset(level) + bit, work_list(level));
            levels |= 1u << level;
        }
        if (c & kClkMask) break;
        c >>= kClkShift;
    }
    return levels;
}

// 6.1 __next_timer_interrupt(): per level, the circular distance from the
// level's current bucket to the next pending one, from the bitmap. A level's
// clock is rounded up when the lower level has not wrapped yet. Stops early
// when nothing in a higher level can come before what was found.
ModernWheel::NextSearch ModernWheel::search_next_expiry(const Base& b) const noexcept {
    Jiffies next = b.clk + kNextTimerMaxDelta;
    Jiffies c = b.clk;
    unsigned steps = 0;
    for (unsigned level = 0; level < depth_; ++level) {
        ++steps;
        const unsigned start = static_cast<unsigned>(c & kLevelMask);
        const std::uint64_t rotated = std::rotr(b.pending_map[level], static_cast<int>(start));
        const Jiffies level_clk = c & kClkMask;
        if (rotated != 0) {
            const unsigned pos = static_cast<unsigned>(std::countr_zero(rotated));
            const Jiffies at = (c + pos) << level_shift(level);
            if (time_before(at, next)) next = at;
            if (pos <= ((kClkMask + 1 - level_clk) & kClkMask)) break;
        }
        c = (c >> kClkShift) + (level_clk ? 1 : 0);
    }
    return NextSearch{next, steps};
}

Jiffies ModernWheel::next_timer_search(Base& b) noexcept {
    const NextSearch s = search_next_expiry(b);
    return note_next_search(b, s.next, s.steps, counters_);
}

bool ModernWheel::bucket_due() const noexcept {
    for (const Base& b : bases_) {
        if (b.carry_levels != 0) return true;
        if (b.queued == 0) continue;
        if (time_before_eq(search_next_expiry(b).next, jiffies_)) return true;
    }
    return false;
}

std::optional<Jiffies> ModernWheel::peek_next_event() const noexcept {
    const Base& b = bases_[base_std];
    if (b.carry_levels != 0) return jiffies_;
    if (b.queued == 0) return std::nullopt;
    return search_next_expiry(b).next;
}

Placement ModernWheel::last_placement(TimerId id) const {
    pool_.check(id);
    const Node& n = pool_[id];
    Placement p = placement_of(n);
    p.deferrable_base = n.base == base_def;
    p.level = n.idx / kLevelSize;
    p.slot = n.idx;
    // Gone from its bucket, the timer has no bucket expiry (0).
    if (n.pending) p.bucket_expiry = bucket_expiry_of(bases_[n.base], n);
    return p;
}

// A pending timer's bucket expiry, which the node does not store: a
// bucket's timers all run when it is collected, and clk never passes a
// pending bucket's collection, so it is the first clock value from clk on
// at which the bucket is looked at (a multiple of the level's granularity
// whose level index is the bucket's slot). That is the value calc_index()
// gave: it lies in [clk, clk + 64 * granularity) when the timer is queued
// (6.1 calc_index() rounds up into that range), and stays the first such
// value while clk moves towards it. A collected timer's is the clock it was
// collected at.
Jiffies ModernWheel::bucket_expiry_of(const Base& b, const Node& n) const noexcept {
    if (!b.buckets.holds(n.idx, n)) return b.collected_clk;
    const unsigned level = n.idx / kLevelSize;
    const unsigned shift = level_shift(level);
    // clk in the level's units, rounded up; then on to the bucket's slot.
    const Jiffies units = (b.clk >> shift) + ((b.clk & (level_granularity(level) - 1)) != 0 ? 1 : 0);
    return (units + ((n.idx - units) & kLevelMask)) << shift;
}

} // namespace timersim
