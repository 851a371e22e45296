// TickedQueue<Q>: the part of the TimerQueue interface (wheel/core/timer_queue.hpp)
// that the seeds' queues (the Varghese-Lauck schemes' ListQueue, NettyWheel,
// CogWheel) share to the letter: jiffies, and a softirq that is one run of
// Q's own tick loop, unbounded or with a budget of expiries:
//
//   class MyQueue : public TickedQueue<MyQueue> {
//       friend class TickedQueue<MyQueue>;
//       template <bool Bounded, class F>
//       bool run(F& on_fire, std::uint64_t& budget); // ticks clk..jiffies; true: budget spent
//       QueueCounters counters_;                     // softirq_runs counted here
//   };
//
// None of them holds a carried-over pass back (no same-bucket shortcut), so
// hold_carry_over() does nothing. The kernel wheels and the configurable
// wheels keep their own versions: their runs differ (the modern wheel's
// carry-over hold, the classic wheel's unbounded fast path).
#pragma once

#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <stdexcept>

namespace timersim {

template <class Q>
class TickedQueue {
public:
    Jiffies jiffies() const noexcept { return jiffies_; }
    void set_jiffies(Jiffies j) {
        if (time_before(j, jiffies_)) throw std::invalid_argument("jiffies cannot go backwards");
        jiffies_ = j;
    }
    static constexpr void hold_carry_over() noexcept {}

    template <class F>
    void run_softirq(F&& on_fire) {
        ++self().counters_.softirq_runs;
        std::uint64_t unused = 0;
        self().template run<false>(on_fire, unused);
    }
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++self().counters_.softirq_runs;
        return resume_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        if (budget == 0) return true;
        return self().template run<true>(on_fire, budget);
    }

protected:
    explicit TickedQueue(Jiffies start) noexcept : jiffies_(start) {}

    Jiffies jiffies_;

private:
    Q& self() noexcept { return static_cast<Q&>(*this); }
};

} // namespace timersim
