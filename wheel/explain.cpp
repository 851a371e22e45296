#include "wheel/explain.hpp"

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

} // namespace timersim
