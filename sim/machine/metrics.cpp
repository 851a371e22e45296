#include "sim/machine/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace timersim {

void CpuMetrics::merge(const CpuMetrics& o) {
    error_jiffies.merge(o.error_jiffies);
    error_ns.merge(o.error_ns);
    early += o.early;
    error_us.merge(o.error_us);
    softirq_ns.merge(o.softirq_ns);
    max_softirq_ns = std::max(max_softirq_ns, o.max_softirq_ns);
    max_expired_per_softirq = std::max(max_expired_per_softirq, o.max_expired_per_softirq);
    max_cascade_moves_per_softirq = std::max(max_cascade_moves_per_softirq, o.max_cascade_moves_per_softirq);
    softirq_work_ns += o.softirq_work_ns;
    task_work_ns += o.task_work_ns;
    arms += o.arms;
    rearm_dequeues += o.rearm_dequeues;
    fired += o.fired;
    cancelled += o.cancelled;
    pending += o.pending;
    ticks += o.ticks;
    ticks_raised += o.ticks_raised;
    ticks_not_raised += o.ticks_not_raised;
    ticks_in_softirq += o.ticks_in_softirq;
    actions_delayed += o.actions_delayed;
    tick_stops += o.tick_stops;
    wakeups_by_timer += o.wakeups_by_timer;
    wakeups_by_action += o.wakeups_by_action;
    wakeups_by_remote += o.wakeups_by_remote;
    ticks_skipped += o.ticks_skipped;
    max_jiffies_jump = std::max(max_jiffies_jump, o.max_jiffies_jump);
    remote_expiries += o.remote_expiries;
    expired_by_remote += o.expired_by_remote;
    softirq.merge(o.softirq);
    counters.merge(o.counters);
}

bool CpuMetrics::operator==(const CpuMetrics& o) const {
    return error_jiffies.counts() == o.error_jiffies.counts() && error_ns == o.error_ns && early == o.early &&
           error_us.counts() == o.error_us.counts() &&
           softirq_ns == o.softirq_ns && max_softirq_ns == o.max_softirq_ns &&
           max_expired_per_softirq == o.max_expired_per_softirq &&
           max_cascade_moves_per_softirq == o.max_cascade_moves_per_softirq &&
           softirq_work_ns == o.softirq_work_ns && task_work_ns == o.task_work_ns && arms == o.arms &&
           rearm_dequeues == o.rearm_dequeues && fired == o.fired && cancelled == o.cancelled &&
           pending == o.pending && ticks == o.ticks && ticks_raised == o.ticks_raised &&
           ticks_not_raised == o.ticks_not_raised && ticks_in_softirq == o.ticks_in_softirq &&
           actions_delayed == o.actions_delayed && tick_stops == o.tick_stops &&
           wakeups_by_timer == o.wakeups_by_timer && wakeups_by_action == o.wakeups_by_action &&
           wakeups_by_remote == o.wakeups_by_remote && ticks_skipped == o.ticks_skipped &&
           max_jiffies_jump == o.max_jiffies_jump && remote_expiries == o.remote_expiries &&
           expired_by_remote == o.expired_by_remote && softirq == o.softirq && counters == o.counters;
}

void SeriesPoint::add_run(std::uint64_t duration_ns) {
    const auto bucket = static_cast<std::uint16_t>(Log2Histogram::bucket_of(duration_ns));
    auto it = std::lower_bound(run_buckets.begin(), run_buckets.end(), bucket,
                               [](const auto& entry, std::uint16_t b) { return entry.first < b; });
    if (it == run_buckets.end() || it->first != bucket) it = run_buckets.insert(it, {bucket, 0});
    ++it->second;
}

std::uint64_t SeriesPoint::runs() const noexcept {
    std::uint64_t n = 0;
    for (const auto& [bucket, count] : run_buckets) n += count;
    return n;
}

std::uint64_t SeriesPoint::run_percentile(double p) const noexcept {
    const std::uint64_t n = runs();
    if (n == 0) return 0;
    // Nearest rank: the smallest value with at least p % of the runs at or below it.
    const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n))));
    std::uint64_t seen = 0;
    for (const auto& [bucket, count] : run_buckets) {
        seen += count;
        if (seen >= rank) return std::min(Log2Histogram::bucket_high(bucket), max_softirq_ns);
    }
    return max_softirq_ns;
}

} // namespace timersim
