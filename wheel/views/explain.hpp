// Why a timer lands where it does: the placement of one timer in each wheel,
// step by step, computed from the same rules the queues use. Pure data; the
// `timersim explain` command turns it into sentences.
#pragma once

#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/jiffies.hpp"
#include "wheel/kernel/classic_levels.hpp"
#include "wheel/kernel/modern_levels.hpp"

#include <optional>
#include <vector>

namespace timersim {

struct ModernExplanation {
    Jiffies clk;      // base->clk the index is computed from (after forward_timer_base())
    Jiffies expires;
    Jiffies delta;    // expires - clk, as the kernel computes it (unsigned)
    unsigned depth;
    modern::WheelIndex index;
    Jiffies level_lo; // delta range of the chosen level: [level_lo, level_hi]
    Jiffies level_hi;
    std::int64_t late; // bucket_expiry - expires (negative: fires early, clamp)
};

// `clk` is base->clk when calc_wheel_index() runs, i.e. after 6.1
// forward_timer_base(). By default it is `jiffies` (an idle base forwarded to
// jiffies). It differs right after a softirq ran at this jiffy: 6.1
// __run_timers() leaves clk one past the bucket it collected, jiffies + 1,
// and forward_timer_base() never moves clk back.
ModernExplanation explain_modern(Jiffies jiffies, Jiffies expires, unsigned hz,
                                 std::optional<Jiffies> clk = std::nullopt);

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
// timer_jiffies is `timer_jiffies` (default: jiffies, a wheel that is keeping
// up; after the softirq of this jiffy ran, 4.x __run_timers() has left it at
// jiffies + 1). Slack is measured from jiffies (4.4 apply_slack()), the slot
// from timer_jiffies (4.4 internal_add_timer()).
ClassicExplanation explain_classic(Jiffies jiffies, Jiffies expires, std::optional<std::int64_t> slack,
                                   const classic::Geometry& geometry,
                                   std::optional<Jiffies> timer_jiffies = std::nullopt);

// Any geometry of the configurable wheel (wheel/configurable/wheel_spec.hpp). `clk` is
// base->clk (in place) or timer_jiffies (cascade) when the timer is placed,
// by default `jiffies`, as in the two explanations above. No slack: the
// cascading wheel's mod_timer() slack is explain_classic()'s business.
struct WheelHop {
    Jiffies clock;  // clk / timer_jiffies when the timer is (re)placed
    unsigned level; // 0-based
    unsigned slot;  // inside the level
    bool past;
    bool clamped;
};

struct WheelExplanation {
    WheelGeometry geometry;
    Jiffies expires;
    std::vector<WheelHop> hops; // in place: one; cascade: the placement, then one per cascade
    bool truncated = false;     // a clamped timer lapping the last level: the first laps only
    Jiffies fires_at;           // the jiffy it runs at on a ticking CPU
    std::int64_t late;          // fires_at - expires (negative: EARLY)
};

WheelExplanation explain_wheel(const WheelGeometry& g, Jiffies jiffies, Jiffies expires,
                               std::optional<Jiffies> clk = std::nullopt);

} // namespace timersim
