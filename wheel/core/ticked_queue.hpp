// TickedQueue<Q>: what the seeds' queues (the Varghese-Lauck schemes'
// ListQueue, NettyWheel, CogWheel) share to the letter, written once: a
// clock `clk` that is the next tick to process, a softirq that processes
// every tick from clk up to jiffies one at a time (an empty queue snaps clk
// to jiffies instead of walking), each tick's due timers collected and run
// before the next tick, and arms without shortcuts: a re-arm of a pending
// timer is STOP_TIMER then START_TIMER, as the paper has it.
//
//   class MyQueue : public TickedQueue<MyQueue> {
//       friend class TickedQueue<MyQueue>;
//       friend class QueueBasics<MyQueue>;
//       bool holds_timers() const;        // the tick loop has anything to do
//       bool carry_over() const;          // collected timers wait to run
//       void start(Node&, TimerId, Jiffies expires); // START_TIMER (pending_ counted here)
//       void stop(Node&, TimerId);        // STOP_TIMER: the timer is no longer pending
//       void process_tick();              // one tick: collect clk's timers, clk moves on
//       Jiffies next_event();             // the earliest event (holds_timers())
//       void place_of(const Node&, Placement&) const; // level and slot
//       template <bool Bounded, class F>
//       bool expire_work(F& on_fire, std::uint64_t& budget); // run the collected timers
//       TimerPool<Node> pool_;
//       QueueCounters counters_;
//   };
//
// None of them holds a carried-over pass back (no same-bucket shortcut), so
// hold_carry_over() does nothing. The kernel wheels and the configurable
// wheels keep their own runs: theirs differ (the modern wheel's carry-over
// hold, the classic wheel's unbounded fast path).
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/core/queue_basics.hpp"

#include <cstdint>
#include <optional>

namespace timersim {

template <class Q>
class TickedQueue : public QueueBasics<Q> {
    friend class QueueBasics<Q>;

public:
    static constexpr void hold_carry_over() noexcept {}

    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        auto& n = self().pool_.at(id);
        if (!n.pending) self().pool_.check_live(n, id);
        ++self().counters_.arms;
        if (n.pending)
            self().stop(n, id);
        else if (call == ArmCall::mod_timer_pending)
            return ArmOutcome::not_pending;
        self().start(n, id, expires);
        return ArmOutcome::queued;
    }
    // An arm from another CPU (wheel/core/timer_queue.hpp): no shortcut, so the
    // timer leaves unless it is mod_timer_pending() on an idle timer.
    ArmOutcome arm_detach(TimerId id, Jiffies& /*expires*/, ArmCall call = ArmCall::mod_timer) {
        self().pool_.check(id);
        auto& n = self().pool_[id];
        if (n.pending) {
            self().stop(n, id);
        } else if (call == ArmCall::mod_timer_pending) {
            ++self().counters_.arms;
            return ArmOutcome::not_pending;
        }
        return ArmOutcome::queued;
    }
    bool cancel(TimerId id) {
        return this->del_timer(id, [&](auto& n) { self().stop(n, id); });
    }

    // The tick loop has ticks to process, or a budget left collected timers.
    bool softirq_due() const noexcept {
        return self().carry_over() || (self().holds_timers() && time_after_eq(jiffies_, clk_));
    }
    template <class F>
    void run_softirq(F&& on_fire) {
        ++self().counters_.softirq_runs;
        std::uint64_t unused = 0;
        run<false>(on_fire, unused);
    }
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++self().counters_.softirq_runs;
        return resume_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        if (budget == 0) return true;
        return run<true>(on_fire, budget);
    }

    // The queue's next event (jiffies itself if due), as the heap answers;
    // collected timers are due now.
    std::optional<Jiffies> next_timer_interrupt() {
        if (self().carry_over()) return jiffies_;
        if (!self().holds_timers()) return std::nullopt;
        const Jiffies e = self().next_event();
        return time_before_eq(e, jiffies_) ? jiffies_ : e;
    }

    std::size_t pending() const noexcept { return pending_; }
    // A pending timer runs on its expiry's tick, or on clk's if that has
    // passed (the past, or the tick being processed).
    Placement placement(TimerId id) const {
        self().pool_.check(id);
        const auto& n = self().pool_[id];
        Placement p = QueueBasics<Q>::placement_of(n);
        if (!n.pending) return p;
        self().place_of(n, p);
        p.bucket_expiry = time_after_eq(n.expires, clk_) ? n.expires : clk_;
        return p;
    }

protected:
    explicit TickedQueue(Jiffies start) noexcept : jiffies_(start), clk_(start) {}

    // The bookkeeping of START_TIMER: one more pending timer (an empty
    // queue's clk first catches up, so it does not walk stale ticks).
    void note_started() noexcept {
        if (pending_ == 0) clk_ = jiffies_;
        count_started();
    }
    // The counts alone, for a queue whose clock follows other entries.
    void count_started() noexcept {
        ++pending_;
        ++self().counters_.enqueues;
        ++self().counters_.paper.start;
        if (pending_ > self().counters_.peak_pending) self().counters_.peak_pending = pending_;
    }
    // EXPIRY_PROCESSING of one collected timer: no longer pending, it runs.
    // True when that spent the budget (Bounded only).
    template <bool Bounded, class Node, class F>
    bool expire(Node& n, const FiredTimer& fired, F& on_fire, std::uint64_t& budget) {
        n.pending = false;
        --pending_;
        ++self().counters_.expired;
        ++self().counters_.paper.expiry;
        on_fire(fired);
        if constexpr (Bounded)
            if (--budget == 0) return true;
        return false;
    }

    Jiffies jiffies_;
    Jiffies clk_;              // the next tick to process
    std::size_t pending_ = 0;  // timers armed and not yet expired or stopped

private:
    // One softirq: every tick from clk up to jiffies, each tick's collected
    // timers run before the next tick. Returns true when the budget ran out
    // (Bounded only).
    template <bool Bounded, class F>
    bool run(F& on_fire, std::uint64_t& budget) {
        if (self().carry_over() && self().template expire_work<Bounded>(on_fire, budget)) return true;
        while (time_after_eq(jiffies_, clk_)) {
            if (!self().holds_timers()) {
                clk_ = jiffies_;
                break;
            }
            ++self().counters_.jiffies_walked;
            self().process_tick();
            if (self().template expire_work<Bounded>(on_fire, budget)) return true;
        }
        return false;
    }

    Q& self() noexcept { return static_cast<Q&>(*this); }
    const Q& self() const noexcept { return static_cast<const Q&>(*this); }
};

} // namespace timersim
