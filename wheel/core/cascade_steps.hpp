// CascadeSteps<Q>: the steps of Linux <= 4.7's cascading wheel
// (kernel/time/timer.c) that do not depend on its geometry, written once
// for ClassicWheel (wheel/kernel/classic_wheel.hpp, tv1..tv5) and
// CascadingWheel (wheel/configurable/cascading_wheel.hpp, any levels). It
// reaches the queue's own members, as QueueBasics does: jiffies_,
// timer_jiffies_, next_timer_, active_timers_, pool_, counters_, slack_,
// all_timers_, and the queue's carry_over(), with_slack(), detach(Node&,
// TimerId), wheel_lists(), next_timer_scan() and the geometry's part of a
// __run_timers() step: first_level_index(T), cascade_levels(T),
// collect(list, work_list) and pop_work(nodes, work_list), fired(id, node).
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

    // 4.x run_timer_softirq(): the loop runs once jiffies has reached T
    // (or to finish a step a budgeted pass left).
    template <class F>
    void run_softirq(F&& on_fire) {
        Q& q = self();
        ++q.counters_.softirq_runs;
        std::uint64_t unused = 0;
        if (q.carry_over() || time_after_eq(q.jiffies_, q.timer_jiffies_)) run_timers<false>(on_fire, unused);
    }
    // The pass with a budget of expiries (wheel/core/timer_queue.hpp).
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++self().counters_.softirq_runs;
        return resume_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        if (budget == 0) return true;
        if (!self().carry_over() && time_before(self().jiffies_, self().timer_jiffies_)) return false;
        return run_timers<true>(on_fire, budget);
    }

    // 4.4 mod_timer()/mod_timer_pending()/mod_timer_pinned() from another
    // CPU: the same slack and shortcut as arm(), then __mod_timer()'s
    // detach_if_pending() before the base switch (wheel/core/timer_queue.hpp).
    ArmOutcome arm_detach(TimerId id, Jiffies& expires, ArmCall call = ArmCall::mod_timer) {
        Q& q = self();
        q.pool_.check(id);
        if (const auto ended = mod_timer_detach(q.pool_[id], id, expires, call)) {
            ++q.counters_.arms;
            return *ended;
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

protected:
    // 4.x __mod_timer() up to the enqueue: mod_timer()'s slack, the
    // same-expiry return of mod_timer() and mod_timer_pinned()
    // (mod_timer_pending() always requeues), detach_if_pending(). Gives the
    // outcome that ends the call, or nothing: enqueue at `expires`. Counts
    // the shortcut, not the arm.
    template <class Node>
    [[gnu::always_inline]] std::optional<ArmOutcome> mod_timer_detach(Node& n, TimerId id, Jiffies& expires,
                                                                      ArmCall call) {
        Q& q = self();
        if (call == ArmCall::mod_timer && q.slack_) expires = q.with_slack(expires);
        if (call != ArmCall::mod_timer_pending && n.pending && n.expires == expires) {
            ++q.counters_.same_expiry_shortcuts;
            return ArmOutcome::same_expiry;
        }
        if (n.pending)
            q.detach(n, id);
        else if (call == ArmCall::mod_timer_pending)
            return ArmOutcome::not_pending;
        return std::nullopt;
    }
    // 4.x __run_timers(): one step per jiffy from T up to jiffies. Returns
    // true when the budget ran out (Bounded only).
    template <bool Bounded, class F>
    bool run_timers(F& on_fire, std::uint64_t& budget) {
        Q& q = self();
        // A budgeted pass's carry-over: the rest of the step it stopped in.
        if (q.carry_over() && expire_work_list<Bounded>(on_fire, budget)) return true;
        while (time_after_eq(q.jiffies_, q.timer_jiffies_)) {
            // Nothing queued: catch up in one step instead of walking.
            if (q.all_timers_ == 0) {
                q.timer_jiffies_ = q.jiffies_;
                break;
            }
            ++q.counters_.jiffies_walked;
            const unsigned index = q.first_level_index(q.timer_jiffies_);
            // The first level wrapped: the levels above cascade (cascade_levels()).
            if (index == 0) q.cascade_levels(q.timer_jiffies_);
            ++q.timer_jiffies_;
            ++q.counters_.buckets_scanned;
            q.collect(index, work_list());
            if (expire_work_list<Bounded>(on_fire, budget)) return true;
        }
        return false;
    }
    // The expiry half of a __run_timers() step: the work list from its head.
    template <bool Bounded, class F>
    bool expire_work_list(F& on_fire, std::uint64_t& budget) {
        Q& q = self();
        auto& nodes = q.pool_.nodes();
        for (TimerId id; (id = q.pop_work(nodes, work_list())) != kNoTimer;) {
            auto& n = nodes[id];
            n.pending = false;
            if (!n.deferrable) --q.active_timers_;
            --q.all_timers_;
            ++q.counters_.expired;
            on_fire(q.fired(id, n));
            if constexpr (Bounded)
                if (--budget == 0) return true;
        }
        return false;
    }
    // The list a softirq run moves a step's timers to, and the one a cascade
    // collects into: the two after the wheel's own lists.
    std::size_t work_list() const noexcept { return self().wheel_lists(); }
    std::size_t cascade_list() const noexcept { return self().wheel_lists() + 1; }

private:
    Q& self() noexcept { return static_cast<Q&>(*this); }
    const Q& self() const noexcept { return static_cast<const Q&>(*this); }
};

} // namespace timersim
