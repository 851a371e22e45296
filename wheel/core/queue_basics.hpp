// QueueBasics<Q>: the members of the TimerQueue interface
// (wheel/core/timer_queue.hpp) that every queue with a TimerPool of nodes
// spells the same way, written once. It holds no data (an empty base: the
// queue's layout does not change) and reaches Q's own members, so a queue
// declares
//
//   class MyQueue : public QueueBasics<MyQueue> {
//       friend class QueueBasics<MyQueue>;
//       Jiffies jiffies_;
//       TimerPool<Node> pool_;      // Node with `pending` and `expires`
//       QueueCounters counters_;
//   };
//
// and gets create(), jiffies(), set_jiffies(), destroy(), is_pending(),
// counters() and reserve() (of the pool, and of what the queue's own
// reserve_beside_pool(), if it has one, reserves per timer). A queue whose
// answer differs (the heap's is_pending()) keeps its own member, which
// hides this one.
//
// Two helpers for the queues' own code: del_timer() is the shape of every
// queue's cancel(), and placement_of() the start of every placement().
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <stdexcept>

namespace timersim {

template <class Q>
class QueueBasics {
public:
    // timer_setup(): a fresh node; TIMER_DEFERRABLE kept where the node has
    // room for it (the heap and the seeds' designs ignore idle policy).
    TimerId create(TimerFlags flags = {}) {
        const TimerId id = self().pool_.create();
        if constexpr (requires { self().pool_[id].deferrable; }) self().pool_[id].deferrable = flags.deferrable;
        return id;
    }
    // New flags for a timer that is not pending (validate's replays number
    // timer objects anew and learn their flags at their first start).
    void set_flags(TimerId id, TimerFlags flags) {
        if (self().is_pending(id)) throw std::logic_error("set_flags(): the timer is pending");
        if constexpr (requires { self().pool_[id].deferrable; }) self().pool_[id].deferrable = flags.deferrable;
    }
    Jiffies jiffies() const noexcept { return self().jiffies_; }
    void set_jiffies(Jiffies j) {
        if (time_before(j, self().jiffies_)) throw std::invalid_argument("jiffies cannot go backwards");
        self().jiffies_ = j;
    }
    // timer_shutdown(): off its queue, then its node is free for create().
    void destroy(TimerId id) {
        self().cancel(id);
        self().pool_.destroy(id);
    }
    bool is_pending(TimerId id) const {
        self().pool_.check(id);
        return self().pool_[id].pending;
    }
    const QueueCounters& counters() const noexcept { return self().counters_; }
    // Room for `timers` timers before the run, so that none allocates in it.
    void reserve(std::size_t timers) {
        self().pool_.reserve(timers);
        if constexpr (requires { self().reserve_beside_pool(timers); }) self().reserve_beside_pool(timers);
    }
    // For a queue that says where a timer last was (the kernel wheels'
    // last_placement(), also after it fired or was cancelled): only a
    // pending timer has a place. A queue without last_placement() declares
    // its own placement().
    Placement placement(TimerId id) const {
        self().pool_.check(id);
        const auto& n = self().pool_[id];
        if (!n.pending) return Placement{.expires = n.expires};
        return self().last_placement(id);
    }

protected:
    // del_timer(): a pending timer leaves its queue through detach(node, id)
    // and counts as a cancel; an idle one only has its handle checked (a
    // pending node is live, so only an idle one needs the check).
    template <class Detach>
    [[gnu::always_inline]] bool del_timer(TimerId id, Detach&& detach) {
        auto& n = self().pool_.at(id);
        if (!n.pending) {
            self().pool_.check_live(n, id);
            return false;
        }
        detach(n);
        ++self().counters_.cancels;
        return true;
    }

    // What placement() says of any timer: pending and expires; the queue
    // adds where a pending one sits.
    template <class Node>
    static Placement placement_of(const Node& n) noexcept {
        Placement p;
        p.pending = n.pending;
        p.expires = n.expires;
        return p;
    }

private:
    Q& self() noexcept { return static_cast<Q&>(*this); }
    const Q& self() const noexcept { return static_cast<const Q&>(*this); }
};

} // namespace timersim
