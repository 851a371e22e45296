#include "sim/report/seed_costs.hpp"

#include "sim/report/format_time.hpp"

#include <fmt/core.h>

namespace timersim {

namespace {

std::string per(std::uint64_t n, std::uint64_t of, std::string_view what) {
    if (of == 0) return "";
    return fmt::format(" ({:.2f} per {})", static_cast<double>(n) / static_cast<double>(of), what);
}

} // namespace

std::string seed_costs_text(const RunResult& r, const CpuMetrics& m) {
    const DesignInfo& info = design_info(r.design);
    if (!info.paper_costs && !info.holds_garbage) return "";
    const QueueCounters& q = m.counters;
    std::string out;
    if (info.paper_costs) {
        out += "\nVarghese-Lauck costs (the paper's unit: list elements and slots visited)\n";
        out += fmt::format("  START_TIMER                 {}{}\n", q.paper.start, per(q.paper.start, q.enqueues, "start"));
        out += fmt::format("  STOP_TIMER                  {}\n", q.paper.stop);
        out += fmt::format("  PER_TICK_BOOKKEEPING        {}{}\n", q.paper.per_tick, per(q.paper.per_tick, m.ticks, "tick"));
        out += fmt::format("  EXPIRY_PROCESSING           {}\n", q.paper.expiry);
        out += fmt::format("  list elements walked        {} (charged as next-expiry steps)\n", q.list_steps);
        out += fmt::format("  measured: timer work        {} ({} per paper unit)\n",
                           format_ns(static_cast<std::int64_t>(m.timer_work_ns())),
                           q.paper.total() ? format_ns(static_cast<std::int64_t>(m.timer_work_ns() / q.paper.total()))
                                           : std::string("-"));
    }
    if (info.holds_garbage) {
        out += fmt::format("\nCancelled entries still held ({})\n",
                           r.design == Design::netty ? "cancelled timeouts until the next tick or the transfer"
                                                     : "tombstones until their bucket drains");
        out += fmt::format("  peak                        {} ({} bytes)\n", q.peak_garbage,
                           q.peak_garbage * r.garbage_entry_bytes);
        out += fmt::format("  at end                      {} ({} bytes)\n", q.garbage, q.garbage * r.garbage_entry_bytes);
    }
    return out;
}

void add_seed_costs(ordered_json& counters, const RunResult& r, const CpuMetrics& m) {
    const DesignInfo& info = design_info(r.design);
    if (!info.paper_costs && !info.holds_garbage) return;
    const QueueCounters& q = m.counters;
    ordered_json paper = ordered_json::object();
    paper["start"] = q.paper.start;
    paper["stop"] = q.paper.stop;
    paper["per_tick"] = q.paper.per_tick;
    paper["expiry"] = q.paper.expiry;
    counters["paper_costs"] = std::move(paper);
    counters["list_steps"] = q.list_steps;
    if (info.holds_garbage) {
        ordered_json garbage = ordered_json::object();
        garbage["peak"] = q.peak_garbage;
        garbage["at_end"] = q.garbage;
        garbage["entry_bytes"] = r.garbage_entry_bytes;
        counters["garbage"] = std::move(garbage);
    }
}

} // namespace timersim
