#include "sim/report/kernel_fires_report.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace timersim {

namespace {

std::string percent(double share) { return fmt::format("{:.1f}%", share * 100.0); }

} // namespace

std::string kernel_fires_text(const RunResult& r) {
    if (!r.kernel_fires) return "";
    const FireAgreement& a = *r.kernel_fires;
    std::string out = fmt::format(
        "replay of {} reproduces {} of {} fires the kernel recorded on the same jiffy and CPU ({}); {} of its {} "
        "fires are the kernel's",
        design_name(r), a.same_jiffy_cpu, a.kernel_fires, percent(a.recall()), percent(a.precision()), a.replay_fires);
    if (a.kernel_fires_unreplayable)
        out += fmt::format(" ({} more kernel fires are of timers no replayed event arms)", a.kernel_fires_unreplayable);
    return out + "\n" + kernel_as_recorded_text(a) + "\n";
}

std::string kernel_as_recorded_text(const FireAgreement& a) {
    const FireAgreement::Lateness& l = a.kernel_error_jiffies;
    std::vector<std::string> cpus;
    for (std::size_t c = 0; c < a.kernel_fires_by_cpu.size(); ++c)
        cpus.push_back(fmt::format("CPU {} {}", c, a.kernel_fires_by_cpu[c]));
    return fmt::format("kernel (as recorded): fires by CPU: {}; error (fired - requested) in jiffies over {} fires: p50 {}, "
                       "p90 {}, p99 {}, max {}",
                       fmt::join(cpus, ", "), l.count, l.p50, l.p90, l.p99, l.max);
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
    nlohmann::ordered_json kernel = nlohmann::ordered_json::object();
    kernel["fires_by_cpu"] = a.kernel_fires_by_cpu;
    const FireAgreement::Lateness& l = a.kernel_error_jiffies;
    kernel["error_jiffies"] = {{"count", l.count}, {"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"max", l.max}};
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
    return out;
}

} // namespace timersim
