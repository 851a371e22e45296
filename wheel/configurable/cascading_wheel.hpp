// CascadingWheel: a cascading hierarchical wheel of any geometry
// (wheel/configurable/wheel_spec.hpp, mode=cascade): the rules of Linux <= 4.7
// (kernel/time/timer.c, see wheel/kernel/classic_wheel.hpp) for any number of
// levels and any bits per level. With the `classic` preset it fires every
// timer at the jiffy ClassicWheel does (tests/wheel/test_configurable_wheel.cpp);
// ClassicWheel stays the fast, fixed-depth queue the kernel comparisons use.
//
//   CascadingWheel q({.hz = 250, .geometry = parse_wheel_spec("wheel:bits=8x3:mode=cascade").geometry(250)});
//   TimerId t = q.create();
//   q.arm(t, q.jiffies() + 1000);
//   tick_to(q, q.jiffies() + 1000, [](const FiredTimer&) {});   // fires on the last tick
//
// Callbacks may arm and cancel any timer of this queue (wheel/core/timer_queue.hpp).
//
// Levels L = 0 .. depth-1 with 2^bits[L] slots; level L's slot width is the
// span of the levels below (shift[L] = bits[0] + .. + bits[L-1]):
//   * a timer goes to the first level whose range holds d = expires - T
//     (T = timer_jiffies, the next jiffy the loop runs), in the slot of its
//     expiry's bits (rounding down) or of its expiry rounded up to the slot
//     width (rounding up); d < 0 goes to level 0's slot of T; beyond the last
//     level it is placed as if d were MAX_TVAL and laps;
//   * each loop step: when T's level-0 index is 0 the next slot of level 1
//     is cascaded (re-placed), and of level 2 only if that slot number was
//     0, and so on; then level 0's slot of T runs.
// Rounding down the timer always reaches level 0 and runs exactly at its
// expiry; rounding up it is cascaded once, at its slot's time (>= expires),
// straight into the slot that runs, so it is up to one slot width late.
#pragma once

#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/bucket_lists.hpp"
#include "wheel/core/cascade_steps.hpp"
#include "wheel/core/queue_basics.hpp"
#include "wheel/core/queue_config.hpp"
#include "wheel/core/queue_layout.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_levels.hpp"

#include <optional>
#include <stdexcept>

namespace timersim {

class CascadingWheel : public QueueBasics<CascadingWheel>, public CascadeSteps<CascadingWheel> {
public:
    static constexpr std::string_view name = "wheel";
    // The `classic` preset by default (wheel/core/queue_config.hpp).
    using Config = CascadeConfig<WheelGeometry, &classic_wheel_geometry>;

    struct Node {
        TimerId next = kNoTimer;
        TimerId pprev = kNoTimer;
        std::uint16_t list = 0;
        bool live = false;
        bool pending = false;
        bool deferrable = false;
        Jiffies expires = 0;
        Jiffies runs_at = 0; // the loop step that will run it, if nothing changes
    };

    // Where a timer goes from timer_jiffies T (also what explain shows).
    struct Slot {
        unsigned level; // 0-based
        unsigned slot;
        bool past;
        bool clamped;
        Jiffies runs_at;
    };
    static Slot slot_of(const WheelGeometry& g, Jiffies expires, Jiffies timer_jiffies) noexcept;

    explicit CascadingWheel(Config config);

    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer);
    bool cancel(TimerId id);

    bool carry_over() const noexcept { return !lists_.empty(work_list()); }

    // level is 1-based, as ClassicWheel's tv arrays.
    Placement placement(TimerId id) const;
    // What `timersim step` draws: one row per level, L1.. as placement()
    // numbers them, the pointer at timer_jiffies' index bits of the level.
    QueueLayout layout() const;
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node); }
    const WheelGeometry& geometry() const noexcept { return g_; }

private:
    friend class QueueBasics<CascadingWheel>;
    friend class CascadeSteps<CascadingWheel>;

    std::size_t wheel_lists() const noexcept { return g_.buckets(); }
    // What the next-event search and next_timer report: the expiry (exact
    // rounding down, as 4.x), or the step it runs at (rounding up).
    Jiffies due(const Node& n) const noexcept { return g_.round == WheelRound::up ? n.runs_at : n.expires; }
    Jiffies with_slack(Jiffies expires) const noexcept { return classic::apply_slack(expires, jiffies_, *slack_); }
    void place(Node& n, TimerId id) noexcept;
    void detach(Node& n, TimerId id) noexcept;
    void cascade(unsigned level, unsigned slot) noexcept;
    Jiffies next_timer_scan() noexcept;

    // The geometry's part of a 4.x __run_timers() step (CascadeSteps).
    unsigned first_level_index(Jiffies t) const noexcept { return static_cast<unsigned>(t & (g_.slots(0) - 1)); }
    // Level 1's slot cascades; only when that slot number is 0 does the
    // level above cascade too.
    void cascade_levels(Jiffies t) noexcept {
        for (unsigned level = 1; level < g_.depth; ++level) {
            const unsigned slot = static_cast<unsigned>((t >> g_.shift[level]) & (g_.slots(level) - 1));
            cascade(level, slot);
            if (slot != 0) break;
        }
    }
    void collect(unsigned index, std::size_t work) noexcept { lists_.move_list(pool_.nodes(), index, work); }
    template <class Nodes>
    TimerId pop_work(Nodes& nodes, std::size_t work) noexcept {
        if (lists_.empty(work)) return kNoTimer;
        const TimerId id = lists_.front(work);
        lists_.unlink(nodes, id);
        return id;
    }
    FiredTimer fired(TimerId id, const Node& n) const noexcept { return FiredTimer{id, n.expires, timer_jiffies_ - 1}; }

    WheelGeometry g_;
    std::optional<std::int64_t> slack_;
    Jiffies jiffies_;
    Jiffies timer_jiffies_;
    Jiffies next_timer_;
    std::size_t all_timers_ = 0;
    std::size_t active_timers_ = 0;
    BucketLists lists_; // the slots, then the work list, then a cascade scratch list
    TimerPool<Node, kFirstHeadLink> pool_;
    QueueCounters counters_;
};

} // namespace timersim
