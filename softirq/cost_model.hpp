// CostModel: how much simulated CPU time each piece of timer work takes.
//
// The queues count their work (QueueCounters); the engine turns those counts
// into simulated nanoseconds with this model, so a softirq that expires a
// burst of timers or walks a cascade takes simulated time and delays the
// timers behind it. Every field is nanoseconds per event.
//
// The defaults are order-of-magnitude estimates for one modern x86 core, not
// measurements of a particular machine; each says where its number comes
// from. Measured figures of our own queues will come from the benchmarks
// (bench/bench_queues.cpp, results meant for docs/performance.md, not yet
// written); they measure our C++ model, which is not the kernel either, so
// every field can be overridden (timersim run --cost-<field>-ns).
#pragma once

#include <cstdint>

namespace timersim {

struct CostModel {
    // Putting a timer into a bucket (enqueue_timer()/internal_add_timer():
    // index computation, hlist_add_head, a bitmap bit). A few instructions
    // on lines that are usually cached, plus one likely miss on the
    // timer_list itself: ~50 ns (an estimate; bench arm_cancel will give our
    // model's own figure per arm+cancel pair).
    std::uint64_t enqueue_ns = 50;
    // Taking a pending timer out of its bucket (detach_timer(), and the
    // dequeue half of a mod_timer() that moves a pending timer). Same
    // cache behaviour as the enqueue without the index computation: ~40 ns.
    std::uint64_t dequeue_ns = 40;
    // One timer moved down a level by a classic cascade (cascade() detaches
    // it and calls __internal_add_timer() again): a dequeue plus an enqueue.
    std::uint64_t cascade_move_ns = 90;
    // One bucket looked at while expiring (classic: one __run_timers() step
    // per jiffy; modern: one bucket per level collected). Commit 236968383cf5
    // (A.-M. Gleixner, 2016) reports ~1 ms to catch up 3 s of missed jiffies
    // one step at a time; at HZ=1000 that is ~330 ns per step including the
    // odd cascade (the HZ is not stated; at HZ=250 it would be ~1.3 us), so
    // 300 ns for a bare step, cache-cold bucket head included.
    std::uint64_t bucket_scan_ns = 300;
    // Detaching one expired timer and preparing its call (expire_timers():
    // detach_timer(), timer->function read, the base lock dropped and taken
    // again around the call): one cache miss on the timer, ~50 ns.
    std::uint64_t expiry_ns = 50;
    // The callback body itself. Workload-specific; 200 ns is a short callback
    // that takes one lock and touches a socket line or two (tcp_delack_timer()
    // when the socket is not owned by a user). Real callbacks range from tens
    // of ns to many us.
    std::uint64_t callback_ns = 200;
    // One step of a next-expiry search (modern: one bitmap word in
    // next_pending_bucket(); classic: one slot in __next_timer_interrupt()):
    // a cached load and a bit scan, ~5 ns.
    std::uint64_t next_expiry_step_ns = 5;
    // Fixed cost of one TIMER_SOFTIRQ handler invocation (6.1 handle_softirqs()
    // pass: pending mask swap, irq enable/disable, trace_softirq_entry/exit,
    // base lock, forward/clk bookkeeping of run_timer_softirq()). An estimate:
    // a few hundred cycles, ~300 ns.
    std::uint64_t softirq_entry_ns = 300;

    // Everything free: the engine then adds no delay of its own, and timers
    // fire exactly at their tick (what the queues alone predict).
    static constexpr CostModel zero() noexcept {
        return CostModel{.enqueue_ns = 0, .dequeue_ns = 0, .cascade_move_ns = 0, .bucket_scan_ns = 0,
                         .expiry_ns = 0, .callback_ns = 0, .next_expiry_step_ns = 0, .softirq_entry_ns = 0};
    }

    friend bool operator==(const CostModel&, const CostModel&) = default;
};

} // namespace timersim
