// What every output format of a comparison says about one design, computed
// once from its RunResult so the text, the JSON, the CSV and the verdict
// cannot disagree (their rendering: comparison_report.cpp). Also the log2
// groups of lateness the text's error histogram counts fires in.
#pragma once

#include "sim/machine/comparison.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace timersim::comparison_summary {

struct Summary {
    const RunResult* run = nullptr;
    const CpuMetrics* m = nullptr;
    Design design = Design::modern;
    std::string name; // design_name(): a wheel's spec, else the design's name
    unsigned hz = 0; // the run's clock, RunResult::config.hz
    std::uint64_t cpu_ticks = 0;          // jiffies elapsed on each CPU, summed over CPUs
    std::uint64_t softirq_runs = 0;       // handle_softirqs() runs that ran TIMER_SOFTIRQ
    double softirq_mean_per_tick_ns = 0;  // softirq time / cpu_ticks
    std::int64_t softirq_p99_per_tick_ns = 0;
    std::uint64_t max_stall_ns = 0;       // the longest softirq run
    std::uint64_t cascade_ns = 0;         // cascade moves at the cost model's price
    std::uint64_t peak_pending = 0;       // summed over the CPUs' own peaks
    std::uint64_t peak_bytes = 0;         // bytes per timer x peak pending
    double cpu_share = 0;                 // timer work / the CPU time it took, in % (cpu_share_of)
    bool work_beyond_span = false;        // some CPU's timer work did not fit in the run's span

    std::int64_t error(double p) const { return m->error_jiffies.percentile(p); }
    bool fired() const { return m->fired > 0; } // without fires, error statistics are n/a
};

Summary summarize(const RunResult& r);
// One per design, in the comparison's order.
std::vector<Summary> summarize(const Comparison& c);
// The summary of design `d`, or nullptr when it was not compared.
const Summary* find(const std::vector<Summary>& s, Design d);

// Log2 groups of lateness: early, 0, 1, 2-3, 4-7, ...
struct Group {
    std::int64_t lo = 0; // jiffies; INT64_MIN: "early"
    std::int64_t hi = 0;
};

// Every group up to the one of `max_error` jiffies (at least up to 1 j).
std::vector<Group> error_groups(std::int64_t max_error);
// The index in error_groups() of a fire `value` jiffies late.
std::size_t group_of(std::int64_t value);

// Whether the classic wheel has CONFIG_BASE_SMALL's geometry.
bool is_base_small(const classic::Geometry& g);

} // namespace timersim::comparison_summary
