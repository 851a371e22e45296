// Scheme4Queue: Varghese & Lauck's scheme 4, the simple timing wheel: one
// slot per tick of one revolution (256 by default), a cursor that moves one
// slot per tick, and, for delays of a revolution or more, an overflow list
// (the paper's "*": scheme 4 alone only covers MaxInterval).
//
//   START_TIMER           O(1)  delta = expires - clk < slots: slot expires & mask;
//                               else the overflow list
//   STOP_TIMER            O(1)  unlink
//   PER_TICK_BOOKKEEPING  O(1)  the cursor's slot, whose timers are all due; once
//                               per revolution (cursor at slot 0) the whole
//                               overflow list, moving what now fits into its slot
//   EXPIRY_PROCESSING     O(1)  per timer
//
// Why exact: a slot only holds timers less than a revolution ahead of clk,
// so the first time the cursor reaches their slot is their tick; a timer in
// the overflow list is at least a revolution ahead, so the revolution that
// contains its tick starts (slot 0) after it was armed and moves it in
// before its slot comes round. Usage and callback contract:
// wheel/seeds/list_queue.hpp.
#pragma once

#include "wheel/seeds/list_queue.hpp"

namespace timersim {

struct Scheme4Rules {
    static constexpr std::string_view name = "scheme4";
    explicit Scheme4Rules(const ListQueueConfig& c) : slots(checked_slots(c.slots)), mask(slots - 1) {}
    std::size_t lists() const noexcept { return slots + 1; } // the slots, then the overflow list
    std::size_t overflow() const noexcept { return slots; }

    template <class Q>
    void start(Q& q, ListNode& n, TimerId id) {
        const Jiffies clk = q.clk();
        const std::size_t list = time_before(n.expires, clk) ? (clk & mask)
                                 : n.expires - clk < slots  ? (n.expires & mask)
                                                            : overflow();
        n.list = static_cast<std::uint32_t>(list);
        q.lists().push_front(q.nodes(), list, id);
    }
    template <class Q>
    void tick(Q& q, Jiffies t) {
        auto& lists = q.lists();
        auto& nodes = q.nodes();
        ++q.stats().paper.per_tick;
        if ((t & mask) == 0) {
            // A revolution [t, t + slots) begins: pull in what it covers.
            for (TimerId id = lists.front(overflow()); id != kNoTimer;) {
                ListNode& n = nodes[id];
                const TimerId next = n.next;
                ++q.stats().paper.per_tick;
                ++q.stats().list_steps;
                if (n.expires - t < slots) {
                    lists.unlink(nodes, id);
                    n.list = static_cast<std::uint32_t>(n.expires & mask);
                    lists.push_front(nodes, n.list, id);
                    ++q.stats().cascade_moves;
                }
                id = next;
            }
        }
        const std::size_t slot = t & mask;
        while (!lists.empty(slot)) q.collect(lists.front(slot));
    }
    // The first non-empty slot from the cursor (everything in it is due
    // then; the cursor's own may hold the past), or the earliest overflow
    // entry if that is sooner (one armed a revolution ahead is less than a
    // revolution ahead once the cursor has moved).
    template <class Q>
    Jiffies next_event(Q& q) {
        const Jiffies clk = q.clk();
        bool in_overflow = false;
        const Jiffies overflow_first = earliest_expiry(q, overflow(), &in_overflow);
        for (unsigned i = 0; i < slots; ++i) {
            ++q.stats().next_expiry_search_steps;
            const std::size_t slot = (clk + i) & mask;
            if (q.lists().empty(slot)) continue;
            const Jiffies e = i == 0 ? earliest_expiry(q, slot) : clk + i;
            return in_overflow && time_before(overflow_first, e) ? overflow_first : e;
        }
        return overflow_first;
    }
    template <class Q>
    void place_of(const Q&, const ListNode& n, Placement& p) const noexcept {
        p.level = n.list == overflow() ? 1 : 0;
        p.slot = n.list == overflow() ? 0 : n.list;
    }
    template <class Q>
    QueueLayout layout(const Q& q) const {
        QueueLayout l = wheel_layout(q, "scheme 4 (simple wheel + overflow list)", slots, mask);
        l.rows.push_back({"overflow", {}, q.lists().count(q.nodes(), overflow()), 0});
        return l;
    }

    unsigned slots;
    Jiffies mask;
};

using Scheme4Queue = ListQueue<Scheme4Rules>;

} // namespace timersim
