// The JSON report of a comparison (timersim.compare.v2, docs/output.md),
// from the same summaries as its text and CSV (comparison_summary.hpp).
#include "sim/report/comparison_report.hpp"

#include "sim/report/comparison_summary.hpp"
#include "sim/report/group_report.hpp"
#include "sim/report/json.hpp"
#include "sim/report/kernel_fires_report.hpp"
#include "sim/report/metrics_json.hpp"
#include "sim/report/percentiles.hpp"
#include "sim/report/relative_summary.hpp"
#include "sim/report/seed_costs.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace timersim {

namespace {

using comparison_summary::is_base_small;
using comparison_summary::summarize;
using comparison_summary::Summary;

// The members and the designs one per line, each design's members and its
// CPUs too.
const JsonLayout kCompareLayout{.expanded = {"", "/designs", "/designs/*", "/designs/*/per_cpu"}};

// One figure of every window of the series, in order.
template <class F>
ordered_json series_column(const std::vector<SeriesPoint>& series, F figure) {
    ordered_json column = ordered_json::array();
    for (const SeriesPoint& point : series) column.push_back(figure(point));
    return column;
}

// Every window's run durations as [upper bound of the log2 bucket in ns,
// runs], ascending: enough to merge windows and take percentiles again.
ordered_json run_buckets_json(const SeriesPoint& point) {
    ordered_json pairs = ordered_json::array();
    for (const auto& [bucket, count] : point.run_buckets)
        pairs.push_back(ordered_json::array({Log2Histogram::bucket_high(bucket), count}));
    return pairs;
}

ordered_json series_json(const RunResult& r) {
    const auto& v = r.series;
    ordered_json o = ordered_json::object();
    o["window_ticks"] = r.series_window_ticks;
    o["start_ns"] = series_column(v, [](const SeriesPoint& p) { return p.start_ns; });
    o["softirq_ns"] = series_column(v, [](const SeriesPoint& p) { return p.softirq_ns; });
    o["max_softirq_ns"] = series_column(v, [](const SeriesPoint& p) { return p.max_softirq_ns; });
    o["cascade_moves"] = series_column(v, [](const SeriesPoint& p) { return p.cascade_moves; });
    o["expired"] = series_column(v, [](const SeriesPoint& p) { return p.expired; });
    o["runs"] = series_column(v, [](const SeriesPoint& p) { return p.runs(); });
    o["p50_softirq_ns"] = series_column(v, [](const SeriesPoint& p) { return p.run_percentile(50); });
    o["p99_softirq_ns"] = series_column(v, [](const SeriesPoint& p) { return p.run_percentile(99); });
    o["run_buckets"] = series_column(v, run_buckets_json);
    return o;
}

ordered_json error_jiffies_json(const Summary& s) {
    ordered_json o = error_stats_json(s.m->error_jiffies);
    o["early"] = s.m->early;
    o["histogram"] = error_histogram_json(s.m->error_jiffies);
    return o;
}

ordered_json error_ms_json(const Summary& s) {
    const ErrorHistogram& h = s.m->error_jiffies;
    const auto ms = [&](double jiffies) { return json_or_null(!h.empty(), jiffies * 1000.0 / s.hz); };
    ordered_json o = ordered_json::object();
    o["mean"] = ms(h.mean());
    o["min"] = ms(static_cast<double>(h.min()));
    for (double p : kPercentiles) o[percentile_name(p)] = ms(static_cast<double>(h.percentile(p)));
    return o;
}

ordered_json timers_json(const Summary& s) {
    const CpuMetrics& m = *s.m;
    ordered_json o = ordered_json::object();
    o["arms"] = m.arms;
    o["rearm_dequeues"] = m.rearm_dequeues;
    o["fired"] = m.fired;
    o["cancelled"] = m.cancelled;
    o["pending_at_end"] = m.pending;
    o["early"] = m.early;
    o["operations_past_end"] = s.run->operations_past_end;
    return o;
}

ordered_json softirq_json(const Summary& s) {
    const CpuMetrics& m = *s.m;
    ordered_json o = ordered_json::object();
    o["runs"] = s.softirq_runs;
    o["runs_irq_exit"] = m.softirq.runs_irq_exit;
    o["runs_ksoftirqd"] = m.softirq.runs_ksoftirqd;
    o["restarts"] = m.softirq.restarts;
    o["deferrals"] = m.softirq.deferrals;
    o["per_tick_mean_ns"] = s.softirq_mean_per_tick_ns;
    o["per_tick_p99_ns"] = s.softirq_p99_per_tick_ns;
    o["max_stall_ns"] = json_or_null(s.softirq_runs > 0, s.max_stall_ns);
    o["max_expired_per_run"] = m.max_expired_per_softirq;
    o["run_ns"] = log2_stats_json(m.softirq_ns, true);
    return o;
}

// `remote`: the comparison has a design with 6.9's remote expiry
// (reports_remote_expiry()); every design then gets its figures.
ordered_json per_cpu_json(const CpuMetrics& c, std::size_t cpu, bool remote) {
    const bool fired = c.fired > 0;
    ordered_json o = ordered_json::object();
    o["cpu"] = cpu;
    o["arms"] = c.arms;
    o["fired"] = c.fired;
    o["cancelled"] = c.cancelled;
    o["pending_at_end"] = c.pending;
    o["error_jiffies_p99"] = json_or_null(fired, c.error_jiffies.percentile(99));
    o["error_jiffies_max"] = json_or_null(fired, c.error_jiffies.max());
    o["cascade_moves"] = c.counters.cascade_moves;
    o["softirq_max_ns"] = c.max_softirq_ns;
    o["softirq_work_ns"] = c.softirq_work_ns;
    o["task_work_ns"] = c.task_work_ns;
    o["peak_pending"] = c.counters.peak_pending;
    if (remote) {
        o["remote_expiries_for_others"] = c.remote_expiries;
        o["remote_expiries_by_others"] = c.expired_by_remote;
        o["wakeups_by_timer"] = c.wakeups_by_timer;
    }
    return o;
}

ordered_json design_json(const Summary& s, bool remote) {
    const RunResult& r = *s.run;
    const CpuMetrics& m = *s.m;
    ordered_json o = ordered_json::object();
    o["name"] = s.name;
    o["timers"] = timers_json(s);
    if (s.run->kernel_fires) o["kernel_fires"] = kernel_fires_json(*s.run);
    o["error_jiffies"] = error_jiffies_json(s);
    o["error_ms"] = error_ms_json(s);
    o["error_ns"] = log2_stats_json(m.error_ns, true);
    ordered_json cascades = ordered_json::object();
    cascades["moves"] = m.counters.cascade_moves;
    cascades["cascades"] = m.counters.cascades;
    cascades["max_moves_per_softirq"] = m.max_cascade_moves_per_softirq;
    o["cascades"] = std::move(cascades);
    o["softirq"] = softirq_json(s);
    ordered_json work = ordered_json::object();
    work["total"] = m.timer_work_ns();
    work["softirq"] = m.softirq_work_ns;
    work["task"] = m.task_work_ns;
    work["cascades"] = s.cascade_ns;
    work["cpu_share_percent"] = s.cpu_share;
    o["timer_work_ns"] = std::move(work);
    ordered_json memory = ordered_json::object();
    memory["bytes_per_timer"] = r.bytes_per_timer;
    memory["peak_pending"] = s.peak_pending;
    memory["peak_bytes"] = s.peak_bytes;
    o["memory"] = std::move(memory);
    if (remote) {
        ordered_json pull = ordered_json::object();
        pull["expiries"] = m.remote_expiries;
        pull["wakeups_by_timer"] = m.wakeups_by_timer;
        o["remote_expiry"] = std::move(pull);
    }
    o["counters"] = queue_counters_json(m.counters);
    add_seed_costs(o["counters"], r, m);
    ordered_json cpus = ordered_json::array();
    for (std::size_t i = 0; i < r.per_cpu.size(); ++i) cpus.push_back(per_cpu_json(r.per_cpu[i], i, remote));
    o["per_cpu"] = std::move(cpus);
    o["groups"] = group_table_json(r.groups);
    o["series"] = series_json(r);
    return o;
}

ordered_json slack_json(const MachineConfig& c) {
    ordered_json o = ordered_json::object();
    o["mode"] = !c.classic_slack ? "off" : *c.classic_slack < 0 ? "default" : "fixed";
    o["jiffies"] = json_or_null(c.classic_slack && *c.classic_slack >= 0, c.classic_slack.value_or(0));
    return o;
}

ordered_json machine_json(const RunResult& first) {
    const MachineConfig& c = first.config;
    ordered_json o = ordered_json::object();
    o["hz"] = c.hz;
    o["cpus"] = c.cpus;
    if (c.numa_nodes > 1) o["numa_nodes"] = c.numa_nodes; // absent: one node, as before --numa-nodes
    o["ticks"] = c.ticks;
    o["duration_s"] = static_cast<double>(c.ticks) / c.hz;
    o["start_jiffies"] = first.start_jiffies;
    o["end_ns"] = first.end_ns;
    o["nohz_idle"] = c.nohz_idle;
    o["ksoftirqd_delay_ns"] = c.ksoftirqd_delay_ns;
    o["tick_jitter_ns"] = c.tick_jitter_ns;
    o["jitter_seed"] = c.jitter_seed;
    o["max_expiries_per_softirq"] = c.max_expiries_per_softirq;
    o["classic_slack"] = slack_json(c);
    o["classic_geometry"] = is_base_small(c.classic_geometry) ? "base-small" : "normal";
    return o;
}

} // namespace

ordered_json comparison_document(const Comparison& comparison) {
    if (comparison.runs.empty()) return ordered_json::object();
    const RunResult& first = comparison.runs.front();
    ordered_json doc = ordered_json::object();
    doc["schema"] = std::string(kCompareJsonSchema);
    ordered_json workload = ordered_json::object();
    workload["name"] = first.workload_name;
    workload["description"] = first.workload_description;
    workload["params"] = first.workload_params;
    doc["workload"] = std::move(workload);
    doc["machine"] = machine_json(first);
    doc["cost_model_ns"] = cost_model_json(first.config.costs);
    ordered_json designs = ordered_json::array();
    const bool remote = std::any_of(comparison.runs.begin(), comparison.runs.end(), reports_remote_expiry);
    for (const Summary& s : summarize(comparison)) designs.push_back(design_json(s, remote));
    doc["designs"] = std::move(designs);
    doc["summary"] = relative_summary_json(comparison);
    doc["verdict"] = comparison_verdict(comparison);
    return doc;
}

std::string format_comparison_json(const Comparison& comparison) {
    return write_json(comparison_document(comparison), kCompareLayout) + "\n";
}

} // namespace timersim
