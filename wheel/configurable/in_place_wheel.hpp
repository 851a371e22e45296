// InPlaceWheel: a non-cascading hierarchical wheel of any geometry
// (wheel/configurable/wheel_spec.hpp, mode=in-place): the 6.1 wheel's rules
// (kernel/time/timer.c, see wheel/kernel/modern_wheel.hpp) with its constants made
// parameters. With the `modern` preset it fires every timer at the jiffy
// ModernWheel does (tests/wheel/test_configurable_wheel.cpp); ModernWheel
// stays the fast, fixed-geometry queue the kernel comparisons use.
//
//   InPlaceWheel q({.hz = 250, .geometry = parse_wheel_spec("wheel:rfc-2015").geometry(250)});
//   TimerId t = q.create();
//   q.arm(t, q.jiffies() + 36);     // level 1 of the 2015 draft: fires at +40
//   tick_to(q, q.jiffies() + 40, [](const FiredTimer&) {});
//
// Callbacks may arm and cancel any timer of this queue (wheel/core/timer_queue.hpp).
//
// The general rules, for levels L with 2^bits[L] buckets and granularity
// 2^shift[L]:
//   * a timer goes to the level whose [LVL_START(L), LVL_START(L+1)) holds
//     delta = expires - clk, LVL_START(L) = (2^bits[L-1] - 1) << shift[L-1];
//     bucket (expires >> shift[L]) (+1 when rounding up), and it runs when
//     clk reaches that bucket's time; deltas at or beyond LVL_START(depth)
//     are clamped to clk + that - granularity(depth-1), as 6.1 does;
//   * the softirq jumps clk to next_expiry and looks at level L's bucket of
//     that clock while clk is a multiple of level L's granularity (6.1:
//     while the lower LVL_CLK_SHIFT bits are zero);
//   * the next-event search looks at level L from ceil(clk / gran(L)) and
//     stops once a hit comes before the next level's first bucket.
// One standard base and, with deferrable_base, a deferrable one (BASE_DEF).
#pragma once

#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/bucket_lists.hpp"
#include "wheel/core/clock.hpp"
#include "wheel/core/in_place_base.hpp"
#include "wheel/core/queue_basics.hpp"
#include "wheel/core/queue_layout.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"

#include <array>
#include <bit>
#include <optional>
#include <stdexcept>

namespace timersim {

// InPlaceWheel::Config (at namespace scope, as ListQueueConfig): the
// `modern` preset at hz by default.
struct InPlaceWheelConfig {
    unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
    std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
    std::optional<WheelGeometry> geometry; // default: wheel:modern's geometry at hz
    bool deferrable_base = true; // CONFIG_NO_HZ_COMMON
};

class InPlaceWheel : public QueueBasics<InPlaceWheel>, public InPlaceSteps<InPlaceWheel> {
public:
    static constexpr std::string_view name = "wheel";
    using Config = InPlaceWheelConfig;

    struct Node {
        TimerId next = kNoTimer;
        TimerId pprev = kNoTimer;
        std::uint16_t idx = 0; // bucket in the flat array
        bool live = false;
        bool pending = false;
        bool deferrable = false;
        std::uint8_t base = 0;
        Jiffies expires = 0;
        Jiffies bucket_expiry = 0;
    };

    // Where a timer goes: the flat bucket, its level and the clock it runs at.
    struct Index {
        unsigned idx;
        unsigned level;
        Jiffies bucket_expiry;
    };

    explicit InPlaceWheel(Config config);

    TimerId create(TimerFlags flags = {}) {
        const TimerId id = pool_.create();
        pool_[id].deferrable = flags.deferrable;
        pool_[id].base = (deferrable_base_ && flags.deferrable) ? 1 : 0;
        return id;
    }
    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer);
    bool cancel(TimerId id);

    // A base's clock (base 1: the deferrable one), as ModernWheel's snapshot
    // shows it: what explain's --clk and the drawn clock hands are.
    Jiffies clk(unsigned base = 0) const noexcept { return bases_[base].clk; }

    template <class F>
    void run_softirq(F&& on_fire) {
        ++counters_.softirq_runs;
        release_carry_over();
        std::uint64_t unlimited = ~std::uint64_t{0};
        run_base(bases_[0], on_fire, unlimited);
        if (deferrable_base_) run_base(bases_[1], on_fire, unlimited);
    }
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++counters_.softirq_runs;
        release_carry_over();
        pass_base_ = 0;
        return resume_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        if (budget == 0) return true;
        for (; pass_base_ < (deferrable_base_ ? 2u : 1u); ++pass_base_)
            if (run_base(bases_[pass_base_], on_fire, budget)) return true;
        return false;
    }

    Placement placement(TimerId id) const;
    // What `timersim step` draws: one row per level (L0..), the pointer at
    // (clk >> shift[L]) & (slots - 1), then the deferrable base's (dL0..)
    // while it holds a timer.
    QueueLayout layout() const;
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node); }
    const WheelGeometry& geometry() const noexcept { return g_; }

    // calc_wheel_index() for this geometry (also what explain shows).
    static Index index_of(const WheelGeometry& g, Jiffies expires, Jiffies clk) noexcept;

private:
    friend class QueueBasics<InPlaceWheel>;
    friend class InPlaceSteps<InPlaceWheel>;

    // The flat buckets, then one work list per level
    // (wheel/core/in_place_base.hpp).
    using Base = InPlaceBase<BucketLists, kMaxWheelLevels>;

    unsigned level_of_idx(unsigned idx) const noexcept {
        unsigned level = 0;
        while (level + 1 < g_.depth && idx >= g_.offset(level + 1)) ++level;
        return level;
    }
    std::size_t work_list(unsigned level) const noexcept { return g_.buckets() + level; }
    void forward_timer_base(Base& b) noexcept;
    // Is n in its bucket (not collected into a work list)?
    bool in_bucket(const Base& b, const Node& n) const noexcept { return b.buckets.holds(pool_.nodes(), n.idx, n); }
    Index index_for(Jiffies expires, Jiffies clk) const noexcept { return index_of(g_, expires, clk); }
    void link(Base& b, TimerId id, Node& n, const Index& ix) noexcept;
    void unlink(Base& b, TimerId id, const Node& n) noexcept;
    void detach(Base& b, TimerId id, Node& n) noexcept;
    unsigned collect(Base& b) noexcept;
    struct Search {
        Jiffies next;
        unsigned steps;
    };
    Search search(const Base& b) const noexcept;
    Jiffies next_timer_search(Base& b) noexcept;

    // The unbounded pass is a bounded one with an endless budget: the same
    // steps (6.1 __run_timers(), then expire_timers() highest level first).
    template <class F>
    bool run_base(Base& b, F& on_fire, std::uint64_t& budget) {
        if (b.carry_levels != 0 && expire(b, on_fire, budget)) return true;
        while (time_after_eq(jiffies_, b.clk) && time_after_eq(jiffies_, b.next_expiry)) {
            b.carry_levels = collect(b);
            if (b.carry_levels == 0) ++counters_.empty_runs;
            ++b.clk;
            b.next_expiry = next_timer_search(b);
            b.carry_level_started = false;
            if (expire(b, on_fire, budget)) return true;
        }
        return false;
    }
    template <class F>
    bool expire(Base& b, F& on_fire, std::uint64_t& budget) {
        auto& nodes = pool_.nodes();
        return expire_carried_levels(b, [&](unsigned level, Jiffies base_clk) {
            const std::size_t list = work_list(level);
            while (!b.buckets.empty(list)) {
                const TimerId id = b.buckets.front(list);
                b.buckets.unlink(nodes, id);
                nodes[id].pending = false;
                --b.queued;
                ++counters_.expired;
                on_fire(FiredTimer{id, nodes[id].expires, base_clk});
                if (--budget == 0) return true;
            }
            return false;
        });
    }

    WheelGeometry g_;
    bool deferrable_base_;
    Jiffies jiffies_;
    std::array<Base, 2> bases_;
    unsigned pass_base_ = 0;
    TimerPool<Node, kFirstHeadLink> pool_;
    QueueCounters counters_;
};

} // namespace timersim
