// The 6.1 wheel's timer base and the steps of kernel/time/timer.c that do
// not depend on its geometry, written once for the two queues that follow
// those rules: ModernWheel (wheel/kernel/modern_wheel.hpp, the kernel's
// fixed levels) and InPlaceWheel (wheel/configurable/in_place_wheel.hpp,
// any levels). Where a timer goes, how a bucket is collected and how the
// next expiry is searched stay with each queue; what a base keeps, how it
// is forwarded, what get_next_timer_interrupt() reports and how a budgeted
// pass runs its carry-over are the same rules in both.
//
// InPlaceSteps<Q> reaches the queue's own members, as QueueBasics does:
//
//   class MyWheel : public InPlaceSteps<MyWheel> {
//       friend class InPlaceSteps<MyWheel>;
//       using Base = InPlaceBase<Buckets, kLevels>;
//       std::array<Base, 2> bases_;   // BASE_STD, BASE_DEF
//       bool deferrable_base_;
//       Jiffies jiffies_;
//       TimerPool<Node> pool_;        // Node with pending, expires, idx, base
//       QueueCounters counters_;
//       void forward_timer_base(Base&);
//       Index index_for(Jiffies expires, Jiffies clk) const;    // calc_wheel_index(): .idx
//       void detach(Base&, TimerId, Node&);                       // detach_if_pending()
//       Jiffies next_timer_search(Base&);                         // __next_timer_interrupt()
//   };
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/core/timer_queue.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace timersim {

// One timer base (6.1 struct timer_base), per CPU: BASE_STD, and BASE_DEF
// for deferrable timers when NO_HZ_COMMON.
template <class Buckets, std::size_t MaxLevels>
struct InPlaceBase {
    static constexpr Jiffies kNextTimerMaxDelta = (Jiffies{1} << 30) - 1; // NEXT_TIMER_MAX_DELTA

    InPlaceBase(std::size_t lists, Jiffies start) : buckets(lists), clk(start), next_expiry(start + kNextTimerMaxDelta) {}

    Buckets buckets;          // the wheel's buckets, then one work list per level
    Jiffies clk;              // the next jiffy the wheel will process
    Jiffies next_expiry;      // 6.1 init_timer_cpu(): clk + NEXT_TIMER_MAX_DELTA
    bool next_expiry_recalc = false;
    bool timers_pending = false;
    bool is_idle = false;
    std::array<std::uint64_t, MaxLevels> pending_map{}; // one bit per bucket, one word per level
    std::size_t queued = 0;
    // The clock value of the last collection: the bucket expiry of
    // every timer in a work list (collected, not yet run).
    Jiffies collected_clk = 0;
    // Carry-over of a budgeted pass: levels whose work list still holds
    // collected timers, and whether the highest of them has started
    // (then carry_clk is its "baseclk", read when it started).
    unsigned carry_levels = 0;
    bool carry_level_started = false;
    Jiffies carry_clk = 0;
    // hold_carry_over() was called: the carry-over waits for a later pass.
    bool carry_held = false;
};

// The slow half of 6.1 forward_timer_base(): the base is behind jiffies.
// Catch its clk up with jiffies, but never past a bucket that is already
// due (then only up to next_expiry).
template <class Base>
void forward_idle_base(Base& b, Jiffies jiffies) noexcept {
    if (time_after(b.next_expiry, jiffies)) {
        b.clk = jiffies;
    } else {
        // The kernel WARNs and keeps clk if next_expiry went behind clk.
        if (time_before(b.next_expiry, b.clk)) return;
        b.clk = b.next_expiry;
    }
}

// 6.1 enqueue_timer()'s last step: next_expiry only ever moves earlier
// here (by bucket expiry, not by timer->expires).
template <class Base>
[[gnu::always_inline]] inline void note_bucket_expiry(Base& b, Jiffies bucket_expiry) noexcept {
    if (time_before(bucket_expiry, b.next_expiry)) {
        b.next_expiry = bucket_expiry;
        b.timers_pending = true;
        b.next_expiry_recalc = false;
    }
}

// What 6.1 __next_timer_interrupt() leaves behind: the search is counted,
// next_expiry is fresh again, and whether any timer is pending is known
// (a search that found nothing returns clk + NEXT_TIMER_MAX_DELTA).
template <class Base>
Jiffies note_next_search(Base& b, Jiffies next, unsigned steps, QueueCounters& counters) noexcept {
    ++counters.next_expiry_searches;
    counters.next_expiry_search_steps += steps;
    b.next_expiry_recalc = false;
    b.timers_pending = next != b.clk + Base::kNextTimerMaxDelta;
    return next;
}

// expire_timers() over a base's carried-over levels, highest first,
// resumable: baseclk is read when a level starts, as expire_timers() does.
// expire_level(level, baseclk) runs that level's work list and returns true
// when the budget ran out; then so does this, the level still carried.
template <class Base, class ExpireLevel>
[[gnu::always_inline]] inline bool expire_carried_levels(Base& b, ExpireLevel&& expire_level) {
    while (b.carry_levels != 0) {
        const unsigned level = static_cast<unsigned>(std::bit_width(b.carry_levels)) - 1;
        if (!b.carry_level_started) {
            b.carry_clk = b.clk - 1;
            b.carry_level_started = true;
        }
        if (expire_level(level, b.carry_clk)) return true;
        b.carry_levels &= ~(1u << level);
        b.carry_level_started = false;
    }
    return false;
}

template <class Q>
class InPlaceSteps {
public:
    // 6.1 run_local_timers(): raise only when a base's next_expiry is due. It
    // is only called from a running tick, i.e. when the CPU is awake, so the
    // deferrable base is checked too.
    bool softirq_due() const noexcept {
        const Q& q = self();
        if (time_after_eq(q.jiffies_, q.bases_[0].next_expiry)) return true;
        return q.deferrable_base_ && time_after_eq(q.jiffies_, q.bases_[1].next_expiry);
    }
    // A budgeted pass left collected timers in a work list.
    bool carry_over() const noexcept { return (self().bases_[0].carry_levels | self().bases_[1].carry_levels) != 0; }
    // The stopped pass will not be resumed (wheel/core/timer_queue.hpp): until a
    // later pass runs the carry-over, re-arming one of its timers is a normal
    // enqueue, never the same-bucket shortcut.
    void hold_carry_over() noexcept {
        for (auto& b : self().bases_) b.carry_held = b.carry_levels != 0;
    }

    // 6.1 __mod_timer() from another CPU, up to get_target_base(): the same
    // shortcuts against the timer's own base as arm(); then the timer leaves
    // this wheel (detach_if_pending(), or nothing for an idle timer after the
    // base was locked and forwarded) and the caller enqueues it on the new
    // base. No slack: `expires` is unchanged.
    ArmOutcome arm_detach(TimerId id, Jiffies& expires, ArmCall call = ArmCall::mod_timer) {
        Q& q = self();
        q.pool_.check(id);
        auto& n = q.pool_[id];
        auto& b = q.bases_[n.base];
        if (n.pending) {
            decltype(q.index_for(expires, b.clk)) ix{};
            if (const auto shortcut = pending_shortcuts(b, n, expires, ix)) {
                ++q.counters_.arms;
                return *shortcut;
            }
            q.detach(b, id, n);
            return ArmOutcome::queued;
        }
        q.forward_timer_base(b);
        if (call == ArmCall::mod_timer_pending) {
            ++q.counters_.arms;
            return ArmOutcome::not_pending;
        }
        return ArmOutcome::queued;
    }

    // 6.1 get_next_timer_interrupt() for basej = jiffies, on the standard base
    // only (deferrable timers never wake an idle CPU). Forwards clk as the
    // kernel does and sets is_idle when the next event is more than one tick
    // away. Returns the jiffy of the next event (jiffies itself if one is
    // already due), or nothing when no timer is pending.
    std::optional<Jiffies> next_timer_interrupt() {
        Q& q = self();
        auto& b = q.bases_[0];
        const Jiffies basej = q.jiffies_;
        // A budgeted pass left collected timers behind: they are due now.
        if (b.carry_levels != 0) {
            b.is_idle = false;
            return basej;
        }
        if (b.next_expiry_recalc) b.next_expiry = q.next_timer_search(b);
        const Jiffies nextevt = b.next_expiry;
        // A fresh next event lets an idle base's clk move forward, never back.
        if (time_after(basej, b.clk)) {
            if (time_after(nextevt, basej))
                b.clk = basej;
            else if (time_after(nextevt, b.clk))
                b.clk = nextevt;
        }
        if (time_before_eq(nextevt, basej)) {
            b.is_idle = false;
            return basej;
        }
        // Sleeping more than one tick (or forever) marks the base idle.
        if (!b.timers_pending) {
            b.is_idle = true;
            return std::nullopt;
        }
        // 6.1 get_next_timer_interrupt() only sets is_idle here, never clears it.
        if (nextevt - basej > 1) b.is_idle = true;
        return nextevt;
    }
    // timer_clear_idle(): the CPU left idle.
    void clear_idle() noexcept { self().bases_[0].is_idle = false; }

    std::size_t pending() const noexcept { return self().bases_[0].queued + self().bases_[1].queued; }

protected:
    // A new pass runs the held carry-over first: its timers are collected
    // timers of a running pass again, as in the kernel.
    void release_carry_over() noexcept {
        for (auto& b : self().bases_) b.carry_held = false;
    }
    // 6.1 __mod_timer() for a pending timer, up to the requeue: the
    // same-expiry return, forward_timer_base(), calc_wheel_index() (the
    // queue's index_for()) and the same-bucket return, where only ->expires
    // changes and the timer keeps its bucket (and its CPU). Gives the outcome
    // that ends the call, or nothing: requeue at `ix`. Counts the shortcut,
    // not the arm.
    template <class Base, class Node, class Index>
    [[gnu::always_inline]] std::optional<ArmOutcome> pending_shortcuts(Base& b, Node& n, Jiffies expires, Index& ix) {
        Q& q = self();
        if (n.expires == expires) {
            ++q.counters_.same_expiry_shortcuts;
            return ArmOutcome::same_expiry;
        }
        q.forward_timer_base(b);
        ix = q.index_for(expires, b.clk);
        if (same_bucket(b, n, ix.idx)) {
            n.expires = expires;
            ++q.counters_.same_bucket_shortcuts;
            return ArmOutcome::same_bucket;
        }
        return std::nullopt;
    }
    // 6.1 __mod_timer() for an idle timer, up to the enqueue: the base is
    // locked and forwarded before the MOD_TIMER_PENDING_ONLY check, so an
    // idle timer forwards it too. Counts the arm; false: mod_timer_pending()
    // of an idle timer, which ends there.
    template <class Base, class Node>
    [[gnu::always_inline]] bool idle_may_queue(Base& b, Node& n, TimerId id, ArmCall call) {
        Q& q = self();
        q.pool_.check_live(n, id);
        ++q.counters_.arms;
        q.forward_timer_base(b);
        return call != ArmCall::mod_timer_pending;
    }
    // May a re-arm of pending timer n to bucket `idx` keep it where it is
    // (6.1 __mod_timer()'s same-bucket shortcut)? Not when n is held
    // carry-over: it sits in a work list, collected at a clock that has
    // passed, and would fire there, before its new expiry. The kernel never
    // keeps collected timers beyond the run that collected them; only the
    // engine's --max-expiries-per-softirq bound does.
    template <class Base, class Node>
    bool same_bucket(const Base& b, const Node& n, unsigned idx) const noexcept {
        return idx == n.idx && !(b.carry_held && !self().in_bucket(b, n));
    }

private:
    Q& self() noexcept { return static_cast<Q&>(*this); }
    const Q& self() const noexcept { return static_cast<const Q&>(*this); }
};

} // namespace timersim
