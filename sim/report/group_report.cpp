#include "sim/report/group_report.hpp"

#include "sim/report/format_time.hpp"
#include "sim/report/json.hpp"
#include "sim/report/metrics_json.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>

namespace timersim {

namespace {

// The share of arms that ended in a cancel; none armed: no share.
std::optional<double> cancelled_share(const GroupMetrics& g) {
    if (g.arms == 0) return std::nullopt;
    return static_cast<double>(g.cancelled) / static_cast<double>(g.arms);
}

std::string error_text(const GroupMetrics& g, double p) {
    return g.fired == 0 ? std::string("n/a") : fmt::format("{}", g.error_jiffies.percentile(p));
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// The columns before the name (57 characters), and the name's room in 80.
constexpr const char* kRow = "  {:>8} {:>8} {:>6} {:>5} {:>5} {:>6} {:>9}  {}\n";
constexpr std::size_t kNameRoom = 80 - 57;

// The name last, as perf report has it; one longer than the text's 80
// columns allow is cut (JSON and CSV have it whole).
std::string fit_name(const std::string& name) {
    return name.size() <= kNameRoom ? name : name.substr(0, kNameRoom - 2) + "..";
}

std::string row_text(const std::string& name, const GroupMetrics& g) {
    const auto share = cancelled_share(g);
    return fmt::format(fmt::runtime(kRow), g.arms, g.fired, share ? fmt::format("{:.1f}%", *share * 100) : std::string("n/a"),
                       error_text(g, 50), error_text(g, 99), error_text(g, 100),
                       format_ns(static_cast<std::int64_t>(g.softirq_ns)), fit_name(name));
}

} // namespace

std::vector<std::size_t> group_order(const GroupTable& t) {
    std::vector<std::size_t> order(t.groups.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const GroupMetrics& x = t.groups[a];
        const GroupMetrics& y = t.groups[b];
        if (x.fired != y.fired) return x.fired > y.fired;
        if (x.arms != y.arms) return x.arms > y.arms;
        return t.names[a] < t.names[b];
    });
    return order;
}

std::string group_table_text(const GroupTable& t, std::size_t limit, std::string_view title_suffix) {
    const auto order = group_order(t);
    const std::size_t shown = limit == 0 ? order.size() : std::min(limit, order.size());
    const std::string by(to_string(t.by));
    std::string out;
    if (shown < order.size())
        out += fmt::format("Timers by {}{}: the {} of {} that fired most (--by {}: all)\n", by, title_suffix, shown,
                           order.size(), by);
    else
        out += fmt::format("Timers by {}{}\n", by, title_suffix);
    if (t.no_levels) out += "  (the heap has no levels: every timer is in one group)\n";
    out += fmt::format(fmt::runtime(kRow), "armed", "fired", "cancel", "p50 j", "p99 j", "max j", "softirq", by);
    if (order.empty()) return out + "  (no timer was armed)\n";
    for (std::size_t i = 0; i < shown; ++i) out += row_text(t.names[order[i]], t.groups[order[i]]);
    if (shown < order.size()) {
        GroupMetrics rest;
        for (std::size_t i = shown; i < order.size(); ++i) rest.merge(t.groups[order[i]]);
        out += row_text(fmt::format("({} more)", order.size() - shown), rest);
    }
    // Softirq time before and after the expiries (pass entries, scans that
    // found nothing), so that the column sums to the run's softirq time.
    out += fmt::format(fmt::runtime(kRow), "", "", "", "", "", "",
                       format_ns(static_cast<std::int64_t>(t.unattributed_softirq_ns)), "(no expiry)");
    return out;
}

ordered_json group_table_json(const GroupTable& t) {
    ordered_json groups = ordered_json::array();
    for (const std::size_t i : group_order(t)) {
        const GroupMetrics& g = t.groups[i];
        const ErrorHistogram& h = g.error_jiffies;
        const bool fired = g.fired > 0;
        ordered_json error = ordered_json::object();
        error["mean"] = json_or_null(fired, h.mean());
        error["min"] = json_or_null(fired, h.min());
        error["p50"] = json_or_null(fired, h.percentile(50));
        error["p99"] = json_or_null(fired, h.percentile(99));
        error["max"] = json_or_null(fired, h.max());
        error["histogram"] = error_histogram_json(h);
        const auto share = cancelled_share(g);
        ordered_json row = ordered_json::object();
        row["name"] = t.names[i];
        row["arms"] = g.arms;
        row["fired"] = g.fired;
        row["cancelled"] = g.cancelled;
        row["cancelled_share"] = json_or_null(share.has_value(), share.value_or(0));
        row["early"] = g.early;
        row["error_jiffies"] = std::move(error);
        row["softirq_ns"] = g.softirq_ns;
        groups.push_back(std::move(row));
    }
    ordered_json table = ordered_json::object();
    table["by"] = to_string(t.by);
    table["no_levels"] = t.no_levels;
    table["unattributed_softirq_ns"] = t.unattributed_softirq_ns;
    table["groups"] = std::move(groups);
    return table;
}

std::string group_csv_header() {
    return "design,by,group,arms,fired,cancelled,cancelled_share,early,error_p50_jiffies,error_p99_jiffies,"
           "error_max_jiffies,softirq_ns\n";
}

std::string group_csv_rows(std::string_view design, const GroupTable& t) {
    std::string out;
    for (const std::size_t i : group_order(t)) {
        const GroupMetrics& g = t.groups[i];
        const auto share = cancelled_share(g);
        const auto err = [&](double p) { return g.fired ? fmt::format("{}", g.error_jiffies.percentile(p)) : std::string(); };
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", design, to_string(t.by), csv_field(t.names[i]),
                           g.arms, g.fired, g.cancelled, share ? json_number(*share) : "", g.early, err(50), err(99),
                           err(100), g.softirq_ns);
    }
    // The softirq time no expiry caused, so that the column sums to the total.
    out += fmt::format("{},{},{},,,,,,,,,{}\n", design, to_string(t.by), csv_field("(no expiry)"),
                       t.unattributed_softirq_ns);
    return out;
}

} // namespace timersim
