#include "sim/cli/trace_cost_choice.hpp"

#include "sim/report/json.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

std::string dist_text(const CostDistribution& d) {
    return fmt::format("{} samples, p50 {} ns, p90 {}, p99 {}, max {}", d.count, d.p50, d.p90, d.p99, d.max);
}

ordered_json dist_json(const CostDistribution& d) {
    ordered_json out = ordered_json::object();
    out["count"] = d.count;
    out["p50"] = d.p50;
    out["p90"] = d.p90;
    out["p99"] = d.p99;
    out["max"] = d.max;
    return out;
}

} // namespace

TraceCostChoice trace_cost_choice(const TraceCosts& c, const po::variables_map& vm) {
    // What the field would be without the trace: the default, or 0 under
    // --zero-cost (machine_config() applies explicit --cost-*-ns on top).
    const CostModel base = vm.count("zero-cost") && vm["zero-cost"].as<bool>() ? CostModel::zero() : CostModel{};
    TraceCostChoice r;
    std::vector<std::string> lines;
    ordered_json replaced = ordered_json::object(), kept = ordered_json::array();
    lines.push_back(fmt::format("costs from the trace: {} TIMER_SOFTIRQ runs, {} callbacks of {} functions{}",
                                c.softirq_runs.count, c.callbacks.count, c.callback_by_function.size(),
                                c.broken_pairs ? fmt::format(" ({} entries or exits without their pair skipped)",
                                                             c.broken_pairs)
                                               : ""));
    const auto replace = [&](const char* option, const char* key, const char* label, std::uint64_t CostModel::*field,
                             std::uint64_t ns, const std::string& what, const CostDistribution& d) {
        if (vm.count(option)) {
            lines.push_back(fmt::format("  {} {} (--{}; the trace shows {}: {})", label, base.*field, option, what,
                                        dist_text(d)));
            kept.push_back(key);
            return false;
        }
        r.fields.emplace_back(field, ns);
        replaced[key] = {{"was", base.*field}, {"now", ns}};
        return true;
    };
    if (replace("cost-callback-ns", "callback_ns", "callback", &CostModel::callback_ns, c.callbacks.p50,
                "callbacks", c.callbacks)) {
        r.by_function = true;
        lines.push_back(fmt::format("  callback {} -> by function, the p50 of its callbacks in the trace ({} ns for "
                                    "a function without one: all callbacks, {})",
                                    base.callback_ns, c.callbacks.p50, dist_text(c.callbacks)));
    }
    if (replace("cost-softirq-entry-ns", "softirq_entry_ns", "softirq entry", &CostModel::softirq_entry_ns,
                c.run_overhead.p50, "run overhead", c.run_overhead))
        lines.push_back(fmt::format("  softirq entry {} -> {}: p50 of a run's time outside its callbacks ({})",
                                    base.softirq_entry_ns, c.run_overhead.p50, dist_text(c.run_overhead)));
    if (c.expiry_gaps.count == 0) {
        lines.push_back(fmt::format("  expiry {} kept: no run expired two timers, so no gap between callbacks",
                                    base.expiry_ns));
        kept.push_back("expiry_ns");
    } else if (replace("cost-expiry-ns", "expiry_ns", "expiry", &CostModel::expiry_ns, c.expiry_gaps.p50,
                       "gaps between callbacks", c.expiry_gaps)) {
        lines.push_back(fmt::format("  expiry {} -> {}: p50 gap from one callback's exit to the next's entry ({})",
                                    base.expiry_ns, c.expiry_gaps.p50, dist_text(c.expiry_gaps)));
    }
    lines.push_back(fmt::format("  for reference: softirq runs {}; per expiry all told (run / its callbacks) {}",
                                dist_text(c.softirq_runs), dist_text(c.per_expiry)));
    // The functions that took most time, at most 5 (all in the JSON report).
    std::vector<std::pair<std::uint64_t, std::string>> heavy;
    for (const auto& [f, d] : c.callback_by_function) heavy.emplace_back(d.p50 * d.count, f);
    std::sort(heavy.begin(), heavy.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t i = 0; i < heavy.size() && i < 5; ++i)
        lines.push_back(fmt::format("  {}: {}", heavy[i].second, dist_text(c.callback_by_function.at(heavy[i].second))));
    r.text = fmt::format("{}", fmt::join(lines, "\n"));

    ordered_json functions = ordered_json::object();
    for (const auto& [f, d] : c.callback_by_function) functions[f] = dist_json(d);
    r.json = ordered_json::object();
    r.json["replaced"] = std::move(replaced);
    r.json["kept"] = std::move(kept);
    r.json["callback_by_function"] = r.by_function;
    r.json["callbacks"] = dist_json(c.callbacks);
    r.json["functions"] = std::move(functions);
    r.json["softirq_runs"] = dist_json(c.softirq_runs);
    r.json["run_overhead"] = dist_json(c.run_overhead);
    r.json["expiry_gaps"] = dist_json(c.expiry_gaps);
    r.json["per_expiry"] = dist_json(c.per_expiry);
    r.json["broken_pairs"] = c.broken_pairs;
    return r;
}

} // namespace timersim::cli
