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
#include "wheel/core/clock.hpp"
#include "wheel/core/queue_layout.hpp"
#include "wheel/core/ticked_queue.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace timersim {

struct ListQueueConfig {
    unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
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
    friend class QueueBasics<ListQueue>;
    using TickedQueue<ListQueue>::jiffies_; // a dependent base's members
    using TickedQueue<ListQueue>::clk_;
    using TickedQueue<ListQueue>::pending_;

public:
    static constexpr std::string_view name = Rules::name;
    using Config = ListQueueConfig;
    using Node = ListNode;

    explicit ListQueue(Config config)
        : TickedQueue<ListQueue>(config.start_jiffies.value_or(initial_jiffies(config.hz))), rules_(config),
          lists_(rules_.lists() + 1) {
        check_config_hz(config.hz);
    }

    bool carry_over() const noexcept { return !lists_.empty(work_list()); }

    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node); }
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

    // TickedQueue's steps (wheel/core/ticked_queue.hpp).
    bool holds_timers() const noexcept { return pending_ > 0; }
    void start(Node& n, TimerId id, Jiffies expires) {
        this->note_started();
        n.expires = expires;
        n.pending = true;
        rules_.start(*this, n, id);
    }
    void stop(Node& n, TimerId id) noexcept {
        lists_.unlink(pool_.nodes(), id);
        n.pending = false;
        ++counters_.paper.stop;
        if (--pending_ == 0) clk_ = jiffies_;
    }
    void process_tick() {
        const Jiffies t = clk_++;
        ++counters_.buckets_scanned; // the list or slot this tick looks at
        rules_.tick(*this, t);
    }
    // The earliest expiry, found by each scheme's own search (counted as
    // next-expiry steps).
    Jiffies next_event() {
        ++counters_.next_expiry_searches;
        return rules_.next_event(*this);
    }
    void place_of(const Node& n, Placement& p) const noexcept { rules_.place_of(*this, n, p); }

    template <bool Bounded, class F>
    bool expire_work(F& on_fire, std::uint64_t& budget) {
        auto& nodes = pool_.nodes();
        const Jiffies base_clk = clk_ - 1; // the tick being processed
        while (!lists_.empty(work_list())) {
            const TimerId id = lists_.front(work_list());
            lists_.unlink(nodes, id);
            Node& n = nodes[id];
            if (this->template expire<Bounded>(n, FiredTimer{id, n.expires, base_clk}, on_fire, budget)) return true;
        }
        return false;
    }

    Rules rules_;
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

// The walk schemes 1 and 6 share over a list of timers that each count
// what they have to go (scheme 1: ticks, scheme 6: rounds): every entry is
// visited (PER_TICK_BOOKKEEPING); one with nothing to go is collected, the
// others count down.
template <class Q>
void count_down_list(Q& q, std::size_t list) {
    auto& nodes = q.nodes();
    std::uint64_t visited = 0;
    for (TimerId id = q.lists().front(list); id != kNoTimer;) {
        ListNode& n = nodes[id];
        const TimerId next = n.next;
        ++visited;
        if (n.count == 0)
            q.collect(id);
        else
            --n.count;
        id = next;
    }
    q.stats().paper.per_tick += visited;
    q.stats().list_steps += visited;
}

// The list schemes' one list (schemes 1 and 2): every timer at level 0,
// slot 0, drawn as one row of the pending count under `summary`. A
// scheme's rules derive from it and add start, tick, next_event and layout.
struct SingleList {
    static constexpr std::size_t lists() noexcept { return 1; }
    template <class Q>
    void place_of(const Q&, const ListNode&, Placement& p) const noexcept {
        p.level = 0;
        p.slot = 0;
    }
    template <class Q>
    static QueueLayout list_layout(const Q& q, std::string summary) {
        QueueLayout l;
        l.summary = std::move(summary);
        l.rows.push_back({"list", {}, q.pending(), 0});
        return l;
    }
};

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
    // The slot of the tick a timer runs on: its expiry's, or for an expiry
    // already past, clk's (the next tick).
    std::uint32_t start_slot(Jiffies expires, Jiffies clk) const noexcept {
        return static_cast<std::uint32_t>((time_before(expires, clk) ? clk : expires) & mask);
    }
    // The least of every slot's earliest expiry (`earliest(s)`: none for an
    // empty slot), each slot counted as a search step; 0 when all are empty.
    template <class Q, class F>
    Jiffies least_over_slots(Q& q, F&& earliest) const {
        std::optional<Jiffies> best;
        for (std::size_t s = 0; s < slots; ++s) {
            ++q.stats().next_expiry_search_steps;
            const std::optional<Jiffies> e = earliest(s);
            if (e && (!best || time_before(*e, *best))) best = e;
        }
        return best.value_or(0);
    }

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
