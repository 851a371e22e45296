// What the engine measures: per-CPU metrics (CpuMetrics) and the softirq
// cost per window of ticks (SeriesPoint). Plain data, so that reports
// (sim/report/) and comparisons read results without the engine template.
#pragma once

#include "sim/machine/error_histogram.hpp"
#include "sim/machine/log_histogram.hpp"
#include "softirq/softirq.hpp"
#include "wheel/core/timer_queue.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace timersim {

// Per-CPU results. Work is counted on the CPU that does it: arms, cancels
// and re-arm dequeues on the CPU whose action or callback asked for them,
// firings and softirq work on the CPU whose base ran them; `counters` and
// `pending` are the CPU's own queue's.
struct CpuMetrics {
    ErrorHistogram error_jiffies;   // fired jiffy - requested expiry (exact)
    Log2Histogram error_ns;         // fire time - nominal time of the requested expiry tick
    std::uint64_t early = 0;        // fired before the requested jiffy
    ErrorHistogram error_us;        // error_ns in whole us, rounded down (only with EngineConfig::error_us_histogram)
    Log2Histogram softirq_ns;       // duration of each handle_softirqs() run that ran TIMER_SOFTIRQ
    std::uint64_t max_softirq_ns = 0;
    std::uint64_t max_expired_per_softirq = 0;
    std::uint64_t max_cascade_moves_per_softirq = 0;
    std::uint64_t softirq_work_ns = 0; // simulated time spent in timer softirq passes
    std::uint64_t task_work_ns = 0;    // arm/cancel work outside the softirq (accounted, not scheduled)
    std::uint64_t timer_work_ns() const noexcept { return softirq_work_ns + task_work_ns; }
    std::uint64_t arms = 0;           // arm requests (arm() and arm_on())
    std::uint64_t rearm_dequeues = 0; // arms that dequeued a pending timer and enqueued it again (here or on another CPU)
    std::uint64_t fired = 0;
    std::uint64_t cancelled = 0;      // cancels that removed a pending timer
    std::uint64_t pending = 0;        // pending when the metrics were taken
    std::uint64_t ticks = 0;
    std::uint64_t ticks_raised = 0;   // ticks that raised TIMER_SOFTIRQ
    std::uint64_t ticks_not_raised = 0;
    std::uint64_t ticks_in_softirq = 0; // ticks that arrived while a softirq ran
    std::uint64_t actions_delayed = 0;  // actions that waited for a softirq to end
    // NOHZ idle (all 0 with the tick always running)
    std::uint64_t tick_stops = 0;             // idle entries that stopped the tick
    std::uint64_t wakeups_by_timer = 0;       // stopped tick woken by its programmed timer event
    std::uint64_t wakeups_by_action = 0;      // stopped tick woken by a workload action
    std::uint64_t wakeups_by_remote = 0;      // stopped tick kicked by a timer queued from another CPU
    std::uint64_t ticks_skipped = 0;          // jiffies that passed without a tick (of this CPU)
    std::uint64_t max_jiffies_jump = 0;       // most jiffies passed in one step (moved by this CPU)
    // 6.9+ remote expiry (modern-6.9; 0 for every other design): timers of
    // idle CPUs' global bases this CPU expired as their migrator
    // (tmigr_handle_remote() -> timer_expire_remote()), and timers of this
    // CPU's global base another CPU expired so. Summed over the CPUs the two
    // are equal; the fire itself counts in `fired` of the CPU that ran it.
    std::uint64_t remote_expiries = 0;   // as the migrator, on behalf of others
    std::uint64_t expired_by_remote = 0; // this CPU's timers, expired by another
    SoftirqCpu::Stats softirq;
    QueueCounters counters;

    // Adds another CPU's metrics: histograms add, maxima take the largest,
    // everything else sums (counters.peak_pending: the largest per-CPU peak).
    void merge(const CpuMetrics& other);
    bool operator==(const CpuMetrics& o) const;
};

// Timer work in one window of ticks, for "softirq cost over time" plots. A
// softirq run counts in the window of the tick (grid index n, at or before
// the run's start) that started it: window w holds ticks w*W+1 .. (w+1)*W.
struct SeriesPoint {
    std::uint64_t start_ns = 0;       // nominal time of the window's first tick
    std::uint64_t softirq_ns = 0;     // time in timer softirq passes, all CPUs
    std::uint64_t max_softirq_ns = 0; // the longest softirq run in the window
    std::uint64_t cascade_moves = 0;
    std::uint64_t expired = 0;
    // Durations of the softirq runs started in the window (all CPUs), by
    // Log2Histogram bucket: (bucket, runs), ascending, only buckets with runs
    // (a window holds a few distinct buckets, so this stays small where a
    // full histogram per window would not).
    std::vector<std::pair<std::uint16_t, std::uint64_t>> run_buckets;

    void add_run(std::uint64_t duration_ns);
    std::uint64_t runs() const noexcept;
    // Nearest-rank percentile of the run durations, p in (0, 100]: the upper
    // bound of the bucket holding that rank (within 12.5 %), at most
    // max_softirq_ns; 0 without runs.
    std::uint64_t run_percentile(double p) const noexcept;
    friend bool operator==(const SeriesPoint&, const SeriesPoint&) = default;
};

} // namespace timersim
