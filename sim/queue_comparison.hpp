// Queue comparison: one workload, several timer queues, one ticking CPU each.
//
// `timersim compare` no longer uses this: it runs the simulated machine
// (sim/comparison.hpp). This bare loop stays as a reference driver for
// tests/test_explain.cpp, which replays its event log; retire it once that
// test reads the engine's log instead.
//
// The CPU ticks every jiffy (no NOHZ) and runs TIMER_SOFTIRQ whenever the
// queue's tick raises it; workload operations of jiffy j happen after j's
// tick. Precision error is the jiffy a timer's softirq ran at minus the
// expiry the workload *asked for* (before any classic slack), so the heap
// shows 0 and the wheels show their rounding. This is the queue-level
// comparison; the full machine (softirq cost, ksoftirqd, NOHZ, several CPUs)
// builds on the same queues.
#pragma once

#include "sim/design.hpp"
#include "sim/error_histogram.hpp"
#include "sim/event_log.hpp"
#include "wheel/classic_levels.hpp"
#include "wheel/timer_queue.hpp"
#include "workloads/connection_churn.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace timersim {


struct ComparisonConfig {
    ConnectionChurnConfig workload;
    double duration_s = 120;
    std::vector<Design> designs = all_designs();
    std::optional<std::int64_t> classic_slack = -1; // nullopt: off; -1: kernel default; N: fixed
    classic::Geometry classic_geometry = classic::Geometry::normal();
};

struct DesignResult {
    Design design;
    QueueCounters counters;
    ErrorHistogram error_jiffies;    // fired jiffy - requested expiry
    std::uint64_t arms = 0;          // workload arm requests
    std::uint64_t pending_at_end = 0;
    std::uint64_t max_expired_per_tick = 0;
    std::uint64_t max_cascade_moves_per_tick = 0;
    std::uint64_t ticks_with_softirq = 0;
    std::size_t bytes_per_timer = 0;
};

struct ComparisonResult {
    ComparisonConfig config;
    Jiffies start_jiffies = 0;
    Jiffies ticks = 0;
    std::vector<DesignResult> designs;
};

// Progress callback: fraction of the whole comparison done, in [0, 1].
using ProgressFn = std::function<void(double)>;

// With `events`, every enqueue, fire and cancel is logged (designs one after
// the other, each in simulated-time order).
ComparisonResult run_comparison(const ComparisonConfig& config, const ProgressFn& progress = {},
                                EventLog* events = nullptr);

} // namespace timersim
