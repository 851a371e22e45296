// ListQueue<Rules>: the machinery Varghese & Lauck's schemes 1, 2, 4, 5 and
// 6 share (G. Varghese, T. Lauck, "Hashed and Hierarchical Timing Wheels",
// SOSP 1987), so that each scheme's own file holds only what the paper says
// about it: where START_TIMER puts a timer and what PER_TICK_BOOKKEEPING
// looks at.
//
//   Q q(ListQueueConfig{.hz = 250});
//   const TimerId t = q.create();
//   q.arm(t, q.jiffies() + 10);           // START_TIMER
//   tick_to(q, q.jiffies() + 10, fire);   // PER_TICK_BOOKKEEPING, EXPIRY_PROCESSING
//
// Callbacks passed to run_softirq may arm and cancel any timer of the queue
// (wheel/core/timer_queue.hpp), including timers collected in the same pass.
//
// Time: `clk` is the next tick the bookkeeping will process (the classic
// wheel's timer_jiffies). A softirq processes every tick from clk up to
// jiffies, one at a time, as the paper's per-tick routine would have run on
// each of them; each tick's due timers are collected into a work list and
// run before the next tick is processed. A timer armed for a tick at or
// after clk fires on exactly that tick; one armed for an earlier tick (the
// past, or the tick being processed) fires on tick clk. An empty queue
// snaps clk to jiffies instead of walking. So on a ticking CPU every scheme
// fires on the exact jiffy asked for, like the heap.
//
// Costs: every operation counts the paper's START/STOP/PER_TICK/EXPIRY
// units (QueueCounters::paper) and, for the measured cost, the usual
// enqueue/cancel/expiry/bucket counters plus list_steps for list elements
// walked. A re-arm of a pending timer is STOP then START (the paper has no
// shortcut). Deferrable timers are treated like any other, as by the heap.
//
// Rules interface (see scheme1_queue.hpp .. scheme6_queue.hpp):
//   static constexpr std::string_view name;
//   explicit Rules(const ListQueueConfig&)   validates the configuration
//   std::size_t lists() const                lists the scheme uses
//   void start(Q&, Node&, TimerId)           link a timer (n.expires set; sets n.list)
//   void tick(Q&, Jiffies t)                 collect() what is due at tick t
//   Jiffies next_event(Q&)                   the earliest expiry (pending > 0)
//   void place_of(const Q&, const Node&, Placement&)   level and slot
//   QueueLayout layout(const Q&) const       what `step` draws
#pragma once

#include "wheel/core/bucket_lists.hpp"
#include "wheel/core/queue_layout.hpp"
#include "wheel/core/ticked_queue.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim {

struct ListQueueConfig {
    unsigned hz = 250;
    std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
    unsigned slots = 256;                 // wheel schemes: slots per revolution (a power of two)
};

struct ListNode {
    TimerId next = kNoTimer;
    TimerId pprev = kNoTimer; // back link: the node before, or the list head (bucket_lists.hpp)
    std::uint32_t list = 0;   // the list START_TIMER put it in
    bool live = false;
    bool pending = false;
    Jiffies expires = 0;
    std::uint64_t count = 0;  // scheme 1: ticks to go; scheme 6: rounds to go
};

template <class Rules>
class ListQueue : public TickedQueue<ListQueue<Rules>> {
    friend class TickedQueue<ListQueue>;
    using TickedQueue<ListQueue>::jiffies_; // a dependent base's member

public:
    static constexpr std::string_view name = Rules::name;
    using Config = ListQueueConfig;
    using Node = ListNode;

    ListQueue() : ListQueue(Config{}) {}
    explicit ListQueue(Config config)
        : TickedQueue<ListQueue>(config.start_jiffies.value_or(initial_jiffies(config.hz))), rules_(config), clk_(jiffies_),
          lists_(rules_.lists() + 1) {
        if (config.hz == 0) throw std::invalid_argument("hz must be positive");
    }

    TimerId create(TimerFlags = {}) { return pool_.create(); }
    void destroy(TimerId id) {
        cancel(id);
        pool_.destroy(id);
    }

    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        Node& n = pool_.at(id);
        if (!n.pending) pool_.check_live(n, id);
        ++counters_.arms;
        if (n.pending)
            stop(n, id);
        else if (call == ArmCall::mod_timer_pending)
            return ArmOutcome::not_pending;
        enqueue(n, id, expires);
        return ArmOutcome::queued;
    }
    // An arm from another CPU (wheel/core/timer_queue.hpp): no shortcut, so the
    // timer leaves unless it is mod_timer_pending() on an idle timer.
    ArmOutcome arm_detach(TimerId id, Jiffies& /*expires*/, ArmCall call = ArmCall::mod_timer) {
        pool_.check(id);
        Node& n = pool_[id];
        if (n.pending) {
            stop(n, id);
        } else if (call == ArmCall::mod_timer_pending) {
            ++counters_.arms;
            return ArmOutcome::not_pending;
        }
        return ArmOutcome::queued;
    }
    bool cancel(TimerId id) {
        Node& n = pool_.at(id);
        if (!n.pending) {
            pool_.check_live(n, id);
            return false;
        }
        stop(n, id);
        ++counters_.cancels;
        return true;
    }

    // The bookkeeping has ticks to process, or a budget left collected timers.
    bool softirq_due() const noexcept { return carry_over() || (pending_ > 0 && time_after_eq(jiffies_, clk_)); }
    bool carry_over() const noexcept { return !lists_.empty(work_list()); }


    // The earliest expiry (jiffies itself if due), found by each scheme's
    // own search (counted as next-expiry steps), as the heap answers.
    std::optional<Jiffies> next_timer_interrupt() {
        if (carry_over()) return jiffies_;
        if (pending_ == 0) return std::nullopt;
        ++counters_.next_expiry_searches;
        const Jiffies e = rules_.next_event(*this);
        return time_before_eq(e, jiffies_) ? jiffies_ : e;
    }

    std::size_t pending() const noexcept { return pending_; }
    bool is_pending(TimerId id) const {
        pool_.check(id);
        return pool_[id].pending;
    }
    Placement placement(TimerId id) const {
        pool_.check(id);
        const Node& n = pool_[id];
        Placement p;
        p.pending = n.pending;
        p.expires = n.expires;
        if (!n.pending) return p;
        rules_.place_of(*this, n, p);
        p.bucket_expiry = time_after_eq(n.expires, clk_) ? n.expires : clk_;
        return p;
    }
    const QueueCounters& counters() const noexcept { return counters_; }
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node); }
    void reserve(std::size_t timers) { pool_.reserve(timers); }
    QueueLayout layout() const { return rules_.layout(*this); }
    const Rules& rules() const noexcept { return rules_; }

    // For the rules: the lists, the nodes, the clock, the counters.
    BucketLists& lists() noexcept { return lists_; }
    const BucketLists& lists() const noexcept { return lists_; }
    auto& nodes() noexcept { return pool_.nodes(); }
    const auto& nodes() const noexcept { return pool_.nodes(); }
    Jiffies clk() const noexcept { return clk_; }
    QueueCounters& stats() noexcept { return counters_; }
    // Moves a due timer from its list to the work list (it runs this pass).
    void collect(TimerId id) noexcept {
        lists_.unlink(pool_.nodes(), id);
        lists_.push_front(pool_.nodes(), work_list(), id);
    }

private:
    std::size_t work_list() const noexcept { return lists_.size() - 1; }

    void enqueue(Node& n, TimerId id, Jiffies expires) {
        if (pending_++ == 0) clk_ = jiffies_; // an empty queue does not walk stale ticks
        n.expires = expires;
        n.pending = true;
        rules_.start(*this, n, id);
        ++counters_.enqueues;
        ++counters_.paper.start;
        if (pending_ > counters_.peak_pending) counters_.peak_pending = pending_;
    }
    void stop(Node& n, TimerId id) noexcept {
        lists_.unlink(pool_.nodes(), id);
        n.pending = false;
        ++counters_.paper.stop;
        if (--pending_ == 0) clk_ = jiffies_;
    }

    template <bool Bounded, class F>
    bool run(F& on_fire, std::uint64_t& budget) {
        if (carry_over() && expire_work<Bounded>(on_fire, budget)) return true;
        while (time_after_eq(jiffies_, clk_)) {
            if (pending_ == 0) {
                clk_ = jiffies_;
                break;
            }
            const Jiffies t = clk_++;
            ++counters_.jiffies_walked;
            ++counters_.buckets_scanned; // the list or slot this tick looks at
            rules_.tick(*this, t);
            if (expire_work<Bounded>(on_fire, budget)) return true;
        }
        return false;
    }

    template <bool Bounded, class F>
    bool expire_work(F& on_fire, std::uint64_t& budget) {
        auto& nodes = pool_.nodes();
        const Jiffies base_clk = clk_ - 1; // the tick being processed
        while (!lists_.empty(work_list())) {
            const TimerId id = lists_.front(work_list());
            lists_.unlink(nodes, id);
            Node& n = nodes[id];
            n.pending = false;
            --pending_;
            ++counters_.expired;
            ++counters_.paper.expiry;
            const FiredTimer fired{id, n.expires, base_clk};
            on_fire(fired);
            if constexpr (Bounded)
                if (--budget == 0) return true;
        }
        return false;
    }

    Rules rules_;
    Jiffies clk_;
    std::size_t pending_ = 0;
    BucketLists lists_; // the scheme's lists, then the work list
    TimerPool<Node, kFirstHeadLink> pool_;
    QueueCounters counters_;
};

// The earliest expiry in one list (a walk, counted as next-expiry steps);
// `found` says whether the list had any.
template <class Q>
Jiffies earliest_expiry(Q& q, std::size_t list, bool* found = nullptr) {
    Jiffies best = 0;
    bool any = false;
    for (TimerId t = q.lists().front(list); t != kNoTimer; t = q.nodes()[t].next) {
        ++q.stats().next_expiry_search_steps;
        const Jiffies e = q.nodes()[t].expires;
        if (!any || time_before(e, best)) best = e;
        any = true;
    }
    if (found) *found = any;
    return best;
}

// The wheel schemes' slot count: a power of two, so a slot is a mask.
inline unsigned checked_slots(unsigned slots) {
    if (slots < 2 || slots > 0x8000 || (slots & (slots - 1)) != 0)
        throw std::invalid_argument("slots must be a power of two in 2..32768");
    return slots;
}

// The hashed wheels' ring (schemes 5 and 6): `slots` lists, a timer in
// list expires & mask, drawn as one row; `what` names the scheme in the
// layout's summary. A scheme's rules derive from it and add start, tick
// and next_event.
struct HashedRing {
    HashedRing(const ListQueueConfig& c, std::string_view what)
        : slots(checked_slots(c.slots)), mask(slots - 1), what(what) {}
    std::size_t lists() const noexcept { return slots; }
    template <class Q>
    void place_of(const Q&, const ListNode& n, Placement& p) const noexcept {
        p.level = 0;
        p.slot = n.list;
    }
    template <class Q>
    QueueLayout layout(const Q& q) const;

    unsigned slots;
    Jiffies mask;
    std::string_view what;
};

// One row of slots with the cursor: the layout of schemes 4, 5 and 6.
template <class Q>
QueueLayout wheel_layout(const Q& q, const std::string& what, unsigned slots, Jiffies mask) {
    QueueLayout l;
    l.summary = what + " of " + std::to_string(slots) + " slots: clk " + std::to_string(q.clk()) + ", " +
                std::to_string(q.pending()) + " pending";
    LayoutRow wheel{"slot", {}, 0, static_cast<unsigned>(q.clk() & mask)};
    for (std::size_t s = 0; s < slots; ++s) {
        wheel.counts.push_back(q.lists().count(q.nodes(), s));
        wheel.total += wheel.counts.back();
    }
    l.rows.push_back(std::move(wheel));
    return l;
}

template <class Q>
QueueLayout HashedRing::layout(const Q& q) const {
    return wheel_layout(q, std::string(what), slots, mask);
}

} // namespace timersim
