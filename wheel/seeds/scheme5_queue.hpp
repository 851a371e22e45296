// Scheme5Queue: Varghese & Lauck's scheme 5, the hashed timing wheel with
// sorted lists: slot = expires mod slots (256 by default), each slot's list
// sorted by absolute expiry, so the tick takes only the due prefix of the
// cursor's slot and leaves the timers of later revolutions behind it.
//
//   START_TIMER           O(n) worst case, O(1) average when n < slots:
//                         sorted insertion into the slot
//   STOP_TIMER            O(1)  unlink
//   PER_TICK_BOOKKEEPING  O(1)  the cursor slot's head
//   EXPIRY_PROCESSING     O(1)  per timer
//
// Exact: a timer sits in the slot of its own tick (the past: clk's slot),
// and the tick takes every timer of the slot due by then. Usage and
// callback contract: wheel/seeds/list_queue.hpp; the sorted list helpers:
// wheel/seeds/scheme2_queue.hpp.
#pragma once

#include "wheel/seeds/list_queue.hpp"
#include "wheel/seeds/scheme2_queue.hpp"

namespace timersim {

struct Scheme5Rules : HashedRing {
    static constexpr std::string_view name = "scheme5";
    explicit Scheme5Rules(const ListQueueConfig& c) : HashedRing(c, "scheme 5 (hashed wheel, sorted slots)") {}

    template <class Q>
    void start(Q& q, ListNode& n, TimerId id) {
        insert_sorted(q, start_slot(n.expires, q.clk()), n, id);
    }
    template <class Q>
    void tick(Q& q, Jiffies t) {
        collect_due_prefix(q, t & mask, t);
    }
    // Each slot's head is its earliest timer: the least head.
    template <class Q>
    Jiffies next_event(Q& q) {
        return least_over_slots(q, [&](std::size_t s) -> std::optional<Jiffies> {
            const TimerId head = q.lists().front(s);
            if (head == kNoTimer) return std::nullopt;
            return q.nodes()[head].expires;
        });
    }
};

using Scheme5Queue = ListQueue<Scheme5Rules>;

} // namespace timersim
