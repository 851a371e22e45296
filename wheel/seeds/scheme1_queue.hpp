// Scheme1Queue: Varghese & Lauck's scheme 1, "straightforward": one
// unsorted list of every pending timer, each holding the ticks it has to
// go; the tick decrements every one of them.
//
//   START_TIMER           O(1)  push at the head, ticks to go = expires - clk
//   STOP_TIMER            O(1)  unlink (doubly linked)
//   PER_TICK_BOOKKEEPING  O(n)  visit every timer: 0 to go -> expire, else decrement
//   EXPIRY_PROCESSING     O(1)  per timer
//
// The paper's cost table (SOSP 1987, section 3). Fires on the exact tick
// (wheel/seeds/list_queue.hpp). Machinery shared with the other schemes:
// wheel/seeds/list_queue.hpp; usage and callback contract there.
#pragma once

#include "wheel/seeds/list_queue.hpp"

namespace timersim {

struct Scheme1Rules : SingleList {
    static constexpr std::string_view name = "scheme1";
    explicit Scheme1Rules(const ListQueueConfig&) {}

    template <class Q>
    void start(Q& q, ListNode& n, TimerId id) {
        n.list = 0;
        n.count = time_after_eq(n.expires, q.clk()) ? n.expires - q.clk() : 0;
        q.lists().push_front(q.nodes(), 0, id);
    }
    template <class Q>
    void tick(Q& q, Jiffies) {
        count_down_list(q, 0);
    }
    // O(n): the earliest expiry.
    template <class Q>
    Jiffies next_event(Q& q) {
        return earliest_expiry(q, 0);
    }
    template <class Q>
    QueueLayout layout(const Q& q) const {
        return list_layout(q, "scheme 1 (unsorted list, per-tick decrement): clk " + std::to_string(q.clk()) + ", " +
                                  std::to_string(q.pending()) + " pending; the next tick visits all of them");
    }
};

using Scheme1Queue = ListQueue<Scheme1Rules>;

} // namespace timersim
