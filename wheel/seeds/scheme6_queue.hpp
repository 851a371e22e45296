// Scheme6Queue: Varghese & Lauck's scheme 6, the hashed timing wheel with
// unsorted lists: slot = expires mod slots (256 by default), each timer
// keeping the revolutions (rounds) it still has to wait; the tick walks the
// whole of the cursor's slot, expiring what has no round left and
// decrementing the rest. Netty's HashedWheelTimer is this scheme
// (wheel/seeds/netty_wheel.hpp).
//
//   START_TIMER           O(1)  push into slot expires & mask, rounds = delta / slots
//   STOP_TIMER            O(1)  unlink
//   PER_TICK_BOOKKEEPING  O(n) worst case, O(1) average when n < slots:
//                         every entry of the cursor's slot
//   EXPIRY_PROCESSING     O(1)  per timer
//
// Exact: with delta = expires - clk, the slot's first visit is at tick
// clk + delta mod slots, and after delta / slots more revolutions it is
// the tick `expires` itself. Usage and callback contract:
// wheel/seeds/list_queue.hpp.
#pragma once

#include "wheel/seeds/list_queue.hpp"

namespace timersim {

struct Scheme6Rules : HashedRing {
    static constexpr std::string_view name = "scheme6";
    explicit Scheme6Rules(const ListQueueConfig& c) : HashedRing(c, "scheme 6 (hashed wheel, unsorted slots, rounds)") {}

    template <class Q>
    void start(Q& q, ListNode& n, TimerId id) {
        const Jiffies clk = q.clk();
        n.list = start_slot(n.expires, clk);
        n.count = time_before(n.expires, clk) ? 0 : (n.expires - clk) / slots;
        q.lists().push_front(q.nodes(), n.list, id);
    }
    template <class Q>
    void tick(Q& q, Jiffies t) {
        count_down_list(q, t & mask);
    }
    // Every entry of every slot: unsorted, so the whole wheel.
    template <class Q>
    Jiffies next_event(Q& q) {
        return least_over_slots(q, [&](std::size_t s) -> std::optional<Jiffies> {
            bool any = false;
            const Jiffies e = earliest_expiry(q, s, &any);
            if (!any) return std::nullopt;
            return e;
        });
    }
};

using Scheme6Queue = ListQueue<Scheme6Rules>;

} // namespace timersim
