#include "sim/report/kernel_fires_report.hpp"

#include "sim/report/json.hpp"
#include "sim/report/percentiles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace timersim {

namespace {

std::string percent(double share) { return fmt::format("{:.1f}%", share * 100.0); }

ErrorHistogram histogram_of(const std::map<std::int64_t, std::uint64_t>& counts) {
    ErrorHistogram h;
    for (const auto& [value, n] : counts) h.add(value, n);
    return h;
}

// Functions by fires, most first (then by name).
std::vector<std::pair<std::string, const FireAgreement::KernelFunction*>> by_fires(const FireAgreement& a) {
    std::vector<std::pair<std::string, const FireAgreement::KernelFunction*>> v;
    for (const auto& [name, f] : a.kernel_by_function) v.emplace_back(name, &f);
    std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second->fires > y.second->fires; });
    return v;
}

} // namespace

ErrorHistogram kernel_error_histogram(const FireAgreement& a) { return histogram_of(a.kernel_error_jiffies); }

std::string kernel_fires_text(const RunResult& r) {
    if (!r.kernel_fires) return "";
    const FireAgreement& a = *r.kernel_fires;
    std::string out = fmt::format(
        "replay of {} reproduces {} of {} fires the kernel recorded on the same jiffy and CPU ({}); {} of its {} "
        "fires are the kernel's",
        design_name(r), a.same_jiffy_cpu, a.kernel_fires, percent(a.recall()), percent(a.precision()), a.replay_fires);
    if (a.kernel_fires_unreplayable)
        out += fmt::format(" ({} more kernel fires are of timers no replayed event arms)", a.kernel_fires_unreplayable);
    if (!a.unmodelled_kernel.empty()) out += "\n" + a.unmodelled_kernel;
    if (!a.remote_inference.empty()) out += "\n" + a.remote_inference;
    if (!a.lost_history_unclassed.empty()) out += "\n" + a.lost_history_unclassed;
    if (a.lost_history.any()) out += "\n" + lost_history_text(a, fmt::format("{} of the replay's", a.lost_history.replay_fires));
    return out + "\n" + kernel_as_recorded_text(a) + "\n";
}

std::string lost_history_text(const FireAgreement& a, std::string_view replay_fires) {
    const FireAgreement::LostHistory& l = a.lost_history;
    std::vector<std::string> evidence;
    if (l.lines) evidence.push_back(fmt::format("{} {}", l.lines, l.lines == 1 ? "line" : "lines"));
    if (l.sequences)
        evidence.push_back(fmt::format("{} sequence{} the kernel cannot print", l.sequences, l.sequences == 1 ? "" : "s"));
    if (l.resets)
        evidence.push_back(
            fmt::format("{} re-placement{} of validate's wheel, too far behind", l.resets, l.resets == 1 ? "" : "s"));
    const bool one = l.lines + l.sequences + l.resets == 1;
    const bool said = !l.sequences && !l.resets; // lines only
    return fmt::format("lost history (left out, as validate leaves it out): {} {} CPU{} {} lost events; {} of "
                       "the kernel's fires fall in it, and {}",
                       fmt::join(evidence, " and "), said ? (one ? "says" : "say") : (one ? "shows" : "show"),
                       l.cpus.size() == 1 ? "" : "s", fmt::join(l.cpus, ", "), l.kernel_fires, replay_fires);
}

std::string kernel_as_recorded_text(const FireAgreement& a) {
    const ErrorHistogram h = kernel_error_histogram(a);
    std::vector<std::string> cpus;
    for (std::size_t c = 0; c < a.kernel_fires_by_cpu.size(); ++c)
        cpus.push_back(fmt::format("CPU {} {}", c, a.kernel_fires_by_cpu[c]));
    const std::uint64_t early = h.count_below(0);
    return fmt::format("kernel (as recorded): {} fires, by CPU: {}; error (fired - requested) in jiffies over {} fires: "
                       "mean {:.3f}, p50 {}, p90 {}, p99 {}, p99.9 {}, max {}{}",
                       a.kernel_fires_total, fmt::join(cpus, ", "), h.total(), h.mean(), h.percentile(50),
                       h.percentile(90), h.percentile(99), h.percentile(99.9), h.max(),
                       early ? fmt::format(", {} early", early) : std::string());
}

std::string kernel_by_function_text(const FireAgreement& a, std::size_t rows) {
    if (a.kernel_by_function.empty()) return "";
    const auto functions = by_fires(a);
    const std::size_t shown = rows == 0 ? functions.size() : std::min(rows, functions.size());
    std::string out = shown == functions.size()
                          ? std::string("Kernel (as recorded) by function\n")
                          : fmt::format("Kernel (as recorded) by function: the {} of {} it fired most\n", shown,
                                        functions.size());
    out += "     fired  p50 j  p99 j  max j  function\n";
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& [name, f] = functions[i];
        const ErrorHistogram h = histogram_of(f->error_jiffies);
        const auto cell = [&](double p) { return h.empty() ? std::string("n/a") : fmt::format("{}", h.percentile(p)); };
        out += fmt::format("{:>10} {:>6} {:>6} {:>6}  {}\n", f->fires, cell(50), cell(99), cell(100), name);
    }
    return out;
}

nlohmann::ordered_json kernel_fires_json(const RunResult& r) {
    if (!r.kernel_fires) return nullptr;
    const FireAgreement& a = *r.kernel_fires;
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    o["kernel_fires"] = a.kernel_fires;
    o["replay_fires"] = a.replay_fires;
    o["same_jiffy_cpu"] = a.same_jiffy_cpu;
    o["recall"] = a.recall();
    o["precision"] = a.precision();
    o["kernel_fires_unreplayable"] = a.kernel_fires_unreplayable;
    o["unmodelled_kernel"] = a.unmodelled_kernel.empty() ? nlohmann::ordered_json(nullptr)
                                                         : nlohmann::ordered_json(a.unmodelled_kernel);
    // Only where inferred: other traces' documents stay as they were.
    if (!a.remote_inference.empty()) o["remote_inference"] = a.remote_inference;
    if (!a.lost_history_unclassed.empty()) o["lost_history_unclassed"] = a.lost_history_unclassed;
    // Only where the trace lost events, likewise.
    if (a.lost_history.any())
        o["lost_history"] = {{"lines", a.lost_history.lines},
                             {"sequences", a.lost_history.sequences},
                             {"resets", a.lost_history.resets},
                             {"cpus", a.lost_history.cpus},
                             {"kernel_fires", a.lost_history.kernel_fires},
                             {"replay_fires", a.lost_history.replay_fires}};
    nlohmann::ordered_json kernel = nlohmann::ordered_json::object();
    kernel["fires"] = a.kernel_fires_total;
    kernel["fires_by_cpu"] = a.kernel_fires_by_cpu;
    // Where the run's remote expiry figures are (modern-6.9), the kernel's.
    if (reports_remote_expiry(r)) kernel["remote_expiries"] = a.kernel_remote_expiries;
    const ErrorHistogram h = kernel_error_histogram(a);
    nlohmann::ordered_json error = nlohmann::ordered_json::object();
    error["count"] = h.total();
    error["mean"] = h.mean();
    error["min"] = h.min();
    for (double p : kPercentiles) error[percentile_name(p)] = h.percentile(p);
    error["early"] = h.count_below(0);
    nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
    for (const auto& [value, n] : h.counts()) histogram.push_back({value, n});
    error["histogram"] = std::move(histogram);
    kernel["error_jiffies"] = std::move(error);
    nlohmann::ordered_json functions = nlohmann::ordered_json::array();
    for (const auto& [name, f] : by_fires(a)) {
        const ErrorHistogram fh = histogram_of(f->error_jiffies);
        nlohmann::ordered_json e = {{"count", fh.total()}};
        if (!fh.empty()) {
            e["p50"] = fh.percentile(50);
            e["p99"] = fh.percentile(99);
            e["max"] = fh.max();
        }
        functions.push_back({{"name", name}, {"fires", f->fires}, {"error_jiffies", std::move(e)}});
    }
    kernel["by_function"] = std::move(functions);
    o["kernel_as_recorded"] = std::move(kernel);
    return o;
}

std::string kernel_fires_csv_rows(const std::string& design, const RunResult& r) {
    if (!r.kernel_fires) return "";
    const FireAgreement& a = *r.kernel_fires;
    std::string out;
    const auto row = [&](const char* metric, auto value) { out += fmt::format("{},{},{}\n", design, metric, value); };
    row("kernel_fires", a.kernel_fires);
    row("kernel_fires_same_jiffy_cpu", a.same_jiffy_cpu);
    row("kernel_fires_recall", a.recall());
    row("kernel_fires_precision", a.precision());
    row("kernel_fires_unreplayable", a.kernel_fires_unreplayable);
    if (a.lost_history.any()) {
        row("kernel_fires_lost_history", a.lost_history.kernel_fires);
        row("replay_fires_lost_history", a.lost_history.replay_fires);
    }
    return out;
}

std::string kernel_column_csv_rows(const FireAgreement& a) {
    const ErrorHistogram h = kernel_error_histogram(a);
    std::string out;
    const auto row = [&](const std::string& metric, auto value) { out += fmt::format("kernel,{},{}\n", metric, value); };
    row("fired", a.kernel_fires_total);
    row("early", h.count_below(0));
    if (h.empty()) return out;
    row("error_mean_jiffies", json_number(h.mean()));
    row("error_min_jiffies", h.min());
    for (double p : kPercentiles) row("error_" + percentile_name(p) + "_jiffies", h.percentile(p));
    return out;
}

} // namespace timersim
