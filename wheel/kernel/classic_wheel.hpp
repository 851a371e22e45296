// ClassicWheel: one CPU's tvec_base of Linux 4.4 .. 4.7 (kernel/time/timer.c),
// the cascading wheel. Geometry: wheel/kernel/classic_levels.hpp.
//
// State (per CPU; deferrable timers share the wheel, only flagged):
//   timer_jiffies (T)  the next jiffy the run loop will process
//   all_timers         queued timers; an empty wheel snaps T to jiffies
//   active_timers,     non-deferrable count and cached earliest expiry, only
//   next_timer         used for NOHZ's next-event search
//
// What the kernel does and this model does too:
//   * mod_timer() applies slack, then skips the work if the timer is pending
//     with exactly that expiry (the only shortcut);
//   * __run_timers() walks every jiffy from T to jiffies: when T's tv1 index
//     is 0 it cascades one tv2 slot, and tv3 only if that tv2 slot number was
//     0, and so on; then it runs tv1[T & 255] from the head;
//   * the tick raises TIMER_SOFTIRQ on every jiffy (4.x run_local_timers()).
//
// Budgeted passes (wheel/core/timer_queue.hpp): the carry-over is the work list of
// the loop step in progress (tv1[T-1 & 255] already moved out); a pass runs
// it before the next step.
#pragma once

#include "wheel/core/bucket_arrays.hpp"
#include "wheel/core/cascade_steps.hpp"
#include "wheel/core/queue_basics.hpp"
#include "wheel/core/queue_config.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_levels.hpp"

#include <optional>
#include <stdexcept>

namespace timersim {

class ClassicWheel : public QueueBasics<ClassicWheel>, public CascadeSteps<ClassicWheel> {
public:
    static constexpr std::string_view name = "classic";
    // The kernel's tv1..tv5 by default (wheel/core/queue_config.hpp).
    using Config = CascadeConfig<classic::Geometry, &classic::Geometry::normal>;

    // 16 bytes: four to a cache line. The step that will run the timer is
    // not stored: it follows from its expiry and T (runs_at()). With its
    // list entry and the dead entries waiting for a compaction
    // (wheel/core/bucket_arrays.hpp), about 24 bytes a timer.
    struct Node {
        Jiffies expires = 0;
        TimerId ticket = kNoTimer; // its list entry's ticket; the pool's free-list link when free
        std::uint16_t idx = 0;     // wheel list it was placed in (tv array + slot)
        bool pending = false;
        bool live : 1 = false;
        bool deferrable : 1 = false;
    };
    static_assert(sizeof(Node) == 16);

    explicit ClassicWheel(Config config);


    // 4.4 mod_timer(), mod_timer_pending(), mod_timer_pinned() over
    // __mod_timer(). Inline, as the kernel's is: the call is most of the cost
    // otherwise.
    //
    // The common case is decided first, inline and without a stack frame:
    // an idle timer armed by a call that applies no slack (slack off, or
    // mod_timer_pinned()) on a wheel that is not empty, to an expiry the
    // slot table places and a list with room. It takes the steps
    // arm_general() takes for it, so it adds no rule; every other case, the
    // checks and errors included, goes to arm_general() (a pending timer
    // through arm_pending()).
    //
    // Out of memory (a list's array cannot grow): throws std::bad_alloc and
    // the timer is idle, a pending one detached as the 4.x code detaches it
    // before it knows the new list.
    [[gnu::always_inline]] ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        return arm_fast(id, expires, call);
    }
    // The same call inline whole, without the short path, for a caller that
    // inlines the whole call into a frame of its own anyway (the engine,
    // where slack is on by default and the short path measured 0.88x in
    // engine_mixed+prefetch/classic).
    [[gnu::always_inline]] ArmOutcome arm_inlined(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        return arm_whole(id, expires, call);
    }
    // The same call, every case.
    [[gnu::noinline]] ArmOutcome arm_general(TimerId id, Jiffies expires, ArmCall call) {
        return arm_whole(id, expires, call);
    }
    // 4.x del_timer(). A pending timer is live, so only an idle one needs the
    // validity check.
    bool cancel(TimerId id) {
        Node& n = pool_.at(id);
        if (!n.pending) {
            pool_.check_live(n, id);
            return false;
        }
        detach(n);
        ++counters_.cancels;
        return true;
    }


    // A budgeted pass left the rest of a step in the work list.
    bool carry_over() const noexcept { return !lists_.empty(work_list()); }

    // run_softirq(), unbounded and with a budget of expiries: CascadeSteps.
    // A hint for a simulator that knows its next operations: timer `id` is
    // armed or cancelled soon, so fetch its node (the only line either
    // writes that may be cold). Changes nothing.
    void prefetch(TimerId id) const noexcept { pool_.prefetch(id); }
    // The list the timer is in or was last in, also once it fired or was
    // cancelled (level 1 for a fired timer: only tv1 expires): for the
    // event log's fire and cancel rows.
    Placement last_placement(TimerId id) const;
    // The event log's cascade rows: called for each timer a cascade moved,
    // once it is re-placed, with the tv array and slot it came from. None by
    // default (one predictable branch per move).
    using CascadeObserver = void (*)(void* context, TimerId id, unsigned from_array, unsigned from_slot);
    void observe_cascades(CascadeObserver observer, void* context) noexcept {
        cascade_observer_ = observer;
        cascade_context_ = context;
    }
    // The node, its list entry and, in a long churn, about one dead entry
    // waiting for a compaction (as ModernWheel::bytes_per_timer()).
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node) + 2 * sizeof(TimerId); }

    const classic::Geometry& geometry() const noexcept { return geometry_; }
    // Entries held by the lists, live or dead: the memory figures
    // (bench/bucket_churn.cpp).
    std::size_t bucket_entries() const noexcept { return lists_.entries(); }
    // Timers queued in one slot of tv1..tv5 (array 1..5).
    std::uint32_t slot_count(unsigned array, unsigned slot) const noexcept {
        return lists_.count(geometry_.list_id(array, slot));
    }
    std::optional<std::int64_t> slack() const noexcept { return slack_; }
    // The order a slot's timers run in. 4.2 made the slots hlists, added
    // at the head and run from it (newest first; a cascade reverses a slot);
    // before, they were list_heads, added at the tail (3.6
    // internal_add_timer(): list_add_tail()) and run from the head, oldest
    // first, a cascade keeping their order (3.6 cascade()). Set before the
    // first arm; the views list a slot newest first either way.
    enum class SlotOrder : std::uint8_t { newest_first, oldest_first };
    void set_slot_order(SlotOrder order) noexcept { slot_order_ = order; }
    SlotOrder slot_order() const noexcept { return slot_order_; }

private:
    friend class QueueBasics<ClassicWheel>;
    friend class CascadeSteps<ClassicWheel>;

    std::size_t wheel_lists() const noexcept { return geometry_.wheel_lists(); }

    // arm()'s short path.
    [[gnu::always_inline]] ArmOutcome arm_fast(TimerId id, Jiffies expires, ArmCall call) {
        if (pool_.contains(id)) [[likely]] {
            Node& n = pool_[id];
            if (n.pending) return arm_pending(id, expires, call);
            const bool slack = call == ArmCall::mod_timer && slack_;
            if (n.live && !slack && call != ArmCall::mod_timer_pending && all_timers_ != 0) [[likely]] {
                const unsigned list = slot_table_.list_of(expires, expires - timer_jiffies_);
                if (list != classic::SlotTable::kNone && lists_.has_room(list)) [[likely]] {
                    ++counters_.arms;
                    n.expires = expires;
                    lists_.push_into_room(list, id, n);
                    n.idx = static_cast<std::uint16_t>(list);
                    note_enqueued(n, expires);
                    return ArmOutcome::queued;
                }
            }
        }
        return arm_general(id, expires, call);
    }
    [[gnu::noinline]] ArmOutcome arm_pending(TimerId id, Jiffies expires, ArmCall call) {
        return arm_whole(id, expires, call);
    }
    // __mod_timer(), every case: arm_general()'s body.
    [[gnu::always_inline]] ArmOutcome arm_whole(TimerId id, Jiffies expires, ArmCall call) {
        Node& n = pool_.at(id);
        if (!n.pending) pool_.check_live(n, id);
        ++counters_.arms;
        if (const auto ended = mod_timer_detach(n, id, expires, call)) return *ended;
        n.expires = expires;
        internal_add_timer(n, id, expires);
        return ArmOutcome::queued;
    }

    // 4.x __internal_add_timer(): the list by the distance from T (the
    // table; calc_slot() for past and clamped expiries), as its newest entry
    // (hlist_add_head()).
    void place(Node& n, TimerId id) { place(n, id, n.expires); }
    // The same with `expires` (== n.expires) in hand: arm() just stored it,
    // and reading it back would wait on that store.
    void place(Node& n, TimerId id, Jiffies expires) {
        unsigned list = slot_table_.list_of(expires, expires - timer_jiffies_);
        if (list == classic::SlotTable::kNone) [[unlikely]] list = far_list(expires);
        lists_.push(pool_.nodes(), list, id, n);
        n.idx = static_cast<std::uint16_t>(list);
    }

    // Out of line, to keep the inlined arm() small: past or clamped
    // expiries (calc_slot()), and the slack computation.
    unsigned far_list(Jiffies expires) const noexcept;
    Jiffies with_slack(Jiffies expires) const noexcept;

    // 4.x internal_add_timer(): an empty wheel first snaps T to jiffies, so
    // the new timer's delta is not measured from a stale T.
    void internal_add_timer(Node& n, TimerId id, Jiffies expires) {
        if (all_timers_ == 0) timer_jiffies_ = jiffies_;
        // A timer at or after T runs in the step whose T equals its expiry; an
        // expiry in the past runs in the very next step (runs_at()).
        place(n, id, expires);
        note_enqueued(n, expires);
    }
    // The rest of internal_add_timer() once the timer is in its list.
    [[gnu::always_inline]] void note_enqueued(Node& n, Jiffies expires) noexcept {
        ++all_timers_;
        n.pending = true;
        ++counters_.enqueues;
        // The peak is stored only when it moves.
        if (all_timers_ > counters_.peak_pending) [[unlikely]] counters_.peak_pending = all_timers_;
        if (!n.deferrable) {
            if (active_timers_++ == 0 || time_before(expires, next_timer_)) next_timer_ = expires;
        }
    }

    // 4.x detach_if_pending() for a pending timer: removing the cached
    // earliest timer makes next_timer stale (set to T, which forces a
    // rescan); removing the last timer snaps T to jiffies.
    // A timer of a budgeted pass's carry-over leaves the work list instead.
    void detach(Node& n) noexcept {
        lists_.remove(lists_.holds(n.idx, n) ? std::size_t{n.idx} : work_list(), n);
        n.pending = false;
        if (!n.deferrable) {
            --active_timers_;
            if (n.expires == next_timer_) next_timer_ = timer_jiffies_;
        }
        if (--all_timers_ == 0) timer_jiffies_ = jiffies_;
    }
    void detach(Node& n, TimerId) noexcept { detach(n); }
    void cascade(unsigned array, unsigned slot);
    Jiffies next_timer_scan() noexcept;       // __next_timer_interrupt()
    Jiffies runs_at(const Node& n) const noexcept;

    // The geometry's part of a 4.x __run_timers() step (CascadeSteps).
    unsigned first_level_index(Jiffies t) const noexcept {
        return static_cast<unsigned>(t & (geometry_.tvr_size() - 1));
    }
    // tv1 wrapped: pull the next tv2 slot down; only when that slot number
    // is 0 does tv3 cascade too, and so on up to tv5.
    void cascade_levels(Jiffies t) {
        const unsigned tvn_mask = geometry_.tvn_size() - 1;
        for (unsigned array = 2; array <= classic::kArrays; ++array) {
            const unsigned slot = static_cast<unsigned>((t >> geometry_.shift(array)) & tvn_mask);
            cascade(array, slot);
            if (slot != 0) break;
        }
    }
    void collect(unsigned index, std::size_t work) noexcept {
        lists_.collect(index, work);
        if (slot_order_ == SlotOrder::oldest_first) [[unlikely]] lists_.reverse_live(pool_.nodes(), work);
    }
    template <class Nodes>
    TimerId pop_work(Nodes& nodes, std::size_t work) noexcept { return lists_.pop_live(nodes, work); }
    FiredTimer fired(TimerId id, const Node& n) const noexcept {
        return FiredTimer{id, n.expires, timer_jiffies_ - 1, lists_.fire_hint(work_list())};
    }

    classic::Geometry geometry_;
    std::optional<std::int64_t> slack_;
    classic::SlotTable slot_table_;
    Jiffies jiffies_;
    Jiffies timer_jiffies_;
    Jiffies next_timer_;
    std::size_t all_timers_ = 0;
    std::size_t active_timers_ = 0;
    BucketArrays lists_; // the wheel lists, then the work list, then a cascade scratch list
    TimerPool<Node> pool_;
    QueueCounters counters_;
    SlotOrder slot_order_ = SlotOrder::newest_first;
    CascadeObserver cascade_observer_ = nullptr;
    void* cascade_context_ = nullptr;
};

} // namespace timersim
