#include "sim/report/relative_summary.hpp"

#include "sim/report/format_time.hpp"
#include "sim/report/json.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

namespace timersim {

namespace {

// "the heap", "the modern wheel", "wheel:rfc-2015" (a spec names itself).
std::string design_phrase(Design d, const std::string& name) {
    if (d == Design::heap) return "the heap";
    if (d == Design::wheel) return name;
    return fmt::format("the {} wheel", name);
}
std::string design_noun(Design d, const std::string& name) { return design_phrase(d, name) + "'s"; }

} // namespace

std::optional<RelativeSummary> relative_summary(const Comparison& comparison) {
    const auto& runs = comparison.runs;
    if (runs.size() < 2) return std::nullopt;
    std::size_t ref = 0;
    for (std::size_t i = 1; i < runs.size(); ++i)
        if (runs[i].total.softirq_work_ns < runs[ref].total.softirq_work_ns) ref = i;
    const CpuMetrics& r = runs[ref].total;
    RelativeSummary s;
    s.reference = runs[ref].design;
    s.reference_name = design_name(runs[ref]);
    s.reference_softirq_ns = r.softirq_work_ns;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (i == ref) continue;
        const CpuMetrics& m = runs[i].total;
        RelativeRow row;
        row.design = runs[i].design;
        row.name = design_name(runs[i]);
        if (r.softirq_work_ns > 0)
            row.softirq_ratio = static_cast<double>(m.softirq_work_ns) / static_cast<double>(r.softirq_work_ns);
        if (m.fired > 0 && r.fired > 0)
            row.p99_diff_jiffies = m.error_jiffies.percentile(99) - r.error_jiffies.percentile(99);
        s.others.push_back(row);
    }
    return s;
}

std::string relative_summary_text(const Comparison& comparison) {
    const auto s = relative_summary(comparison);
    if (!s) return "";
    std::string out = fmt::format("\nSummary: {} spent the least time in the timer softirq ({})\n",
                                  design_phrase(s->reference, s->reference_name),
                                  format_ns(static_cast<std::int64_t>(s->reference_softirq_ns)));
    for (const RelativeRow& row : s->others) {
        const std::string ratio =
            row.softirq_ratio ? fmt::format("{:.2f}x {} softirq time", *row.softirq_ratio, design_noun(s->reference, s->reference_name))
                              : fmt::format("softirq time n/a ({} is 0)", design_noun(s->reference, s->reference_name));
        std::string error;
        if (!row.p99_diff_jiffies) {
            error = "p99 error n/a (no timer fired)";
        } else if (*row.p99_diff_jiffies == 0) {
            error = "the same p99 error";
        } else {
            const std::int64_t d = *row.p99_diff_jiffies;
            const auto a = static_cast<Jiffies>(d < 0 ? -d : d);
            error = fmt::format("p99 error {} j {}", a, d > 0 ? "later" : "earlier");
        }
        out += fmt::format("  {:<8} {}, {}\n", fmt::format("{}:", row.name), ratio, error);
    }
    return out;
}

ordered_json relative_summary_json(const Comparison& comparison) {
    const auto s = relative_summary(comparison);
    if (!s) return nullptr;
    ordered_json designs = ordered_json::array();
    for (const RelativeRow& row : s->others) {
        ordered_json o = ordered_json::object();
        o["name"] = row.name;
        o["softirq_ratio"] = json_or_null(row.softirq_ratio.has_value(), row.softirq_ratio.value_or(0));
        o["p99_error_diff_jiffies"] = json_or_null(row.p99_diff_jiffies.has_value(), row.p99_diff_jiffies.value_or(0));
        designs.push_back(std::move(o));
    }
    ordered_json summary = ordered_json::object();
    summary["reference"] = s->reference_name;
    summary["reference_softirq_ns"] = s->reference_softirq_ns;
    summary["designs"] = std::move(designs);
    return summary;
}

} // namespace timersim
