// CascadeSteps<Q>: the steps of Linux <= 4.7's cascading wheel
// (kernel/time/timer.c) that do not depend on its geometry, written once
// for ClassicWheel (wheel/kernel/classic_wheel.hpp, tv1..tv5) and
// CascadingWheel (wheel/configurable/cascading_wheel.hpp, any levels). It
// reaches the queue's own members, as QueueBasics does: jiffies_,
// timer_jiffies_, next_timer_, active_timers_, pool_, counters_, slack_,
// and the queue's carry_over(), with_slack(), detach(Node&, TimerId),
// next_timer_scan() and run_bounded(on_fire, budget).
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/core/timer_queue.hpp"

#include <cstdint>
#include <optional>

namespace timersim {

template <class Q>
class CascadeSteps {
public:
    // 4.x run_local_timers() raises TIMER_SOFTIRQ on every tick.
    static constexpr bool softirq_due() noexcept { return true; }
    // Nothing to do: 4.x has no same-bucket shortcut, so a re-arm of a
    // carried-over timer always moves it (same expiry: it stays due, not early).
    static constexpr void hold_carry_over() noexcept {}

    // The pass with a budget of expiries (wheel/core/timer_queue.hpp); the
    // queue runs its unbounded pass itself.
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++self().counters_.softirq_runs;
        return resume_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        if (budget == 0) return true;
        if (!self().carry_over() && time_before(self().jiffies_, self().timer_jiffies_)) return false;
        return self().run_bounded(on_fire, budget);
    }

    // 4.4 mod_timer()/mod_timer_pending()/mod_timer_pinned() from another
    // CPU: the same slack and shortcut as arm(), then __mod_timer()'s
    // detach_if_pending() before the base switch (wheel/core/timer_queue.hpp).
    ArmOutcome arm_detach(TimerId id, Jiffies& expires, ArmCall call = ArmCall::mod_timer) {
        Q& q = self();
        q.pool_.check(id);
        auto& n = q.pool_[id];
        if (call == ArmCall::mod_timer && q.slack_) expires = q.with_slack(expires);
        if (call != ArmCall::mod_timer_pending && n.pending && n.expires == expires) {
            ++q.counters_.arms;
            ++q.counters_.same_expiry_shortcuts;
            return ArmOutcome::same_expiry;
        }
        if (n.pending) {
            q.detach(n, id);
        } else if (call == ArmCall::mod_timer_pending) {
            ++q.counters_.arms;
            return ArmOutcome::not_pending;
        }
        return ArmOutcome::queued;
    }

    // 4.x get_next_timer_interrupt(): earliest non-deferrable expiry (the
    // cached next_timer, rescanned from the wheel when stale); jiffies itself
    // if already due; nothing if no non-deferrable timer is queued. A
    // budgeted pass that left part of a step behind is due now.
    std::optional<Jiffies> next_timer_interrupt() {
        Q& q = self();
        if (q.carry_over()) return q.jiffies_;
        if (q.active_timers_ == 0) return std::nullopt;
        if (time_before_eq(q.next_timer_, q.timer_jiffies_)) q.next_timer_ = q.next_timer_scan();
        if (time_before_eq(q.next_timer_, q.jiffies_)) return q.jiffies_;
        return q.next_timer_;
    }

    std::size_t pending() const noexcept { return self().all_timers_; }
    Jiffies timer_jiffies() const noexcept { return self().timer_jiffies_; }

private:
    Q& self() noexcept { return static_cast<Q&>(*this); }
    const Q& self() const noexcept { return static_cast<const Q&>(*this); }
};

} // namespace timersim
