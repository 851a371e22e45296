#include "sim/report/latency_histogram_report.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <vector>

namespace timersim {

namespace {

constexpr int kColumn = 10;

const ErrorHistogram& samples(const CpuMetrics& m, HistogramUnit unit) {
    return unit == HistogramUnit::us ? m.error_us : m.error_jiffies;
}

} // namespace

std::string format_latency_histogram(const RunResult& run, const HistogramOptions& o) {
    const std::size_t cpus = run.per_cpu.size();
    // Counts by bucket and CPU, and what falls outside.
    std::vector<std::vector<std::uint64_t>> counts(o.entries, std::vector<std::uint64_t>(cpus, 0));
    std::vector<std::uint64_t> under(cpus, 0);
    std::vector<std::uint64_t> over(cpus, 0);
    bool any_under = false;
    for (std::size_t c = 0; c < cpus; ++c) {
        for (const auto& [value, n] : samples(run.per_cpu[c], o.unit).counts()) {
            if (value < 0) {
                under[c] += n;
                any_under = true;
                continue;
            }
            const std::uint64_t bucket = static_cast<std::uint64_t>(value) / o.bucket_size;
            if (bucket >= o.entries)
                over[c] += n;
            else
                counts[bucket][c] += n;
        }
    }
    std::string out = fmt::format("# timersim latency histogram: {} design, {}\n", design_name(run),
                                  run.workload_name);
    if (o.unit == HistogramUnit::us)
        out += "# Time unit is microseconds (us): fire time minus the requested jiffy's tick time\n";
    else
        out += fmt::format("# Time unit is jiffies (1 j = {:g} us at HZ={}): fired jiffy minus requested expiry\n",
                           1e6 / run.config.hz, run.config.hz);
    out += fmt::format("# Duration: {} ticks, bucket size {}, entries {}\n", run.config.ticks, o.bucket_size,
                       o.entries);
    const auto line = [&](std::string_view label, auto&& cell) {
        out += fmt::format("{:<8}", label);
        for (std::size_t c = 0; c < cpus; ++c) out += fmt::format("{:>{}}", cell(c), kColumn);
        out += '\n';
    };
    out += "# Index";
    for (std::size_t c = 0; c < cpus; ++c) out += fmt::format("{:>{}}", fmt::format("CPU-{:03}", c), kColumn + (c == 0 ? 1 : 0));
    out += '\n';
    for (std::size_t b = 0; b < o.entries; ++b) {
        bool any = false;
        for (std::size_t c = 0; c < cpus; ++c) any = any || counts[b][c] != 0;
        if (!any) continue; // as rtla without --with-zeros
        line(fmt::format("{}", b * o.bucket_size), [&](std::size_t c) { return fmt::format("{}", counts[b][c]); });
    }
    if (any_under) line("under:", [&](std::size_t c) { return fmt::format("{}", under[c]); });
    line("over:", [&](std::size_t c) { return fmt::format("{}", over[c]); });
    line("count:", [&](std::size_t c) { return fmt::format("{}", samples(run.per_cpu[c], o.unit).total()); });
    const auto stat = [&](auto&& f) {
        return [&, f](std::size_t c) {
            const ErrorHistogram& h = samples(run.per_cpu[c], o.unit);
            return h.empty() ? std::string("-") : f(h);
        };
    };
    line("min:", stat([](const ErrorHistogram& h) { return fmt::format("{}", h.min()); }));
    line("avg:", stat([](const ErrorHistogram& h) { return fmt::format("{:.2f}", h.mean()); }));
    line("max:", stat([](const ErrorHistogram& h) { return fmt::format("{}", h.max()); }));
    return out;
}

} // namespace timersim
