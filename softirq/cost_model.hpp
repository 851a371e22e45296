// CostModel: how much simulated CPU time each piece of timer work takes.
//
// The queues count their work (QueueCounters); the engine turns those counts
// into simulated nanoseconds with this model, so a softirq that expires a
// burst of timers or walks a cascade takes simulated time and delays the
// timers behind it. Every field is nanoseconds per event.
//
// The defaults are measurements of our own queues (bench/bench_costs.cpp,
// `scripts/bench costs`; raw figures in docs/performance.md, "Cost model"):
// the median of 5 runs on the 2-vCPU AMD EPYC (Zen 5, family 26 model 2)
// Firecracker VM of docs/performance.md, g++ 12.2 -O3, while other builds
// loaded the machine (load average 4.7-5.3).
// Where the kernel would touch cold memory (an expiring or cascaded
// timer_list, a list neighbour) so do the benchmarks: 1M pending timers,
// armed in random order, whose 32 MB node pool is far larger than the
// cache; the figures at 100K (3.2 MB, partly cached) are 2-9x lower. Where
// modern and classic differ, the default is between them, rounded.
//
// They measure our C++ model, not the kernel: our nodes are entries in one
// pool (32-byte list nodes when the defaults were measured; 16-byte nodes
// with bucket arrays now), the kernel's are timer_lists inside sockets and other
// objects, behind locks, tracepoints and irq disabling. The fixed-cost
// fields (bucket scan, next-expiry step, softirq entry) are a few ns here
// and 10-100x more in a kernel; each field says what a kernel-side figure
// would be (an estimate: no kernel was measured). Every field can be
// overridden (timersim run --cost-<field>-ns).
#pragma once

#include <cstdint>

namespace timersim {

struct CostModel {
    // Putting a timer into a bucket (enqueue_timer()/internal_add_timer():
    // index computation, hlist_add_head, a bitmap bit). Measured
    // (cost_enqueue/*/pending:1000000/isolated:1): modern 95 ns, classic
    // 114 ns per arm of an idle timer whose node the caller just touched;
    // the pushed-out head of the bucket list is the cold line. Batched arms,
    // whose misses overlap, cost 59 and 46 ns. Kernel side: one cache miss
    // on the old list head plus ~100 instructions, the same order.
    std::uint64_t enqueue_ns = 100;
    // Taking a pending timer out of its bucket (detach_timer(), and the
    // dequeue half of a mod_timer() that moves a pending timer). Measured
    // (cost_dequeue/*/pending:1000000/isolated:1): modern 118 ns, classic
    // 147 ns: both list neighbours are cold lines. Kernel side: the same two
    // misses (__hlist_del writes next->pprev and *pprev).
    std::uint64_t dequeue_ns = 130;
    // One timer moved down a level by a classic cascade (cascade() detaches
    // it and calls __internal_add_timer() again). Measured
    // (cost_cascade_move/classic/pending:1000000): 187 ns, one dependent
    // cache miss per timer walking a slot's list in random memory order
    // (a random load at 64 MiB took 239-315 ns on that machine).
    std::uint64_t cascade_move_ns = 190;
    // One bucket looked at while expiring (classic: one __run_timers() step
    // per jiffy, and each slot cascade; modern: one bucket per level
    // collected). Measured (cost_bucket_scan/classic): 1.6 ns per step of a
    // NOHZ catch-up walk over empty slots, the bucket heads cached. Modern
    // (cost_bucket_scan/modern): 12.6 ns per bucket of an empty collect, but
    // that includes the 7 next-expiry search steps that follow each bucket
    // (2 ns each, below), so the scan itself is ~0-2 ns. Kernel side: more,
    // with the base lock held, irqs off and the slot heads of a cold wheel.
    // This field's earlier estimate, 300 ns per step, read commit
    // 236968383cf5 ("timers: Optimize collect_expired_timers() for NOHZ") as
    // ~1 ms to catch up 3 s of jiffies one step at a time (not re-checked
    // here): 150x this default. Raise it (--cost-bucket-scan-ns) to study the
    // kernel's catch-up cost rather than our model's.
    std::uint64_t bucket_scan_ns = 2;
    // Detaching one expired timer and preparing its call (expire_timers():
    // detach_timer(), timer->function read). Measured
    // (cost_expiry/*/pending:1000000): modern 186 ns, classic 191 ns per
    // timer of one bucket walked in random memory order: one dependent miss
    // each, like the cascade. Kernel side: the same miss on the timer_list,
    // plus the base lock dropped and taken again around each call.
    std::uint64_t expiry_ns = 190;
    // The callback body itself. Not a queue operation, so not measured:
    // it belongs to the workload (the engine's own cost, bookkeeping per
    // callback included, is 7-11 ns per timer operation at 10K pending:
    // bench_engine, engine_mixed minus queue_mixed). 200 ns is a
    // short callback that takes one lock and touches a socket line or two
    // (tcp_delack_timer() when the socket is not owned by a user). Real
    // callbacks range from tens of ns to many us.
    std::uint64_t callback_ns = 200;
    // One step of a next-expiry search (modern: one bitmap word in
    // next_pending_bucket(); classic: one slot or list entry in
    // __next_timer_interrupt()). Measured (cost_next_expiry_step/*): modern
    // 1.5-1.9 ns, classic 1.7-2.0 ns per step, all on cached lines (the
    // classic search here walked 3 steps, its list entries warm).
    std::uint64_t next_expiry_step_ns = 2;
    // Fixed cost of one TIMER_SOFTIRQ handler invocation. Measured
    // (cost_softirq_entry): 5.9 ns for our softirq state machine's pass
    // (raise, irq_exit, begin, start_pass, an empty run_softirq(), end_pass).
    // Kernel side: 6.1 handle_softirqs() (pending mask swap, irq
    // enable/disable, trace_softirq_entry/exit) plus run_timer_softirq()'s
    // base lock and clk bookkeeping is a few hundred cycles, ~50x this.
    std::uint64_t softirq_entry_ns = 6;

    // Everything free: the engine then adds no delay of its own, and timers
    // fire exactly at their tick (what the queues alone predict).
    static constexpr CostModel zero() noexcept {
        return CostModel{.enqueue_ns = 0, .dequeue_ns = 0, .cascade_move_ns = 0, .bucket_scan_ns = 0,
                         .expiry_ns = 0, .callback_ns = 0, .next_expiry_step_ns = 0, .softirq_entry_ns = 0};
    }

    friend bool operator==(const CostModel&, const CostModel&) = default;
};

} // namespace timersim
