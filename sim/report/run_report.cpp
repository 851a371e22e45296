#include "sim/report/run_report.hpp"

#include "sim/report/format_time.hpp"
#include "sim/report/group_report.hpp"
#include "sim/report/json.hpp"
#include "sim/report/kernel_fires_report.hpp"
#include "sim/report/percentiles.hpp"
#include "sim/report/seed_costs.hpp"
#include "sim/report/metrics_json.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace timersim {

namespace {

// --numa-nodes, where it is not the default one node.
std::string numa_nodes_text(const MachineConfig& c) {
    return c.numa_nodes > 1 ? fmt::format(" on {} NUMA nodes", c.numa_nodes) : std::string();
}

// Up to this many CPUs the text report has a row for each; above, the
// CPUs with the most softirq time and each column's spread over all CPUs
// (every CPU's row is in the JSON report).
constexpr unsigned kCpuRowsAll = 32;
constexpr unsigned kCpuRowsTop = 8;

// One CPU's columns of the per-CPU table, as numbers (times in ns).
constexpr std::size_t kCpuColumns = 12;
using CpuRow = std::array<std::int64_t, kCpuColumns>; // signed: a max error may be negative

CpuRow cpu_row(const CpuMetrics& p) {
    const auto n = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
    return {n(p.arms),
            n(p.fired),
            n(p.cancelled),
            n(p.pending),
            n(p.ticks),
            n(p.softirq.runs_irq_exit + p.softirq.runs_ksoftirqd),
            p.error_jiffies.max(),
            n(p.max_softirq_ns),
            n(p.softirq_work_ns),
            n(p.remote_expiries),
            n(p.expired_by_remote),
            n(p.wakeups_by_timer)};
}

std::string cpu_row_text(std::string_view name, const CpuRow& v, bool remote) {
    std::string out = fmt::format("  {:>4} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10} {:>11} {:>12}", name, v[0],
                                  v[1], v[2], v[3], v[4], v[5], v[6], format_ns(v[7]), format_ns(v[8]));
    if (remote) out += fmt::format(" {:>10} {:>10} {:>10}", v[9], v[10], v[11]);
    return out + "\n";
}

std::string per_cpu_text(const RunResult& r, bool remote) {
    const auto cpus = static_cast<unsigned>(r.per_cpu.size());
    std::vector<CpuRow> rows;
    rows.reserve(cpus);
    for (const CpuMetrics& p : r.per_cpu) rows.push_back(cpu_row(p));
    std::string out = "\nPer CPU";
    if (cpus > kCpuRowsAll)
        out += fmt::format(" ({} CPUs: the {} with the most softirq time, then each column's least, median and most "
                           "over all of them; every CPU in --format json)",
                           cpus, kCpuRowsTop);
    out += fmt::format("\n  {:>4} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10} {:>11} {:>12}", "cpu", "arms",
                       "fired", "cancelled", "pending", "ticks", "softirqs", "max err j", "max softirq",
                       "softirq time");
    if (remote) out += fmt::format(" {:>10} {:>10} {:>10}", "for others", "by others", "idle wakes");
    out += "\n";
    if (cpus <= kCpuRowsAll) {
        for (unsigned i = 0; i < cpus; ++i) out += cpu_row_text(std::to_string(i), rows[i], remote);
    } else {
        std::vector<unsigned> order(cpus);
        for (unsigned i = 0; i < cpus; ++i) order[i] = i;
        // Most softirq time first; a tie by CPU number, so the rows are the
        // same run to run.
        std::partial_sort(order.begin(), order.begin() + kCpuRowsTop, order.end(), [&](unsigned a, unsigned b) {
            return rows[a][8] != rows[b][8] ? rows[a][8] > rows[b][8] : a < b;
        });
        for (unsigned k = 0; k < kCpuRowsTop; ++k) out += cpu_row_text(std::to_string(order[k]), rows[order[k]], remote);
        // Each column on its own: the median of CPUs' counts (the lower
        // middle one for an even count), not one CPU's row.
        CpuRow least{}, median{}, most{};
        std::vector<std::int64_t> column(cpus);
        for (std::size_t c = 0; c < kCpuColumns; ++c) {
            for (unsigned i = 0; i < cpus; ++i) column[i] = rows[i][c];
            std::sort(column.begin(), column.end());
            least[c] = column.front();
            median[c] = column[(cpus - 1) / 2];
            most[c] = column.back();
        }
        out += cpu_row_text("min", least, remote);
        out += cpu_row_text("p50", median, remote);
        out += cpu_row_text("max", most, remote);
    }
    if (remote)
        out += "  (for others: idle CPUs' global timers this CPU expired as their migrator, counted in its\n"
               "  fired too; by others: this CPU's timers another CPU expired so; idle wakes: its stopped\n"
               "  tick woken by its own timer event)\n";
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
    out += fmt::format("timersim run: {} design, HZ={}, {} ticks ({} simulated), {} CPU{}{}\n", design_name(r),
                       c.hz, c.ticks, format_ns(static_cast<std::int64_t>(r.end_ns)), c.cpus, c.cpus == 1 ? "" : "s",
                       numa_nodes_text(c));
    out += fmt::format("workload: {}\n", r.workload_description);
    if (r.operations_past_end)
        out += fmt::format("{} operations past the end of the run were not simulated\n", r.operations_past_end);
    out += kernel_fires_text(r);
    out += fmt::format(
        "cost model (ns): enqueue {}, dequeue {}, cascade move {}, bucket scan {}, expiry {}, callback {}, "
        "next-expiry step {}, softirq entry {}\n",
        k.enqueue_ns, k.dequeue_ns, k.cascade_move_ns, k.bucket_scan_ns, k.expiry_ns, k.callback_ns,
        k.next_expiry_step_ns, k.softirq_entry_ns);
    out += fmt::format("ksoftirqd delay {}, tick jitter {}, NOHZ idle {}",
                       format_ns(static_cast<std::int64_t>(c.ksoftirqd_delay_ns)),
                       format_ns(static_cast<std::int64_t>(c.tick_jitter_ns)),
                       c.recorded ? "as recorded" : c.nohz_idle ? "on" : "off");
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
    const bool remote = reports_remote_expiry(r);
    if (remote) {
        out += "Remote expiry (6.9+: idle CPUs' global timers expired by a migrator)\n";
        out += fmt::format("  remote expiries             {}\n\n", m.remote_expiries);
    }

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

    if (cpus > 1) out += per_cpu_text(r, remote);
    out += "\n" + group_table_text(r.groups, group_rows);
    if (r.kernel_fires) out += "\n" + kernel_by_function_text(*r.kernel_fires, group_rows);
    return out;
}

std::string format_run_csv(const RunResult& r) {
    return group_csv_header() + group_csv_rows(design_name(r), r.groups);
}

namespace {

// The members and the CPUs one per line, each CPU's members and the
// total's too; means with the decimals the report has always had.
JsonLayout run_layout() {
    JsonLayout layout{.expanded = {"", "/cpus", "/cpus/*", "/total"}};
    for (const char* metrics : {"/cpus/*", "/total"}) {
        const std::string m = metrics;
        layout.fixed_decimals.emplace_back(m + "/error_jiffies/mean", 6);
        layout.fixed_decimals.emplace_back(m + "/error_ns/mean", 1);
        layout.fixed_decimals.emplace_back(m + "/softirq/duration_ns/mean", 1);
    }
    return layout;
}

// Buckets as [lowest value, count], negatives first.
ordered_json log2_buckets_json(const Log2Histogram& h) {
    ordered_json bins = ordered_json::array();
    for (unsigned b = Log2Histogram::kBuckets; b-- > 0;)
        if (const auto c = h.negative_buckets()[b])
            bins.push_back(ordered_json::array({-static_cast<std::int64_t>(Log2Histogram::bucket_high(b)), c}));
    for (unsigned b = 0; b < Log2Histogram::kBuckets; ++b)
        if (const auto c = h.positive_buckets()[b]) bins.push_back(ordered_json::array({Log2Histogram::bucket_low(b), c}));
    return bins;
}

ordered_json ns_stats_json(const Log2Histogram& h) {
    ordered_json o = log2_stats_json(h, false);
    o["histogram"] = log2_buckets_json(h);
    return o;
}

ordered_json timers_json(const RunResult& r, const CpuMetrics& m) {
    ordered_json o = ordered_json::object();
    o["arms"] = m.arms;
    o["rearm_dequeues"] = m.rearm_dequeues;
    o["fired"] = m.fired;
    o["cancelled"] = m.cancelled;
    o["pending_at_end"] = m.pending;
    o["early"] = m.early;
    o["bytes_per_timer"] = r.bytes_per_timer;
    o["engine_bytes_per_timer"] = r.engine_bytes_per_timer;
    return o;
}

ordered_json ticks_json(const CpuMetrics& m) {
    ordered_json o = ordered_json::object();
    o["total"] = m.ticks;
    o["raised"] = m.ticks_raised;
    o["not_raised"] = m.ticks_not_raised;
    o["during_softirq"] = m.ticks_in_softirq;
    o["skipped"] = m.ticks_skipped;
    o["tick_stops"] = m.tick_stops;
    o["wakeups_by_timer"] = m.wakeups_by_timer;
    o["wakeups_by_action"] = m.wakeups_by_action;
    o["wakeups_by_remote"] = m.wakeups_by_remote;
    o["max_jiffies_jump"] = m.max_jiffies_jump;
    return o;
}

ordered_json softirq_json(const CpuMetrics& m) {
    const auto& s = m.softirq;
    ordered_json o = ordered_json::object();
    o["runs_irq_exit"] = s.runs_irq_exit;
    o["runs_ksoftirqd"] = s.runs_ksoftirqd;
    o["passes"] = s.passes;
    o["restarts"] = s.restarts;
    o["max_passes_per_run"] = s.max_passes_per_run;
    o["deferrals"] = s.deferrals;
    o["deferrals_by_time"] = s.deferrals_by_time;
    o["deferrals_by_restarts"] = s.deferrals_by_restarts;
    o["irq_exit_skipped"] = s.irq_exit_skipped;
    o["max_ns"] = m.max_softirq_ns;
    o["max_expired"] = m.max_expired_per_softirq;
    o["max_cascade_moves"] = m.max_cascade_moves_per_softirq;
    o["duration_ns"] = ns_stats_json(m.softirq_ns);
    return o;
}

// One CPU's metrics (or the total's, without "cpu").
ordered_json cpu_json(const RunResult& r, const CpuMetrics& m, std::optional<unsigned> cpu) {
    ordered_json o = ordered_json::object();
    if (cpu) o["cpu"] = *cpu;
    o["timers"] = timers_json(r, m);
    ordered_json error_jiffies = error_stats_json(m.error_jiffies);
    error_jiffies["histogram"] = error_histogram_json(m.error_jiffies);
    o["error_jiffies"] = std::move(error_jiffies);
    o["error_ns"] = ns_stats_json(m.error_ns);
    o["ticks"] = ticks_json(m);
    if (reports_remote_expiry(r)) {
        ordered_json remote = ordered_json::object();
        remote["expired_for_others"] = m.remote_expiries;
        remote["expired_by_others"] = m.expired_by_remote;
        o["remote_expiry"] = std::move(remote);
    }
    o["softirq"] = softirq_json(m);
    ordered_json work = ordered_json::object();
    work["total"] = m.timer_work_ns();
    work["softirq"] = m.softirq_work_ns;
    work["task"] = m.task_work_ns;
    o["timer_work_ns"] = std::move(work);
    o["actions_delayed"] = m.actions_delayed;
    o["counters"] = queue_counters_json(m.counters);
    add_seed_costs(o["counters"], r, m);
    return o;
}

ordered_json machine_json(const RunResult& r) {
    const MachineConfig& c = r.config;
    ordered_json o = ordered_json::object();
    o["hz"] = c.hz;
    o["cpus"] = c.cpus;
    if (c.numa_nodes > 1) o["numa_nodes"] = c.numa_nodes; // absent: one node, as before --numa-nodes
    o["ticks"] = c.ticks;
    o["start_jiffies"] = r.start_jiffies;
    o["end_ns"] = r.end_ns;
    o["ksoftirqd_delay_ns"] = c.ksoftirqd_delay_ns;
    o["tick_jitter_ns"] = c.tick_jitter_ns;
    o["jitter_seed"] = c.jitter_seed;
    o["nohz_idle"] = c.nohz_idle;
    o["max_expiries_per_softirq"] = c.max_expiries_per_softirq;
    return o;
}

// Every window as one row of "columns".
ordered_json series_json(const RunResult& r) {
    ordered_json points = ordered_json::array();
    for (const SeriesPoint& p : r.series)
        points.push_back(ordered_json::array({p.start_ns, p.softirq_ns, p.max_softirq_ns, p.cascade_moves, p.expired,
                                              p.runs(), p.run_percentile(50), p.run_percentile(99)}));
    ordered_json o = ordered_json::object();
    o["window_ticks"] = r.series_window_ticks;
    o["columns"] = ordered_json::array({"start_ns", "softirq_ns", "max_softirq_ns", "cascade_moves", "expired", "runs",
                                        "p50_softirq_ns", "p99_softirq_ns"});
    o["points"] = std::move(points);
    return o;
}

} // namespace

ordered_json run_document(const RunResult& r) {
    ordered_json doc = ordered_json::object();
    doc["schema"] = "timersim.run.v1";
    doc["design"] = design_name(r);
    doc["machine"] = machine_json(r);
    ordered_json workload = ordered_json::object();
    workload["name"] = r.workload_name;
    workload["params"] = r.workload_params;
    workload["operations_past_end"] = r.operations_past_end;
    if (r.kernel_fires) workload["kernel_fires"] = kernel_fires_json(r);
    doc["workload"] = std::move(workload);
    doc["cost_model_ns"] = cost_model_json(r.config.costs);
    ordered_json cpus = ordered_json::array();
    for (std::size_t i = 0; i < r.per_cpu.size(); ++i) cpus.push_back(cpu_json(r, r.per_cpu[i], static_cast<unsigned>(i)));
    doc["cpus"] = std::move(cpus);
    doc["total"] = cpu_json(r, r.total, std::nullopt);
    doc["groups"] = group_table_json(r.groups);
    doc["series"] = series_json(r);
    return doc;
}

std::string format_run_json(const RunResult& r) {
    static const JsonLayout layout = run_layout();
    return write_json(run_document(r), layout) + "\n";
}

} // namespace timersim
