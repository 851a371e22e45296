// Why a timer lands where it does: the placement of one timer in each wheel,
// step by step, computed from the same rules the queues use. Pure data; the
// `timersim explain` command turns it into sentences.
#pragma once

#include "wheel/classic_levels.hpp"
#include "wheel/jiffies.hpp"
#include "wheel/modern_levels.hpp"

#include <optional>
#include <vector>

namespace timersim {

struct ModernExplanation {
    Jiffies clk;      // base->clk after forwarding (an idle base: jiffies)
    Jiffies expires;
    Jiffies delta;    // expires - clk, as the kernel computes it (unsigned)
    unsigned depth;
    modern::WheelIndex index;
    Jiffies level_lo; // delta range of the chosen level: [level_lo, level_hi]
    Jiffies level_hi;
    std::int64_t late; // bucket_expiry - expires (negative: fires early, clamp)
};

ModernExplanation explain_modern(Jiffies jiffies, Jiffies expires, unsigned hz);

struct ClassicHop {
    Jiffies timer_jiffies; // T when the timer is (re)placed
    classic::Slot slot;
    // Beyond MAX_TVAL a timer laps tv5, one slot earlier each lap; a run of
    // such laps is one hop standing for `laps` placements (1 otherwise), so
    // a timeout of years stays a short story.
    std::uint64_t laps = 1;
};

struct ClassicExplanation {
    Jiffies requested;            // expires as passed to mod_timer()
    Jiffies expires;              // after apply_slack()
    std::optional<std::int64_t> slack; // the slack setting used (nullopt: none applied)
    std::vector<ClassicHop> hops; // first placement, then one entry per cascade
    Jiffies runs_at;              // the loop step that runs it
};

// The timer is armed with mod_timer() at `jiffies` on a wheel whose
// timer_jiffies equals jiffies (a wheel that is keeping up).
ClassicExplanation explain_classic(Jiffies jiffies, Jiffies expires, std::optional<std::int64_t> slack,
                                   const classic::Geometry& geometry);

} // namespace timersim
