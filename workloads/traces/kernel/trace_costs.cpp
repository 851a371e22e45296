#include "workloads/traces/kernel/trace_costs.hpp"

#include "workloads/traces/input/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace timersim {

CostDistribution CostDistribution::of(std::vector<std::uint64_t> samples) {
    CostDistribution d;
    d.count = samples.size();
    if (samples.empty()) return d;
    std::sort(samples.begin(), samples.end());
    const auto rank = [&](std::uint64_t percent) {
        // ceil(percent * n / 100), at least 1: integer arithmetic, exact.
        const std::uint64_t r = std::max<std::uint64_t>(1, (percent * d.count + 99) / 100);
        return samples[r - 1];
    };
    d.p50 = rank(50);
    d.p90 = rank(90);
    d.p99 = rank(99);
    d.max = samples.back();
    return d;
}

TraceCostCollector::Cpu& TraceCostCollector::cpu(std::uint32_t c) { return cpus_[c]; }

void TraceCostCollector::timer_event(const FtraceEvent& e) {
    if (e.type != FtraceEventType::timer_expire_entry && e.type != FtraceEventType::timer_expire_exit) return;
    Cpu& c = cpu(e.line_cpu);
    if (e.type == FtraceEventType::timer_expire_entry) {
        if (c.callback) { // its exit was lost
            ++broken_;
            c.broken = true;
        }
        if (c.in_run && c.run_callbacks > 0) c.run_gaps.push_back(e.timestamp_ns - c.last_exit_ns);
        if (c.in_run && c.run_callbacks == 0 && !c.callback) c.first_entry_ns = e.timestamp_ns;
        c.callback = Callback{e.timer, e.timestamp_ns, std::string(e.function)};
        return;
    }
    if (!c.callback || c.callback->timer != e.timer) { // the entry was lost
        ++broken_;
        c.broken = c.broken || c.in_run;
        c.callback.reset();
        return;
    }
    const std::uint64_t ns = e.timestamp_ns - c.callback->start_ns;
    callbacks_.push_back(ns);
    by_function_[c.callback->function].push_back(ns);
    c.callback.reset();
    if (c.in_run) {
        ++c.run_callbacks;
        c.last_exit_ns = e.timestamp_ns;
    }
}

void TraceCostCollector::timer_softirq(const FtraceTimerSoftirq& e) {
    Cpu& c = cpu(e.line_cpu);
    if (e.entry) {
        if (c.in_run) ++broken_; // the previous run's exit was lost
        c.in_run = true;
        c.broken = c.callback.has_value(); // a callback still open from before the run
        c.callback.reset();
        c.run_start_ns = e.timestamp_ns;
        c.run_callbacks = 0;
        c.run_gaps.clear();
        return;
    }
    if (!c.in_run) {
        ++broken_;
        return;
    }
    c.in_run = false;
    if (c.broken || c.callback) {
        if (c.callback) ++broken_;
        c.callback.reset();
        return;
    }
    const std::uint64_t duration = e.timestamp_ns - c.run_start_ns;
    runs_.push_back(duration);
    if (c.run_callbacks == 0) {
        overheads_.push_back(duration);
        return;
    }
    overheads_.push_back((c.first_entry_ns - c.run_start_ns) + (e.timestamp_ns - c.last_exit_ns));
    gaps_.insert(gaps_.end(), c.run_gaps.begin(), c.run_gaps.end());
    per_expiry_.push_back(duration / c.run_callbacks);
    expiries_in_runs_ += c.run_callbacks;
}

TraceCosts TraceCostCollector::result(const std::string& file) const {
    if (runs_.empty())
        throw InputError(fmt::format(
            "{}: --costs-from-trace: no complete TIMER_SOFTIRQ run (irq:softirq_entry and softirq_exit with vec=1) "
            "in the trace; record it with -e irq:softirq_entry -e irq:softirq_exit -e timer:*",
            file));
    if (callbacks_.empty())
        throw InputError(fmt::format(
            "{}: --costs-from-trace: no complete timer callback (timer:timer_expire_entry and timer_expire_exit) "
            "in the trace; record it with -e timer:*",
            file));
    TraceCosts t;
    for (const auto& [function, samples] : by_function_)
        t.callback_by_function.emplace(function, CostDistribution::of(samples));
    t.callbacks = CostDistribution::of(callbacks_);
    t.softirq_runs = CostDistribution::of(runs_);
    t.run_overhead = CostDistribution::of(overheads_);
    t.expiry_gaps = CostDistribution::of(gaps_);
    t.per_expiry = CostDistribution::of(per_expiry_);
    t.expiries_in_runs = expiries_in_runs_;
    t.broken_pairs = broken_;
    return t;
}

} // namespace timersim
