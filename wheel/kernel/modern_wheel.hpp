// ModernWheel: one CPU's timer bases in Linux 6.1 (kernel/time/timer.c),
// the non-cascading wheel introduced in 4.8. Geometry: wheel/kernel/modern_levels.hpp.
//
// Per base (BASE_STD, and BASE_DEF for deferrable timers when NO_HZ_COMMON):
//   clk            the next jiffy the wheel will process; one *ahead* of the
//                  last processed bucket while its timers run
//   next_expiry    bucket expiry of the earliest pending bucket; lazily
//                  recomputed (only flagged after a delete), so it can be
//                  stale and early, which makes the tick raise a spurious softirq
//   pending_map    one bit per bucket, one 64-bit word per level
//
// What the kernel does and this model does too:
//   * forward_timer_base() before every index computation, so a base that
//     slept does not inflate deltas; it never jumps over a due bucket.
//   * mod_timer() shortcuts: same expires -> nothing; same bucket -> only
//     ->expires changes (no dequeue, no enqueue, no trace event).
//   * the softirq jumps clk straight to next_expiry, collects one bucket per
//     level while the lower clock bits are zero, runs the highest level first
//     and each bucket from its head (LIFO with respect to enqueue order).
//
// Budgeted passes (wheel/core/timer_queue.hpp): the collected levels of the
// iteration in progress are the carry-over (Base::carry_levels, still in
// their work lists); a pass runs a base's carry-over before it looks at
// next_expiry again, and goes from BASE_STD to BASE_DEF as the unbounded
// pass does.
#pragma once

#include "wheel/core/bucket_arrays.hpp"
#include "wheel/core/clock.hpp"
#include "wheel/core/in_place_base.hpp"
#include "wheel/core/queue_basics.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/modern_levels.hpp"

#include <array>
#include <bit>
#include <optional>
#include <stdexcept>

namespace timersim {

class ModernWheel : public QueueBasics<ModernWheel>, public InPlaceSteps<ModernWheel> {
public:
    static constexpr std::string_view name = "modern";

    struct Config {
        unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
        std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
        // CONFIG_NO_HZ_COMMON: deferrable timers get their own base (BASE_DEF).
        bool deferrable_base = true;
    };

    enum BaseIndex : std::uint8_t { base_std = 0, base_def = 1 };

    // 16 bytes: four to a cache line. The bucket expiry is not stored: it
    // follows from the bucket and the base's clock (bucket_expiry_of()).
    // With its bucket entry and the dead entries waiting for a compaction
    // (wheel/core/bucket_arrays.hpp), about 24 bytes a timer.
    struct Node {
        Jiffies expires = 0;
        TimerId ticket = kNoTimer;  // its bucket entry's ticket; the pool's free-list link when free
        std::uint16_t idx = 0;      // kernel bucket index (timer->flags >> 22)
        bool pending = false;
        bool live : 1 = false;
        bool deferrable : 1 = false;
        std::uint8_t base : 1 = base_std; // set by create() and set_flags(): TIMER_DEFERRABLE and the config decide it
    };
    static_assert(sizeof(Node) == 16);

    // Buckets 0..64*depth-1, then one work list per level
    // (wheel/core/in_place_base.hpp).
    using Base = InPlaceBase<BucketArrays, modern::kMaxDepth>;
    static_assert(Base::kNextTimerMaxDelta == modern::kNextTimerMaxDelta);

    explicit ModernWheel(Config config);

    TimerId create(TimerFlags flags = {}) {
        const TimerId id = pool_.create();
        Node& n = pool_[id];
        n.deferrable = flags.deferrable;
        // A timer stays on this CPU's wheel (arm_detach() hands it to another
        // wheel) and its base only depends on TIMER_DEFERRABLE, so it is known
        // now; arm() then never waits on the flag to find its base.
        n.base = target_base(n);
        return id;
    }

    // New flags for a timer that is not pending (validate learns a timer
    // object's flags at its first timer_start, and numbers its objects anew).
    void set_flags(TimerId id, TimerFlags flags) {
        Node& n = pool_[id];
        if (n.pending) throw std::logic_error("ModernWheel::set_flags(): the timer is pending");
        n.deferrable = flags.deferrable;
        n.base = target_base(n);
    }

    // 6.1 __mod_timer() as reached from mod_timer() and mod_timer_pending().
    // There is no slack in the modern wheel; the pinned variant only matters
    // for the choice of CPU, which is the engine's business. Inline, as the
    // kernel's is: the call is most of the cost otherwise.
    //
    // Out of memory (a bucket array cannot grow): throws std::bad_alloc; a
    // pending timer stays where it was, an idle one stays idle.
    //
    // The base is chosen by a branch, not by indexing with the node's base
    // field: on a large wheel the node is a cache miss, and a predicted
    // branch lets the whole index computation and enqueue run before it
    // arrives instead of waiting on it for the base's address.
    //
    // The common cases are decided first, without a stack frame: mod_timer()
    // on the standard base with clk caught up, a delta below the cutoff and
    // room in the target bucket, for an idle timer (inline) or a pending one
    // that leaves a bucket (not a work list) with other timers in it for
    // another bucket (arm_pending()). They take the steps arm_general()
    // takes for them, so they add no rule; every other case, the checks and
    // errors included, goes to arm_general().
    [[gnu::always_inline]] ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        return arm_fast<false>(id, expires, call);
    }
    // The same call with the pending case inline too, for a caller that
    // inlines the whole call into a frame of its own anyway (the engine's
    // flattened arm): there arm_pending()'s own frame only adds a call.
    [[gnu::always_inline]] ArmOutcome arm_inlined(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        return arm_fast<true>(id, expires, call);
    }
    // The same call, every case.
    [[gnu::noinline]] ArmOutcome arm_general(TimerId id, Jiffies expires, ArmCall call) {
        Node& n = pool_.at(id);
        if (n.base == base_std) [[likely]]
            return arm_on<base_std>(id, n, expires, call);
        return arm_on<base_def>(id, n, expires, call);
    }
    // 6.1 del_timer(). A pending timer is live, so only an idle one needs the
    // validity check.
    bool cancel(TimerId id) {
        Node& n = pool_.at(id);
        if (!n.pending) {
            pool_.check_live(n, id);
            return false;
        }
        // A branch for the base, as in arm(): its count and bitmap do not
        // wait for the node.
        if (n.base == base_std) [[likely]]
            detach(bases_[base_std], n);
        else
            detach(bases_[base_def], n);
        ++counters_.cancels;
        return true;
    }


    // Is a timer due now: a bucket of either base at or before jiffies, or
    // carry-over? Unlike softirq_due() this ignores a stale next_expiry, and
    // unlike next_timer_interrupt() it changes nothing (no forwarding, no
    // counters): a view for callers that model what the trace cannot show.
    bool bucket_due() const noexcept;
    // The standard base's next event, changing nothing: jiffies if a pass
    // left collected timers behind, else its earliest pending bucket's
    // expiry; nothing when no timer is pending. What the 6.9+ migration
    // hierarchy holds for an idle CPU's global base (Modern69Wheel).
    std::optional<Jiffies> peek_next_event() const noexcept;

    // 6.1 run_timer_softirq(): the standard base, then the deferrable base.
    template <class F>
    void run_softirq(F&& on_fire) {
        ++counters_.softirq_runs;
        release_carry_over();
        std::uint64_t unused = 0;
        run_base<false>(bases_[base_std], on_fire, unused);
        if (deferrable_base_) run_base<false>(bases_[base_def], on_fire, unused);
    }
    // The same pass with a budget of expiries (wheel/core/timer_queue.hpp).
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++counters_.softirq_runs;
        release_carry_over();
        pass_base_ = base_std;
        return run_pass(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        return run_pass(on_fire, budget);
    }

    // A hint for a simulator that knows its next operations: timer `id` is
    // armed or cancelled soon, so fetch its node (the only line either
    // writes that may be cold). Changes nothing.
    void prefetch(TimerId id) const noexcept { pool_.prefetch(id); }
    // The bucket the timer is in or was last in, also once it fired or was
    // cancelled: for the event log's fire and cancel rows.
    Placement last_placement(TimerId id) const;
    // The 16-byte node, its bucket entry and, in a long churn, about one
    // dead entry waiting for a compaction (1.9 entries per timer on
    // average, 2.6 at peak: docs/performance.md, "Bucket arrays").
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node) + 2 * sizeof(TimerId); }

    unsigned depth() const noexcept { return depth_; }
    const Base& base(BaseIndex b) const noexcept { return bases_[b]; }
    // Timers queued in bucket idx (0 .. 64*depth-1) of a base.
    std::uint32_t bucket_count(BaseIndex b, unsigned idx) const noexcept { return bases_[b].buckets.count(idx); }
    // The timers of bucket idx in the order they would fire (newest first).
    // Entries held by the buckets and work lists, live or dead: the
    // memory figures (bench/bucket_churn.cpp).
    std::size_t bucket_entries() const noexcept {
        return bases_[base_std].buckets.entries() + bases_[base_def].buckets.entries();
    }
    std::vector<TimerId> bucket_timers(BaseIndex b, unsigned idx) const {
        return bases_[b].buckets.live_entries(pool_.nodes(), idx);
    }

private:
    friend class QueueBasics<ModernWheel>;
    friend class InPlaceSteps<ModernWheel>;

    // arm()'s short paths; PendingInline: the pending case inline as well
    // (arm_inlined()).
    template <bool PendingInline>
    [[gnu::always_inline]] ArmOutcome arm_fast(TimerId id, Jiffies expires, ArmCall call) {
        if (pool_.contains(id) && call != ArmCall::mod_timer_pending) [[likely]] {
            Node& n = pool_[id];
            if (n.pending) {
                if constexpr (PendingInline) return arm_pending_inline(id, expires, call);
                else return arm_pending(id, expires, call);
            }
            Base& b = bases_[base_std];
            const Jiffies delta = expires - b.clk;
            if (n.live && n.base == base_std && jiffies_diff(jiffies_, b.clk) < 1 && delta < cutoff_) [[likely]] {
                const modern::WheelIndex wi = modern::place_at_level(expires, modern::level_of_delta(delta));
                if (b.buckets.has_room(wi.idx)) [[likely]] {
                    ++counters_.arms;
                    n.expires = expires;
                    link_timer<true>(b, id, n, wi);
                    n.pending = true;
                    ++b.queued;
                    note_pending();
                    return ArmOutcome::queued;
                }
            }
        }
        return arm_general(id, expires, call);
    }
    [[gnu::noinline]] ArmOutcome arm_pending(TimerId id, Jiffies expires, ArmCall call) {
        return arm_pending_inline(id, expires, call);
    }
    // mod_timer() (or the pinned variant, the same here) of a pending timer
    // of a valid handle: the short path, else arm_general().
    [[gnu::always_inline]] ArmOutcome arm_pending_inline(TimerId id, Jiffies expires, ArmCall call) {
        Node& n = pool_[id];
        Base& b = bases_[base_std];
        const Jiffies delta = expires - b.clk;
        if (n.base == base_std && jiffies_diff(jiffies_, b.clk) < 1 && delta < cutoff_ && n.expires != expires) [[likely]] {
            const modern::WheelIndex wi = modern::place_at_level(expires, modern::level_of_delta(delta));
            if (wi.idx != n.idx && b.buckets.holds(n.idx, n) && b.buckets.count(n.idx) > 1 &&
                b.buckets.has_room(wi.idx)) [[likely]] {
                ++counters_.arms;
                b.buckets.remove(n.idx, n);
                n.expires = expires;
                link_timer<true>(b, id, n, wi);
                return ArmOutcome::queued;
            }
        }
        return arm_general(id, expires, call);
    }

    std::uint8_t target_base(const Node& n) const noexcept {
        return (deferrable_base_ && n.deferrable) ? base_def : base_std;
    }
    std::size_t work_list(unsigned level) const noexcept {
        return modern::wheel_size(depth_) + level;
    }

    // Is n in its bucket (not collected into a work list)?
    static bool in_bucket(const Base& b, const Node& n) noexcept { return b.buckets.holds(n.idx, n); }
    // 6.1 forward_timer_base(): catch an idle base's clk up with jiffies, but
    // never past a bucket that is already due (then only up to next_expiry).
    [[gnu::always_inline]] void forward_timer_base(Base& b) noexcept {
        // Close enough, or clk is one ahead while timers run: nothing to do.
        if (jiffies_diff(jiffies_, b.clk) < 1) [[likely]] return;
        forward_idle_base(b);
    }
    // Out of line: the slow half stays off the inlined arm().
    void forward_idle_base(Base& b) noexcept;

    template <BaseIndex B>
    ArmOutcome arm_on(TimerId id, Node& n, Jiffies expires, ArmCall call) {
        Base& b = bases_[B];
        if (n.pending) {
            ++counters_.arms;
            modern::WheelIndex wi{};
            if (const auto shortcut = pending_shortcuts(b, n, expires, wi)) return *shortcut;
            // Same base, and detaching does not move clk: the index stands.
            // The timer stays pending throughout, so the base's count and the
            // peak do not move either. The target bucket makes room first:
            // if that runs out of memory the timer is still in its old bucket.
            b.buckets.make_room_for_one(pool_.nodes(), wi.idx);
            unlink_timer(b, n);
            n.expires = expires;
            link_timer<true>(b, id, n, wi);
            return ArmOutcome::queued;
        }
        if (!idle_may_queue(b, n, id, call)) return ArmOutcome::not_pending;
        n.expires = expires;
        link_timer(b, id, n, index_for(expires, b.clk));
        n.pending = true;
        ++b.queued;
        note_pending();
        return ArmOutcome::queued;
    }

    // pending() only grows when an idle timer is queued; the peak is stored
    // only when it moves.
    [[gnu::always_inline]] void note_pending() noexcept {
        const std::uint64_t now_pending = pending();
        if (now_pending > counters_.peak_pending) [[unlikely]] counters_.peak_pending = now_pending;
    }

    // calc_wheel_index() against this wheel's cutoff, kept rather than
    // derived from the depth on every arm.
    [[gnu::always_inline]] modern::WheelIndex index_for(Jiffies expires, Jiffies clk) const noexcept {
        const Jiffies delta = expires - clk;
        if (delta < cutoff_) [[likely]]
            return modern::place_at_level(expires, modern::level_of_delta(delta));
        return modern::calc_wheel_index(expires, clk, depth_); // past or clamped
    }

    // 6.1 enqueue_timer(): into the bucket (its newest entry, as the hlist's
    // head is), bit set, idx stored; next_expiry
    // only ever moves earlier here (by bucket expiry, not by timer->expires).
    // A bucket's pending_map bit is set exactly when the bucket holds timers
    // (enqueue sets it, the delete that empties a bucket and the collection
    // that moves it out clear it), so only a timer entering an empty bucket
    // needs to set it: the same bits, without a read-modify-write per arm.
    // Roomy: the caller checked has_room() or called make_room_for_one(), so
    // no compaction or growth (and nothing that can throw).
    template <bool Roomy = false>
    [[gnu::always_inline]] void link_timer(Base& b, TimerId id, Node& n, const modern::WheelIndex& wi) {
        const bool was_empty = Roomy ? b.buckets.push_into_room(wi.idx, id, n) : b.buckets.push(pool_.nodes(), wi.idx, id, n);
        if (was_empty)
            b.pending_map[wi.level] |= std::uint64_t{1} << (wi.idx & modern::kLevelMask);
        n.idx = static_cast<std::uint16_t>(wi.idx);
        ++counters_.enqueues;
        note_bucket_expiry(b, wi.bucket_expiry);
    }

    // 6.1 detach_if_pending()'s list part: emptying a bucket clears its bit
    // and flags next_expiry for lazy recomputation (it is left as is,
    // possibly too early). A timer already moved to a work list by the
    // softirq is not "in" its bucket.
    [[gnu::always_inline]] void unlink_timer(Base& b, const Node& n) noexcept {
        if (!b.buckets.holds(n.idx, n)) [[unlikely]] {
            b.buckets.remove(work_list(n.idx / modern::kLevelSize), n);
            return;
        }
        if (b.buckets.remove(n.idx, n)) [[unlikely]] {
            b.pending_map[n.idx / modern::kLevelSize] &= ~(std::uint64_t{1} << (n.idx & modern::kLevelMask));
            b.next_expiry_recalc = true;
        }
    }

    // 6.1 detach_if_pending() for a pending timer.
    [[gnu::always_inline]] void detach(Base& b, Node& n) noexcept {
        unlink_timer(b, n);
        n.pending = false;
        --b.queued;
    }
    void detach(Base& b, TimerId, Node& n) noexcept { detach(b, n); }

    unsigned collect_expired_timers(Base& b) noexcept;
    Jiffies next_timer_search(Base& b) noexcept; // __next_timer_interrupt()
    Jiffies bucket_expiry_of(const Base& b, const Node& n) const noexcept;
    // The search itself, without side effects: the earliest bucket expiry
    // of b's pending bitmaps (clk + NEXT_TIMER_MAX_DELTA if none) and how
    // many levels it looked at.
    struct NextSearch {
        Jiffies next;
        unsigned steps;
    };
    NextSearch search_next_expiry(const Base& b) const noexcept;

    template <class F>
    bool run_pass(F& on_fire, std::uint64_t& budget) {
        if (budget == 0) return true;
        const unsigned bases = deferrable_base_ ? 2 : 1;
        for (; pass_base_ < bases; ++pass_base_)
            if (run_base<true>(bases_[pass_base_], on_fire, budget)) return true;
        return false;
    }
    // Returns true when the budget ran out (Bounded only).
    template <bool Bounded, class F>
    bool run_base(Base& b, F& on_fire, std::uint64_t& budget);
    template <class F>
    void expire_timers(Base& b, unsigned level, F& on_fire);
    template <bool Bounded, class F>
    bool expire_carry(Base& b, F& on_fire, std::uint64_t& budget);

    unsigned depth_;
    Jiffies cutoff_; // WHEEL_TIMEOUT_CUTOFF for depth_
    bool deferrable_base_;
    Jiffies jiffies_;
    std::array<Base, 2> bases_;
    unsigned pass_base_ = base_std; // the base a budgeted pass is in
    TimerPool<Node> pool_;
    QueueCounters counters_;
};

// 6.1 __run_timers(): loop while a bucket is due; each pass jumps clk to
// next_expiry, collects, moves clk one ahead, recomputes next_expiry, then
// runs the collected buckets from the highest level down. Bounded, the
// collected levels become the carry-over and run through expire_carry(),
// which stops right after the budget's last expiry.
template <bool Bounded, class F>
bool ModernWheel::run_base(Base& b, F& on_fire, std::uint64_t& budget) {
    if (b.carry_levels != 0 && expire_carry<Bounded>(b, on_fire, budget)) return true;
    if (time_before(jiffies_, b.next_expiry)) return false;
    while (time_after_eq(jiffies_, b.clk) && time_after_eq(jiffies_, b.next_expiry)) {
        const unsigned levels = collect_expired_timers(b);
        if (levels == 0) ++counters_.empty_runs;
        ++b.clk;
        b.next_expiry = next_timer_search(b);
        if constexpr (Bounded) {
            b.carry_levels = levels;
            b.carry_level_started = false;
            if (expire_carry<true>(b, on_fire, budget)) return true;
        } else {
            for (unsigned level = depth_; level-- > 0;)
                if (levels & (1u << level)) expire_timers(b, level, on_fire);
        }
    }
    return false;
}

// 6.1 expire_timers(): take timers from the head; a callback may re-arm or
// delete any timer, including ones still waiting in this work list.
template <class F>
void ModernWheel::expire_timers(Base& b, unsigned level, F& on_fire) {
    const std::size_t list = work_list(level);
    const Jiffies base_clk = b.clk - 1; // trace "baseclk": the collected clock
    auto& nodes = pool_.nodes();
    for (TimerId id; (id = b.buckets.pop_live(nodes, list)) != kNoTimer;) {
        Node& n = nodes[id];
        n.pending = false;
        --b.queued;
        ++counters_.expired;
        const FiredTimer fired{id, n.expires, base_clk, b.buckets.fire_hint(list)};
        on_fire(fired);
    }
}

// expire_timers() over the carried-over levels, highest first, resumable:
// baseclk is read when a level starts, as expire_timers() does.
template <bool Bounded, class F>
bool ModernWheel::expire_carry(Base& b, F& on_fire, std::uint64_t& budget) {
    auto& nodes = pool_.nodes();
    return expire_carried_levels(b, [&](unsigned level, Jiffies base_clk) {
        const std::size_t list = work_list(level);
        for (TimerId id; (id = b.buckets.pop_live(nodes, list)) != kNoTimer;) {
            Node& n = nodes[id];
            n.pending = false;
            --b.queued;
            ++counters_.expired;
            const FiredTimer fired{id, n.expires, base_clk, b.buckets.fire_hint(list)};
            on_fire(fired);
            if constexpr (Bounded)
                if (--budget == 0) return true;
        }
        return false;
    });
}

} // namespace timersim
