// The timer queue concept: what every queue of wheel/ offers, so the
// engine, the reports and the tests drive all of them through one
// vocabulary. The designs at a glance (n timers pending; costs in Varghese &
// Lauck's terms: START arm, STOP cancel, PER_TICK the tick's own work,
// EXPIRY detaching one due timer; bytes: bytes_per_timer(), the queue's own
// memory per timer, 8-byte ids):
//
//   design            START       STOP      PER_TICK              EXPIRY  bytes  fires
//   classic  (<=4.7)  O(1)        O(1)      O(1), cascade: each   O(1)    24     on its jiffy (after
//                                           timer moves <= 4x                    mod_timer slack)
//   modern   (4.8+)   O(1)        O(1)      O(1) a level's bucket O(1)    24     late, by up to its
//                                           when clk reaches it                  level's granularity
//   heap (scheme 3)   O(log n)    O(log n)  O(1) peek             O(log n) 36    on its jiffy
//   scheme1           O(1)        O(1)      O(n) decrement all    O(1)    32     on its jiffy
//   scheme2           O(n)        O(1)      O(1) head             O(1)    32     on its jiffy
//   scheme4           O(1)        O(1)      O(1), O(overflow)     O(1)    32     on its jiffy
//                                           per revolution
//   scheme5           O(n/256)    O(1)      O(1) slot head        O(1)    32     on its jiffy
//   scheme6           O(1)        O(1)      O(n/256) rounds       O(1)    32     on its jiffy
//   netty             O(1) queued O(1) lazy O(slot), transfer     O(1)    64 +   on its jiffy unless
//                                           <= 100000 per tick            garbage  the transfer lags
//   cog               O(1)        O(1)      O(1), cascade: each   O(1)    28 +   on its jiffy
//                                 tombstone timer moves <= 7x             garbage
//   wheel:SPEC        as classic (mode=cascade) or modern (mode=in-place) at its geometry; 32 bytes;
//                     in place with round=down it fires EARLY
//
// kernel/ holds the Linux wheels, seeds/ the designs of the articles the
// project grew from, configurable/ wheel:SPEC, core/ the heap and what every
// queue is built from. The registry that names them for the command line is
// sim/machine/design_list.hpp. The queue's interface:
//
//   create(flags) -> TimerId          a timer_list, initialised (timer_setup)
//   arm(id, expires, call)            mod_timer / mod_timer_pending / pinned
//   cancel(id)                        del_timer
//   set_jiffies(j)                    the tick: jiffies moves forward
//   softirq_due()                     would run_local_timers() raise TIMER_SOFTIRQ?
//   carry_over()                      a budgeted pass left collected timers behind
//   run_softirq(on_fire)              run_timer_softirq(): expire what is due
//   run_softirq(on_fire, budget)      the same pass, stopping right after the
//                                     budget-th expiry (see "Budgets" below)
//   resume_softirq(on_fire, budget)   go on with a pass stopped by its budget
//   hold_carry_over()                 that pass will not be resumed: its
//                                     carry-over waits for a later pass
//   arm_detach(id, expires&, call)    first half of an arm that moves the
//                                     timer to another CPU's queue
//   next_timer_interrupt()            get_next_timer_interrupt() on NOHZ idle entry
//   placement(id), counters(), pending()
//
// Callbacks passed to run_softirq may arm and cancel any timer of the same
// queue, including timers that are due in the same run: exactly what a
// kernel callback may do.
//
// Budgets. run_softirq(on_fire) is the kernel's pass and has no bound. With a
// budget the pass stops right after its budget-th expiry (after on_fire
// returned, before looking at anything else) and returns true; it returns
// false when it ended because nothing was due any more. What was already
// collected from a bucket and not yet run is the carry-over: it stays
// pending (cancel and re-arm work on it as on any pending timer), the next
// pass runs it first, carry_over() is true while there is any (the caller's
// tick raises TIMER_SOFTIRQ for it; softirq_due() keeps the kernel's
// meaning), and next_timer_interrupt() reports it as due now. The heap
// collects nothing ahead: its carry-over is the due timers still queued,
// which softirq_due() already reports. resume_softirq() continues a
// stopped pass exactly where it stopped (it is not a new run_timer_softirq()
// call and does not count one), so a pass run in budgets of 1 performs the
// same steps in the same order as the unbounded pass: the engine runs every
// pass that way, one expiry at a time, so that other CPUs' events interleave.
// The unbounded path is the kernel's code as it was; it only checks for a
// carry-over on entry.
//
// hold_carry_over(): the caller ends the stopped pass for good (the engine's
// --max-expiries-per-softirq bound ends a handle_softirqs() run), so its
// carry-over waits for the next run. The kernel has no such state: collected
// timers never outlive the run that collected them. While held, a re-arm of
// a carried-over timer is a normal enqueue (6.1's same-bucket shortcut would
// leave it collected at a clock that has passed, to fire before its new
// expiry); the next pass releases the hold and runs what is left.
//
// arm_detach(id, expires, call): a mod_timer() family call made on another
// CPU, which moves the timer there (6.1 __mod_timer() -> get_target_base(),
// 4.x the same with TIMER_PINNED or migration off). It applies this queue's
// part: classic slack (expires is updated to the value to enqueue) and the
// shortcuts against the timer's own base. If a shortcut applies, or the call
// is mod_timer_pending() on an idle timer, the timer stays and the outcome
// says so (counted as an arm here). Otherwise it returns queued, the timer is
// no longer pending here (detached if it was, not counted as a cancel), and
// the caller enqueues it on the other queue with arm(id', expires,
// mod_timer_pinned), which counts the arm there.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace timersim {

using TimerId = std::uint32_t;
inline constexpr TimerId kNoTimer = 0xFFFFFFFFu;

// Properties fixed at timer_setup() time (include/linux/timer.h flags).
struct TimerFlags {
    bool deferrable = false; // TIMER_DEFERRABLE: does not wake an idle CPU
};

// Which kernel entry point arms the timer. They differ in slack (classic
// wheel), shortcuts and whether an idle timer may be armed.
enum class ArmCall : std::uint8_t {
    mod_timer,         // mod_timer()/add_timer(): classic applies slack
    mod_timer_pending, // mod_timer_pending(): only re-arms a pending timer, no slack
    mod_timer_pinned,  // mod_timer_pinned() (<= 4.7) / TIMER_PINNED users: no slack
};

enum class ArmOutcome : std::uint8_t {
    queued,       // dequeued if pending, then enqueued (timer_start traced)
    same_expiry,  // pending with the same expires: nothing happens
    same_bucket,  // modern: new expiry maps to the same bucket, only ->expires changes
    not_pending,  // mod_timer_pending() on an idle timer: nothing happens
};

// Where a pending timer sits. `level` and `slot` use each design's own
// numbering: modern level 0..depth-1 and slot = the kernel's idx
// (0 .. 64*depth-1, what the timer_start tracepoint prints); classic tv level
// 1..5 and the slot inside that tv array; heap level 0, slot = heap position.
struct Placement {
    bool pending = false;
    bool deferrable_base = false; // modern: queued on the deferrable base
    unsigned level = 0;
    unsigned slot = 0;
    Jiffies expires = 0;       // timer->expires as requested (after slack)
    Jiffies bucket_expiry = 0; // the jiffy the queue will run it at, if nothing changes
};

// What fired, handed to the run_softirq callback.
struct FiredTimer {
    TimerId id;
    Jiffies expires;  // timer->expires at the time it ran
    // The trace's "baseclk": classic, the loop step that ran it; modern, clk-1
    // read once per collected level (6.1 expire_timers()), which is the
    // bucket's clock unless a callback of a higher level forwarded clk in a
    // late softirq; heap, expires.
    Jiffies base_clk;
    // A hint, kNoTimer when the queue gives none: a timer this pass will
    // probably fire a few expiries later (both kernel wheels: their work
    // list a few entries on, maybe cancelled by then; the heap gives none).
    // A simulator can fetch what that fire will touch, so that the misses
    // of coming fires overlap.
    TimerId ahead = kNoTimer;
};

inline constexpr std::size_t kMaxLevels = 9;

// Varghese & Lauck (1987) measure a timer scheme by four routines, in the
// paper's own unit: list elements (or slots) visited. The seeds' schemes,
// netty and cog count them; the kernel wheels and the heap leave them 0.
//   start     START_TIMER: 1 per insertion, plus every element a sorted
//             insertion walks past
//   stop      STOP_TIMER: 1 per removal (netty: the deferred removal too)
//   per_tick  PER_TICK_BOOKKEEPING: elements and slots looked at by the tick
//             (scheme 1: every timer; scheme 6, netty: every entry of the
//             bucket, rounds decremented; scheme 4: the overflow list once
//             per revolution; cog: the slot, and cascaded entries)
//   expiry    EXPIRY_PROCESSING: 1 per timer expired
struct PaperCosts {
    std::uint64_t start = 0;
    std::uint64_t stop = 0;
    std::uint64_t per_tick = 0;
    std::uint64_t expiry = 0;
    std::uint64_t total() const noexcept { return start + stop + per_tick + expiry; }
    void merge(const PaperCosts& o) noexcept {
        start += o.start;
        stop += o.stop;
        per_tick += o.per_tick;
        expiry += o.expiry;
    }
    friend bool operator==(const PaperCosts&, const PaperCosts&) = default;
};

// Counters every queue keeps; a field that does not apply to a design stays 0.
struct QueueCounters {
    std::uint64_t arms = 0;                 // arm() calls
    std::uint64_t enqueues = 0;             // timers put into a bucket/heap by arm()
    std::uint64_t same_expiry_shortcuts = 0;
    std::uint64_t same_bucket_shortcuts = 0;
    std::uint64_t cancels = 0;              // cancel() calls that removed a pending timer
    std::uint64_t expired = 0;              // timers run by run_softirq()
    std::uint64_t cascade_moves = 0;        // classic: timers re-placed by cascades
    std::array<std::uint64_t, kMaxLevels> cascade_moves_from_level{}; // index = tv level
    std::uint64_t cascades = 0;             // classic: slot cascades performed
    std::uint64_t buckets_scanned = 0;      // buckets looked at while expiring
    std::uint64_t jiffies_walked = 0;       // classic: __run_timers loop steps
    std::uint64_t softirq_runs = 0;         // passes: run_softirq() calls (resume_softirq() goes on with one)
    std::uint64_t empty_runs = 0;           // modern: collect found nothing (stale next_expiry)
    std::uint64_t next_expiry_searches = 0; // bitmap / wheel scans for the next event
    std::uint64_t next_expiry_search_steps = 0; // slots or words visited by those scans
    std::uint64_t peak_pending = 0;
    // List elements walked that none of the above counts: scheme 1's
    // per-tick decrement, sorted insertion (schemes 2, 5), rounds checks
    // (scheme 6, netty), the overflow walk (scheme 4), tombstones skipped
    // (cog). The engine charges them as next-expiry steps (one step over a
    // list entry).
    std::uint64_t list_steps = 0;
    PaperCosts paper{};
    // Entries of cancelled timers the queue still holds: netty's cancelled
    // timeouts waiting for the next tick, cog's tombstones. `garbage` is the
    // count now, peak_garbage the largest it has been.
    std::uint64_t garbage = 0;
    std::uint64_t peak_garbage = 0;

    // Counters of several queues together: sums add, peak_pending takes the
    // largest (the machine-wide peak is not known from per-queue peaks).
    void merge(const QueueCounters& o) noexcept {
        arms += o.arms;
        enqueues += o.enqueues;
        same_expiry_shortcuts += o.same_expiry_shortcuts;
        same_bucket_shortcuts += o.same_bucket_shortcuts;
        cancels += o.cancels;
        expired += o.expired;
        cascade_moves += o.cascade_moves;
        for (std::size_t i = 0; i < kMaxLevels; ++i) cascade_moves_from_level[i] += o.cascade_moves_from_level[i];
        cascades += o.cascades;
        buckets_scanned += o.buckets_scanned;
        jiffies_walked += o.jiffies_walked;
        softirq_runs += o.softirq_runs;
        empty_runs += o.empty_runs;
        next_expiry_searches += o.next_expiry_searches;
        next_expiry_search_steps += o.next_expiry_search_steps;
        peak_pending = peak_pending > o.peak_pending ? peak_pending : o.peak_pending;
        list_steps += o.list_steps;
        paper.merge(o.paper);
        garbage += o.garbage;
        peak_garbage = peak_garbage > o.peak_garbage ? peak_garbage : o.peak_garbage;
    }
    friend bool operator==(const QueueCounters&, const QueueCounters&) = default;
};

template <class Q>
concept TimerQueue = requires(Q q, const Q cq, TimerId id, Jiffies j, Jiffies& jr, TimerFlags f, ArmCall call,
                              std::uint64_t budget, void (*on_fire)(const FiredTimer&)) {
    { Q::name } -> std::convertible_to<std::string_view>;
    { q.create(f) } -> std::same_as<TimerId>;
    q.destroy(id);
    { q.arm(id, j, call) } -> std::same_as<ArmOutcome>;
    { q.cancel(id) } -> std::same_as<bool>;
    { cq.jiffies() } -> std::same_as<Jiffies>;
    q.set_jiffies(j);
    { cq.softirq_due() } -> std::same_as<bool>;
    { cq.carry_over() } -> std::same_as<bool>;
    q.run_softirq(on_fire);
    { q.run_softirq(on_fire, budget) } -> std::same_as<bool>;
    { q.resume_softirq(on_fire, budget) } -> std::same_as<bool>;
    q.hold_carry_over();
    { q.arm_detach(id, jr, call) } -> std::same_as<ArmOutcome>;
    { q.next_timer_interrupt() } -> std::same_as<std::optional<Jiffies>>;
    { cq.pending() } -> std::same_as<std::size_t>;
    { cq.is_pending(id) } -> std::same_as<bool>;
    { cq.placement(id) } -> std::same_as<Placement>;
    { cq.counters() } -> std::same_as<const QueueCounters&>;
    { cq.bytes_per_timer() } -> std::convertible_to<std::size_t>;
};

// A ticking CPU: one tick per jiffy up to `target`, the softirq running
// whenever the tick raised it (run_local_timers then irq_exit).
template <class Q, class F>
void tick_to(Q& q, Jiffies target, F&& on_fire) {
    while (time_before(q.jiffies(), target)) {
        q.set_jiffies(q.jiffies() + 1);
        if (q.softirq_due()) q.run_softirq(on_fire);
    }
}

// An idle CPU waking up: jiffies jumps to `target` in one step (the tick was
// stopped), then one softirq runs. The classic wheel walks every missed jiffy
// inside that softirq; the modern wheel jumps between due buckets.
template <class Q, class F>
void wake_at(Q& q, Jiffies target, F&& on_fire) {
    if (time_after(target, q.jiffies())) q.set_jiffies(target);
    if (q.softirq_due()) q.run_softirq(on_fire);
}

} // namespace timersim
