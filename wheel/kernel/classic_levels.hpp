// Geometry of the classic cascading timer wheel (Linux 2.6 .. 4.7,
// kernel/timer.c then kernel/time/timer.c). Five arrays; a timer is placed by
// its distance d = expires - timer_jiffies and moved down ("cascaded") one
// array at a time as timer_jiffies approaches, so it always runs at exactly
// its expiry jiffy, at the price of re-placing it up to four times.
//
//   Array  Slots  Slot width   Delta range d (jiffies)      Cascaded when T is a multiple of
//   tv1     256          1      0 .. 255                     - (runs one slot per jiffy)
//   tv2      64        256      256 .. 16383                 256       (every 256 jiffies)
//   tv3      64      16384      16384 .. 1048575             16384
//   tv4      64    1048576      1048576 .. 67108863          1048576
//   tv5      64   67108864      67108864 .. MAX_TVAL         67108864
//
// CONFIG_BASE_SMALL shrinks tv1 to 64 slots and tv2..tv5 to 16 (TVR 6 / TVN 4,
// MAX_TVAL = 2^22 - 1). Expiries in the past go to tv1[T & 255] and run in the
// next loop step; d > MAX_TVAL (64-bit only) is placed as if it were MAX_TVAL
// while timer->expires stays intact, so the timer laps tv5 and still runs exactly.
// `timersim levels --design classic --hz H` prints this table in ms for any HZ.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <array>
#include <bit>
#include <cstdint>

namespace timersim::classic {

inline constexpr unsigned kArrays = 5; // tv1..tv5
// 4.x NEXT_TIMER_MAX_DELTA: the answer of the next-event search when nothing is found.
inline constexpr Jiffies kNextTimerMaxDelta = (Jiffies{1} << 30) - 1;

struct Geometry {
    unsigned tvr_bits = 8; // TVR_BITS: tv1 has 2^tvr_bits slots
    unsigned tvn_bits = 6; // TVN_BITS: tv2..tv5 have 2^tvn_bits slots

    static constexpr Geometry normal() noexcept { return {8, 6}; }
    static constexpr Geometry base_small() noexcept { return {6, 4}; }

    constexpr unsigned tvr_size() const noexcept { return 1u << tvr_bits; }
    constexpr unsigned tvn_size() const noexcept { return 1u << tvn_bits; }
    constexpr unsigned slots(unsigned array) const noexcept {
        return array == 1 ? tvr_size() : tvn_size();
    }
    // Bit position of array `array`'s slot index inside an expiry (tv1: 0).
    constexpr unsigned shift(unsigned array) const noexcept {
        return array == 1 ? 0 : tvr_bits + (array - 2) * tvn_bits;
    }
    // Smallest delta that no longer fits array `array` (array 1..4).
    constexpr Jiffies range_end(unsigned array) const noexcept {
        return Jiffies{1} << (tvr_bits + (array - 1) * tvn_bits);
    }
    // MAX_TVAL: the largest delta tv5 represents.
    constexpr Jiffies max_tval() const noexcept {
        return (Jiffies{1} << (tvr_bits + 4 * tvn_bits)) - 1;
    }
    // Lists: tv1 slots first, then 64 (or 16) per tv2..tv5.
    constexpr unsigned list_id(unsigned array, unsigned slot) const noexcept {
        return array == 1 ? slot : tvr_size() + (array - 2) * tvn_size() + slot;
    }
    constexpr unsigned wheel_lists() const noexcept { return tvr_size() + 4 * tvn_size(); }
};

struct Slot {
    unsigned array; // 1..5 (tv1..tv5)
    unsigned slot;
    bool past;      // expiry before timer_jiffies: tv1[T & mask]
    bool clamped;   // d > MAX_TVAL: slot computed from T + MAX_TVAL
};

// 4.x __internal_add_timer(): the array by distance from timer_jiffies, the
// slot by the expiry's own bits.
constexpr Slot calc_slot(Jiffies expires, Jiffies timer_jiffies, const Geometry& g) noexcept {
    const Jiffies d = expires - timer_jiffies;
    for (unsigned array = 1; array <= 4; ++array)
        if (d < g.range_end(array))
            return {array, static_cast<unsigned>((expires >> g.shift(array)) & (g.slots(array) - 1)),
                    false, false};
    if (static_cast<std::int64_t>(d) < 0)
        return {1, static_cast<unsigned>(timer_jiffies & (g.tvr_size() - 1)), true, false};
    const bool clamped = d > g.max_tval();
    const Jiffies at = clamped ? timer_jiffies + g.max_tval() : expires;
    return {5, static_cast<unsigned>((at >> g.shift(5)) & (g.tvn_size() - 1)), false, clamped};
}

// calc_slot() for the wheel's hot path: the array a delta lands in depends
// only on its bit width (d < range_end(a) = 2^(tvr + (a-1) tvn) is
// bit_width(d) <= tvr + (a-1) tvn), so one table lookup replaces the loop
// over the arrays, and the slot comes from per-array shift, mask and first
// list. Deltas in the past (bit 63 set) or beyond MAX_TVAL map to 0: the
// caller takes calc_slot() for those.
class SlotTable {
public:
    constexpr explicit SlotTable(const Geometry& g) noexcept {
        for (unsigned bw = 0; bw <= 64; ++bw) {
            array_of_width_[bw] = 0;
            for (unsigned a = 1; a <= 4 && array_of_width_[bw] == 0; ++a)
                if (bw <= g.tvr_bits + (a - 1) * g.tvn_bits) array_of_width_[bw] = static_cast<std::uint8_t>(a);
            if (array_of_width_[bw] == 0 && bw <= g.tvr_bits + 4 * g.tvn_bits) array_of_width_[bw] = 5;
        }
        for (unsigned a = 1; a <= kArrays; ++a) {
            shift_[a] = static_cast<std::uint8_t>(g.shift(a));
            mask_[a] = g.slots(a) - 1;
            first_list_[a] = g.list_id(a, 0);
        }
    }
    // The wheel list of an expiry at delta d = expires - timer_jiffies, or
    // nothing (kNone) when calc_slot() must decide (past or clamped).
    static constexpr unsigned kNone = ~0u;
    constexpr unsigned list_of(Jiffies expires, Jiffies d) const noexcept {
        // bit_width(d | 1): 0 and 1 are both tv1 deltas, without bit_width(0)'s branch.
        const unsigned a = array_of_width_[std::bit_width(d | 1)];
        if (a == 0) [[unlikely]] return kNone;
        return first_list_[a] + (static_cast<unsigned>(expires >> shift_[a]) & mask_[a]);
    }

private:
    std::array<std::uint8_t, 65> array_of_width_{};
    std::array<std::uint8_t, kArrays + 1> shift_{};
    std::array<unsigned, kArrays + 1> mask_{};
    std::array<unsigned, kArrays + 1> first_list_{};
};

// 4.x apply_slack(): let mod_timer() push the expiry later, within a limit,
// to the value with the most trailing zero bits, so that timers batch up.
// slack < 0 is the kernel default: 1/256 of the delay from *jiffies* (not
// timer_jiffies), nothing for delays under 256 jiffies.
constexpr Jiffies apply_slack(Jiffies expires, Jiffies jiffies, std::int64_t slack) noexcept {
    Jiffies limit;
    if (slack >= 0) {
        limit = expires + static_cast<Jiffies>(slack);
    } else {
        const std::int64_t delta = static_cast<std::int64_t>(expires - jiffies);
        if (delta < 256) return expires;
        limit = expires + static_cast<Jiffies>(delta / 256);
    }
    const Jiffies mask = expires ^ limit;
    if (mask == 0) return expires;
    const unsigned bit = 63u - static_cast<unsigned>(__builtin_clzll(mask));
    return limit & ~((Jiffies{1} << bit) - 1);
}

} // namespace timersim::classic
