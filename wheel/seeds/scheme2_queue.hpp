// Scheme2Queue: Varghese & Lauck's scheme 2, the ordered list: every
// pending timer in one list sorted by absolute expiry (ties in arm order);
// the tick looks at the head only.
//
//   START_TIMER           O(n)  walk from the head past every timer due no later
//   STOP_TIMER            O(1)  unlink (doubly linked)
//   PER_TICK_BOOKKEEPING  O(1)  compare the head with the time
//   EXPIRY_PROCESSING     O(1)  per timer: take the head
//
// The paper's cost table (SOSP 1987, section 3). Fires on the exact tick
// (wheel/seeds/list_queue.hpp); usage and callback contract there.
#pragma once

#include "wheel/seeds/list_queue.hpp"

namespace timersim {

// The sorted insertion schemes 2 and 5 share: after the last timer of
// `list` due no later than n (FIFO among equal expiries), counting every
// element walked past as START cost.
template <class Q>
void insert_sorted(Q& q, std::size_t list, ListNode& n, TimerId id) {
    auto& nodes = q.nodes();
    TimerId prev = kNoTimer;
    std::uint64_t walked = 0;
    for (TimerId t = q.lists().front(list); t != kNoTimer && time_before_eq(nodes[t].expires, n.expires);
         t = nodes[t].next) {
        prev = t;
        ++walked;
    }
    n.list = static_cast<std::uint32_t>(list);
    if (prev == kNoTimer)
        q.lists().push_front(nodes, list, id);
    else
        q.lists().insert_after(nodes, prev, id);
    q.stats().paper.start += walked;
    q.stats().list_steps += walked;
}

// Collects the due prefix of a sorted list: the paper's one head check per
// tick (each timer taken counts as EXPIRY_PROCESSING).
template <class Q>
void collect_due_prefix(Q& q, std::size_t list, Jiffies t) {
    ++q.stats().paper.per_tick;
    for (TimerId id = q.lists().front(list); id != kNoTimer && time_before_eq(q.nodes()[id].expires, t);
         id = q.lists().front(list))
        q.collect(id);
}

struct Scheme2Rules : SingleList {
    static constexpr std::string_view name = "scheme2";
    explicit Scheme2Rules(const ListQueueConfig&) {}

    template <class Q>
    void start(Q& q, ListNode& n, TimerId id) {
        insert_sorted(q, 0, n, id);
    }
    template <class Q>
    void tick(Q& q, Jiffies t) {
        collect_due_prefix(q, 0, t);
    }
    template <class Q>
    Jiffies next_event(Q& q) {
        ++q.stats().next_expiry_search_steps;
        return q.nodes()[q.lists().front(0)].expires;
    }
    template <class Q>
    QueueLayout layout(const Q& q) const {
        std::string summary =
            "scheme 2 (ordered list): clk " + std::to_string(q.clk()) + ", " + std::to_string(q.pending()) + " pending";
        if (!q.lists().empty(0))
            summary += ", head due at jiffies " + std::to_string(q.nodes()[q.lists().front(0)].expires);
        return list_layout(q, std::move(summary));
    }
};

using Scheme2Queue = ListQueue<Scheme2Rules>;

} // namespace timersim
