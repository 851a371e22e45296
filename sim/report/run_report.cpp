#include "sim/report/run_report.hpp"

#include "sim/report/format_time.hpp"
#include "sim/report/group_report.hpp"
#include "sim/report/json.hpp"
#include "sim/report/percentiles.hpp"
#include "sim/report/seed_costs.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <optional>
#include <vector>

namespace timersim {

namespace {

std::string jiffy_stats_json(const ErrorHistogram& h) {
    const bool k = !h.empty();
    std::string out = fmt::format("{{\"count\": {}, \"mean\": {}, \"min\": {}", h.total(),
                                  k ? fmt::format("{:.6f}", h.mean()) : "null", json_or_null(k, h.min()));
    for (double p : kPercentiles) out += fmt::format(", \"{}\": {}", percentile_name(p), json_or_null(k, h.percentile(p)));
    std::vector<std::string> bins;
    for (const auto& [value, count] : h.counts()) bins.push_back(fmt::format("[{}, {}]", value, count));
    out += fmt::format(", \"histogram\": [{}]}}", fmt::join(bins, ", "));
    return out;
}

std::string ns_stats_json(const Log2Histogram& h) {
    const bool k = !h.empty();
    std::string out = fmt::format("{{\"count\": {}, \"mean\": {}, \"min\": {}", h.count(),
                                  k ? fmt::format("{:.1f}", h.mean()) : "null", json_or_null(k, h.min()));
    for (double p : kPercentiles) out += fmt::format(", \"{}\": {}", percentile_name(p), json_or_null(k, h.percentile(p)));
    // Buckets as [lowest value, count], negatives first.
    std::vector<std::string> bins;
    for (unsigned b = Log2Histogram::kBuckets; b-- > 0;)
        if (const auto c = h.negative_buckets()[b]) bins.push_back(fmt::format("[-{}, {}]", Log2Histogram::bucket_high(b), c));
    for (unsigned b = 0; b < Log2Histogram::kBuckets; ++b)
        if (const auto c = h.positive_buckets()[b]) bins.push_back(fmt::format("[{}, {}]", Log2Histogram::bucket_low(b), c));
    out += fmt::format(", \"histogram\": [{}]}}", fmt::join(bins, ", "));
    return out;
}

} // namespace

std::string format_run_text(const RunResult& r, std::size_t group_rows) {
    const MachineConfig& c = r.config;
    const CpuMetrics& m = r.total;
    const auto& s = m.softirq;
    const CostModel& k = c.costs;
    const unsigned cpus = static_cast<unsigned>(r.per_cpu.size());
    std::string out;
    out += fmt::format("timersim run: {} design, HZ={}, {} ticks ({} simulated), {} CPU{}\n", design_name(r),
                       c.hz, c.ticks, format_ns(static_cast<std::int64_t>(r.end_ns)), c.cpus, c.cpus == 1 ? "" : "s");
    out += fmt::format("workload: {}\n", r.workload_description);
    if (r.operations_past_end)
        out += fmt::format("{} operations past the end of the run were not simulated\n", r.operations_past_end);
    out += fmt::format(
        "cost model (ns): enqueue {}, dequeue {}, cascade move {}, bucket scan {}, expiry {}, callback {}, "
        "next-expiry step {}, softirq entry {}\n",
        k.enqueue_ns, k.dequeue_ns, k.cascade_move_ns, k.bucket_scan_ns, k.expiry_ns, k.callback_ns,
        k.next_expiry_step_ns, k.softirq_entry_ns);
    out += fmt::format("ksoftirqd delay {}, tick jitter {}, NOHZ idle {}",
                       format_ns(static_cast<std::int64_t>(c.ksoftirqd_delay_ns)),
                       format_ns(static_cast<std::int64_t>(c.tick_jitter_ns)), c.nohz_idle ? "on" : "off");
    if (c.max_expiries_per_softirq) out += fmt::format(", at most {} expiries per softirq run", c.max_expiries_per_softirq);
    out += "\n";
    if (cpus > 1) out += "(all CPUs together; per-CPU figures at the end)\n";
    out += "\n";

    out += "Timers\n";
    out += fmt::format("  arms                        {}\n", m.arms);
    out += fmt::format("  fired                       {}\n", m.fired);
    out += fmt::format("  cancelled                   {}\n", m.cancelled);
    out += fmt::format("  pending at end              {}\n", m.pending);
    out += fmt::format("  fired early                 {}\n", m.early);
    out += fmt::format("  bytes per timer             {}\n\n", r.bytes_per_timer);

    out += "Precision error (fired - requested)\n";
    if (m.fired == 0) {
        out += "  n/a: no timer fired\n\n";
    } else {
        out += fmt::format("  {:<8} {:>12} {:>14}\n", "", "jiffies", "time");
        out += fmt::format("  {:<8} {:>12.3f} {:>14}\n", "mean", m.error_jiffies.mean(),
                           format_ns(static_cast<std::int64_t>(m.error_ns.mean())));
        out += fmt::format("  {:<8} {:>12} {:>14}\n", "min", m.error_jiffies.min(), format_ns(m.error_ns.min()));
        for (double p : kPercentiles)
            out += fmt::format("  {:<8} {:>12} {:>14}\n", percentile_name(p), m.error_jiffies.percentile(p),
                               format_ns(p == 100 ? m.error_ns.max() : m.error_ns.percentile(p)));
        out += "  (time percentiles are bucket upper bounds, within 12.5 %; min, mean and max are exact)\n\n";
    }

    out += "Ticks\n";
    out += fmt::format("  ticks                       {}\n", m.ticks);
    out += fmt::format("  raised TIMER_SOFTIRQ        {}\n", m.ticks_raised);
    out += fmt::format("  did not raise               {}\n", m.ticks_not_raised);
    out += fmt::format("  during a softirq            {}\n", m.ticks_in_softirq);
    if (c.nohz_idle) {
        out += fmt::format("  skipped (tick stopped)      {}\n", m.ticks_skipped);
        out += fmt::format("  tick stops                  {}\n", m.tick_stops);
        out += fmt::format("  woken by a timer            {}\n", m.wakeups_by_timer);
        out += fmt::format("  woken by an action          {}\n", m.wakeups_by_action);
        if (cpus > 1) out += fmt::format("  kicked by another CPU       {}\n", m.wakeups_by_remote);
        out += fmt::format("  longest jiffies jump        {}\n", m.max_jiffies_jump);
    }
    out += "\n";

    out += "Softirq (handle_softirqs runs)\n";
    out += fmt::format("  from irq_exit               {}\n", s.runs_irq_exit);
    out += fmt::format("  from ksoftirqd              {}\n", s.runs_ksoftirqd);
    out += fmt::format("  passes                      {} (restarts {}, most in one run {})\n", s.passes, s.restarts,
                       s.max_passes_per_run);
    out += fmt::format("  deferred to ksoftirqd       {} (time limit {}, restart limit {})\n", s.deferrals,
                       s.deferrals_by_time, s.deferrals_by_restarts);
    out += fmt::format("  irq_exit left to ksoftirqd  {}\n", s.irq_exit_skipped);
    if (m.softirq_ns.empty())
        out += "  duration                    n/a (no timer softirq ran)\n";
    else
        out += fmt::format("  duration                    mean {}, p99 {}, max {}\n",
                           format_ns(static_cast<std::int64_t>(m.softirq_ns.mean())),
                           format_ns(m.softirq_ns.percentile(99)), format_ns(static_cast<std::int64_t>(m.max_softirq_ns)));
    out += fmt::format("  most expired in one         {}\n", m.max_expired_per_softirq);
    out += fmt::format("  most cascade moves in one   {}\n\n", m.max_cascade_moves_per_softirq);

    // Share of the machine: all CPUs' time.
    const double machine_ns = static_cast<double>(r.end_ns) * std::max(1u, cpus);
    const double share = r.end_ns ? 100.0 * static_cast<double>(m.softirq_work_ns) / machine_ns : 0;
    out += "CPU time in timer work\n";
    out += fmt::format("  total                       {}\n", format_ns(static_cast<std::int64_t>(m.timer_work_ns())));
    out += fmt::format("  in the softirq              {} ({:.3f} % of the {})\n",
                       format_ns(static_cast<std::int64_t>(m.softirq_work_ns)), share,
                       cpus > 1 ? "CPUs" : "CPU");
    out += fmt::format("  arm/cancel (task)           {}\n", format_ns(static_cast<std::int64_t>(m.task_work_ns)));
    out += seed_costs_text(r, m);

    if (cpus > 1) {
        out += "\nPer CPU\n";
        out += fmt::format("  {:>4} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10} {:>11} {:>12}\n", "cpu", "arms",
                           "fired", "cancelled", "pending", "ticks", "softirqs", "max err j", "max softirq",
                           "softirq time");
        for (unsigned i = 0; i < cpus; ++i) {
            const CpuMetrics& p = r.per_cpu[i];
            out += fmt::format("  {:>4} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10} {:>11} {:>12}\n", i, p.arms,
                               p.fired, p.cancelled, p.pending, p.ticks,
                               p.softirq.runs_irq_exit + p.softirq.runs_ksoftirqd, p.error_jiffies.max(),
                               format_ns(static_cast<std::int64_t>(p.max_softirq_ns)),
                               format_ns(static_cast<std::int64_t>(p.softirq_work_ns)));
        }
    }
    out += "\n" + group_table_text(r.groups, group_rows);
    return out;
}

std::string format_run_csv(const RunResult& r) {
    return group_csv_header() + group_csv_rows(design_name(r), r.groups);
}

namespace {

// One CPU's metrics (or the total) as a JSON object, indented by `pad`.
std::string cpu_json(const RunResult& r, const CpuMetrics& m, std::optional<unsigned> cpu, const std::string& pad) {
    const auto& s = m.softirq;
    const auto& q = m.counters;
    std::string out = "{\n";
    if (cpu) out += fmt::format("{}  \"cpu\": {},\n", pad, *cpu);
    out += fmt::format(
        "{}  \"timers\": {{\"arms\": {}, \"rearm_dequeues\": {}, \"fired\": {}, \"cancelled\": {}, "
        "\"pending_at_end\": {}, \"early\": {}, \"bytes_per_timer\": {}, \"engine_bytes_per_timer\": {}}},\n",
        pad, m.arms, m.rearm_dequeues, m.fired, m.cancelled, m.pending, m.early, r.bytes_per_timer,
        r.engine_bytes_per_timer);
    out += fmt::format("{}  \"error_jiffies\": {},\n", pad, jiffy_stats_json(m.error_jiffies));
    out += fmt::format("{}  \"error_ns\": {},\n", pad, ns_stats_json(m.error_ns));
    out += fmt::format(
        "{}  \"ticks\": {{\"total\": {}, \"raised\": {}, \"not_raised\": {}, \"during_softirq\": {}, "
        "\"skipped\": {}, \"tick_stops\": {}, \"wakeups_by_timer\": {}, \"wakeups_by_action\": {}, "
        "\"wakeups_by_remote\": {}, \"max_jiffies_jump\": {}}},\n",
        pad, m.ticks, m.ticks_raised, m.ticks_not_raised, m.ticks_in_softirq, m.ticks_skipped, m.tick_stops,
        m.wakeups_by_timer, m.wakeups_by_action, m.wakeups_by_remote, m.max_jiffies_jump);
    out += fmt::format(
        "{}  \"softirq\": {{\"runs_irq_exit\": {}, \"runs_ksoftirqd\": {}, \"passes\": {}, \"restarts\": {}, "
        "\"max_passes_per_run\": {}, \"deferrals\": {}, \"deferrals_by_time\": {}, \"deferrals_by_restarts\": {}, "
        "\"irq_exit_skipped\": {}, \"max_ns\": {}, \"max_expired\": {}, \"max_cascade_moves\": {}, "
        "\"duration_ns\": {}}},\n",
        pad, s.runs_irq_exit, s.runs_ksoftirqd, s.passes, s.restarts, s.max_passes_per_run, s.deferrals,
        s.deferrals_by_time, s.deferrals_by_restarts, s.irq_exit_skipped, m.max_softirq_ns,
        m.max_expired_per_softirq, m.max_cascade_moves_per_softirq, ns_stats_json(m.softirq_ns));
    out += fmt::format("{}  \"timer_work_ns\": {{\"total\": {}, \"softirq\": {}, \"task\": {}}},\n", pad,
                       m.timer_work_ns(), m.softirq_work_ns, m.task_work_ns);
    out += fmt::format("{}  \"actions_delayed\": {},\n", pad, m.actions_delayed);
    out += fmt::format(
        "{}  \"counters\": {{\"enqueues\": {}, \"same_expiry_shortcuts\": {}, \"same_bucket_shortcuts\": {}, "
        "\"cancels\": {}, \"expired\": {}, \"cascade_moves\": {}, \"cascades\": {}, \"buckets_scanned\": {}, "
        "\"jiffies_walked\": {}, \"softirq_runs\": {}, \"empty_runs\": {}, \"next_expiry_searches\": {}, "
        "\"next_expiry_search_steps\": {}, \"peak_pending\": {}{}}}\n",
        pad, q.enqueues, q.same_expiry_shortcuts, q.same_bucket_shortcuts, q.cancels, q.expired, q.cascade_moves,
        q.cascades, q.buckets_scanned, q.jiffies_walked, q.softirq_runs, q.empty_runs, q.next_expiry_searches,
        q.next_expiry_search_steps, q.peak_pending, seed_costs_json(r, m));
    out += pad + "}";
    return out;
}

} // namespace

std::string format_run_json(const RunResult& r) {
    const MachineConfig& c = r.config;
    const CostModel& k = c.costs;
    std::string out = "{\n";
    out += "  \"schema\": \"timersim.run.v1\",\n";
    out += fmt::format("  \"design\": \"{}\",\n", design_name(r));
    out += fmt::format(
        "  \"machine\": {{\"hz\": {}, \"cpus\": {}, \"ticks\": {}, \"start_jiffies\": {}, \"end_ns\": {}, "
        "\"ksoftirqd_delay_ns\": {}, \"tick_jitter_ns\": {}, \"jitter_seed\": {}, \"nohz_idle\": {}, "
        "\"max_expiries_per_softirq\": {}}},\n",
        c.hz, c.cpus, c.ticks, r.start_jiffies, r.end_ns, c.ksoftirqd_delay_ns, c.tick_jitter_ns, c.jitter_seed,
        c.nohz_idle, c.max_expiries_per_softirq);
    out += fmt::format("  \"workload\": {{\"name\": \"{}\", \"params\": {}, \"operations_past_end\": {}}},\n",
                       r.workload_name, r.workload_json.empty() ? "{}" : r.workload_json, r.operations_past_end);
    out += fmt::format(
        "  \"cost_model_ns\": {{\"enqueue\": {}, \"dequeue\": {}, \"cascade_move\": {}, \"bucket_scan\": {}, "
        "\"expiry\": {}, \"callback\": {}, \"next_expiry_step\": {}, \"softirq_entry\": {}}},\n",
        k.enqueue_ns, k.dequeue_ns, k.cascade_move_ns, k.bucket_scan_ns, k.expiry_ns, k.callback_ns,
        k.next_expiry_step_ns, k.softirq_entry_ns);
    out += "  \"cpus\": [\n";
    for (std::size_t i = 0; i < r.per_cpu.size(); ++i) {
        out += "    " + cpu_json(r, r.per_cpu[i], static_cast<unsigned>(i), "    ");
        out += i + 1 < r.per_cpu.size() ? ",\n" : "\n";
    }
    out += "  ],\n";
    out += "  \"total\": " + cpu_json(r, r.total, std::nullopt, "  ") + ",\n";
    out += "  \"groups\": " + group_table_json(r.groups) + ",\n";
    std::vector<std::string> points;
    points.reserve(r.series.size());
    for (const SeriesPoint& p : r.series)
        points.push_back(fmt::format("[{}, {}, {}, {}, {}, {}, {}, {}]", p.start_ns, p.softirq_ns, p.max_softirq_ns,
                                     p.cascade_moves, p.expired, p.runs(), p.run_percentile(50),
                                     p.run_percentile(99)));
    out += fmt::format(
        "  \"series\": {{\"window_ticks\": {}, \"columns\": [\"start_ns\", \"softirq_ns\", \"max_softirq_ns\", "
        "\"cascade_moves\", \"expired\", \"runs\", \"p50_softirq_ns\", \"p99_softirq_ns\"], \"points\": [{}]}}\n",
        r.series_window_ticks, fmt::join(points, ", "));
    out += "}\n";
    return out;
}

} // namespace timersim
