#include "wheel/views/explain.hpp"

#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"

namespace timersim {

ModernExplanation explain_modern(Jiffies jiffies, Jiffies expires, unsigned hz, std::optional<Jiffies> clk) {
    ModernExplanation e{};
    e.clk = clk.value_or(jiffies);
    e.expires = expires;
    e.delta = expires - e.clk;
    e.depth = modern::depth_for_hz(hz);
    e.index = modern::calc_wheel_index(expires, e.clk, e.depth);
    const unsigned level = e.index.level;
    e.level_lo = modern::level_start(level);
    e.level_hi = level + 1 < e.depth ? modern::level_start(level + 1) - 1 : modern::timeout_cutoff(e.depth) - 1;
    e.late = jiffies_diff(e.index.bucket_expiry, expires);
    return e;
}

// Follows the timer through the cascades analytically: a timer in tv2..tv5
// is re-placed when timer_jiffies reaches the start of its slot, i.e. the
// (clamped) expiry with that array's slot bits and everything below cleared.
// At that moment the lower arrays' indices are 0, so 4.x __run_timers()
// cascades exactly this slot (tests check this against ClassicWheel).
ClassicExplanation explain_classic(Jiffies jiffies, Jiffies expires, std::optional<std::int64_t> slack,
                                   const classic::Geometry& g, std::optional<Jiffies> timer_jiffies) {
    ClassicExplanation e{};
    e.requested = expires;
    e.slack = slack;
    e.expires = slack ? classic::apply_slack(expires, jiffies, *slack) : expires;
    Jiffies t = timer_jiffies.value_or(jiffies);
    for (;;) {
        const classic::Slot s = classic::calc_slot(e.expires, t, g);
        e.hops.push_back({t, s});
        if (s.array == 1) {
            e.runs_at = s.past ? t : e.expires;
            break;
        }
        const Jiffies slot_width = Jiffies{1} << g.shift(s.array);
        const Jiffies placed_at = s.clamped ? t + g.max_tval() : e.expires;
        const Jiffies next = placed_at & ~(slot_width - 1);
        // From a slot-aligned T, each clamped lap advances T by the same
        // stride; skip the laps that would still be clamped after this one.
        if (s.clamped && (t & (slot_width - 1)) == 0) {
            const Jiffies stride = next - t;
            const Jiffies beyond = e.expires - t - g.max_tval(); // > 0 while clamped
            const Jiffies more = (beyond - 1) / stride;          // further clamped laps
            if (more > 0) {
                e.hops.back().laps = more + 1;
                t += (more + 1) * stride;
                continue;
            }
        }
        t = next;
    }
    return e;
}

// In place: one placement (InPlaceWheel::index_of()). Cascading: level L's
// slot s is cascaded at the first step T' >= T that is a multiple of
// level L's slot width with (T' >> shift) & mask == s (the lower levels'
// indices are all 0 then, so __run_timers() does cascade it), and the timer
// is placed again from there.
WheelExplanation explain_wheel(const WheelGeometry& g, Jiffies jiffies, Jiffies expires, std::optional<Jiffies> clk) {
    WheelExplanation e{};
    e.geometry = g;
    e.expires = expires;
    Jiffies t = clk.value_or(jiffies);
    if (g.mode == WheelMode::in_place) {
        const InPlaceWheel::Index ix = InPlaceWheel::index_of(g, expires, t);
        const Jiffies delta = expires - t;
        e.hops.push_back({t, ix.level, ix.idx - g.offset(ix.level), static_cast<std::int64_t>(delta) < 0,
                          static_cast<std::int64_t>(delta) >= 0 && delta >= g.cutoff()});
        e.fires_at = ix.bucket_expiry;
    } else {
        constexpr std::size_t kMaxHops = 24;
        for (;;) {
            const CascadingWheel::Slot s = CascadingWheel::slot_of(g, expires, t);
            e.hops.push_back({t, s.level, s.slot, s.past, s.clamped});
            if (s.level == 0) {
                e.fires_at = s.past ? t : expires;
                break;
            }
            if (e.hops.size() == kMaxHops) {
                e.truncated = true;
                e.fires_at = expires; // the laps end at level 0, exactly (rounding up: checked by the tests)
                break;
            }
            const unsigned shift = g.shift[s.level];
            const unsigned mask = g.slots(s.level) - 1;
            const Jiffies k0 = (t >> shift) + ((t & ((Jiffies{1} << shift) - 1)) != 0 ? 1 : 0);
            const Jiffies k = k0 + ((s.slot - static_cast<unsigned>(k0 & mask)) & mask);
            t = k << shift;
        }
    }
    e.late = jiffies_diff(e.fires_at, expires);
    return e;
}

} // namespace timersim
