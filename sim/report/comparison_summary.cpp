#include "sim/report/comparison_summary.hpp"

#include <algorithm>
#include <cmath>

namespace timersim::comparison_summary {

namespace {

// p99 of the softirq cost over every tick, ticks that ran no timer softirq
// counting as 0 ns: the run-duration histogram plus that many zeros.
std::int64_t per_tick_percentile(const Log2Histogram& runs, std::uint64_t ticks, double p) {
    const std::uint64_t n = std::max(ticks, runs.count());
    if (n == 0) return 0;
    const std::uint64_t zeros = n - runs.count();
    const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n))));
    if (rank <= zeros) return 0;
    // The rank within the runs, as a percentile that maps back to exactly it
    // (nearest rank rounds up, so aim half a rank below).
    const double within = (static_cast<double>(rank - zeros) - 0.5) / static_cast<double>(runs.count()) * 100.0;
    return runs.percentile(within);
}

} // namespace

Summary summarize(const RunResult& r) {
    Summary s;
    s.run = &r;
    s.m = &r.total;
    s.design = r.design;
    s.name = design_name(r);
    s.hz = r.config.hz;
    const CpuMetrics& m = r.total;
    s.cpu_ticks = r.config.ticks * std::max(1u, r.config.cpus);
    s.softirq_runs = m.softirq_ns.count();
    s.softirq_mean_per_tick_ns =
        s.cpu_ticks ? static_cast<double>(m.softirq_work_ns) / static_cast<double>(s.cpu_ticks) : 0;
    s.softirq_p99_per_tick_ns = per_tick_percentile(m.softirq_ns, s.cpu_ticks, 99);
    s.max_stall_ns = m.max_softirq_ns;
    s.cascade_ns = m.counters.cascade_moves * r.config.costs.cascade_move_ns;
    // Each CPU's queue peaks at its own time; their sum bounds the machine's
    // peak from above (and is it, with one CPU).
    for (const CpuMetrics& c : r.per_cpu) s.peak_pending += c.counters.peak_pending;
    if (r.per_cpu.empty()) s.peak_pending = m.counters.peak_pending;
    s.peak_bytes = static_cast<std::uint64_t>(r.bytes_per_timer) * s.peak_pending;
    // The share of the CPU. The softirq's work is on the simulated time
    // line, but arm/cancel work outside it (task_work_ns) is accounted, not
    // scheduled: it takes no simulated time. So a CPU's timer work can exceed
    // the run's span (10M timers armed at once: seconds of work at one
    // instant), and work / span gave "100.117 %". Each CPU instead counts
    // the time its timer work needed: the span, or the work where that is
    // longer (the CPU was busy with timers all along). The share is the work
    // over those times: the old ratio whenever the work fits, 100 % at most.
    std::uint64_t needed_ns = 0;
    std::uint64_t work_ns = 0;
    const auto add_cpu = [&](const CpuMetrics& c) {
        const std::uint64_t w = c.timer_work_ns();
        if (w > r.end_ns) s.work_beyond_span = true;
        needed_ns += std::max(w, r.end_ns);
        work_ns += w;
    };
    for (const CpuMetrics& c : r.per_cpu) add_cpu(c);
    if (r.per_cpu.empty())
        for (unsigned c = 0; c < std::max(1u, r.config.cpus); ++c) {
            // Only the total is known: spread it evenly.
            CpuMetrics share;
            share.softirq_work_ns = m.softirq_work_ns / std::max(1u, r.config.cpus);
            share.task_work_ns = m.task_work_ns / std::max(1u, r.config.cpus);
            add_cpu(share);
        }
    s.cpu_share = needed_ns > 0 ? 100.0 * static_cast<double>(work_ns) / static_cast<double>(needed_ns) : 0;
    return s;
}

std::vector<Summary> summarize(const Comparison& c) {
    std::vector<Summary> out;
    for (const RunResult& r : c.runs) out.push_back(summarize(r));
    return out;
}

const Summary* find(const std::vector<Summary>& s, Design d) {
    for (const Summary& x : s)
        if (x.design == d) return &x;
    return nullptr;
}

std::vector<Group> error_groups(std::int64_t max_error) {
    std::vector<Group> groups{{INT64_MIN, -1}, {0, 0}};
    for (std::int64_t lo = 1; lo <= std::max<std::int64_t>(max_error, 1); lo *= 2) groups.push_back({lo, 2 * lo - 1});
    return groups;
}

std::size_t group_of(std::int64_t value) {
    if (value < 0) return 0;
    if (value == 0) return 1;
    return 2 + static_cast<std::size_t>(63 - __builtin_clzll(static_cast<std::uint64_t>(value)));
}

bool is_base_small(const classic::Geometry& g) {
    return g.tvr_bits == classic::Geometry::base_small().tvr_bits &&
           g.tvn_bits == classic::Geometry::base_small().tvn_bits;
}

} // namespace timersim::comparison_summary
