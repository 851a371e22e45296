#include "sim/machine/engine_run.hpp"

#include "sim/machine/design_queues.hpp"
#include "wheel/core/clock.hpp"

#include <fmt/core.h>

#include <span>
#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

template <TimerQueue Q>
RunResult drive(const QueueParams& params, Design design, const MachineConfig& config, const WorkloadSpec& spec,
                const ProgressFn& progress, EventLog* events) {
    // One queue per CPU: the kernel's per-CPU timer base.
    std::vector<Q> queues;
    queues.reserve(config.cpus);
    for (unsigned c = 0; c < config.cpus; ++c) queues.push_back(make_queue<Q>(params));

    RunResult result;
    result.design = design;
    result.config = config;
    result.workload_name = spec.name;
    result.workload_description = spec.description;
    result.workload_params = spec.params;
    result.start_jiffies = queues.front().jiffies();
    result.bytes_per_timer = queues.front().bytes_per_timer();
    if constexpr (requires { Q::garbage_entry_bytes(); }) result.garbage_entry_bytes = Q::garbage_entry_bytes();
    const std::uint64_t window = config.series_window_ticks
                                     ? config.series_window_ticks
                                     : (config.ticks + kDefaultSeriesWindows - 1) / kDefaultSeriesWindows;
    const std::uint64_t windows = (config.ticks + window - 1) / window;
    result.series_window_ticks = window;
    EngineConfig engine_config = config; // the engine's part of the machine
    engine_config.series_window_ticks = window;
    engine_config.series_max_windows = static_cast<std::size_t>(windows);
    Engine<Q> engine(std::span<Q>(queues), engine_config);
    result.engine_bytes_per_timer = engine.bytes_per_timer();
    if (events)
        engine.set_event_log(events, design == Design::wheel && config.wheel ? to_string(*config.wheel)
                                                                          : std::string(to_string(design)));
    const std::unique_ptr<Workload> workload = spec.factory(engine);
    engine.set_workload(workload.get());
    constexpr std::uint64_t kChunk = 1024;
    for (std::uint64_t t = 0; t < config.ticks;) {
        t = std::min(config.ticks, t + kChunk);
        engine.run_ticks(t);
        if (progress) progress(static_cast<double>(t) / static_cast<double>(config.ticks));
    }
    result.end_ns = engine.now_ns();
    result.operations_past_end =
        workload->operations_past(tick_time_ns(config.ticks, config.hz) + config.tick_jitter_ns);
    result.kernel_fires = workload->kernel_fire_agreement();
    for (unsigned c = 0; c < config.cpus; ++c) result.per_cpu.push_back(engine.metrics(c));
    result.groups = engine.group_table();
    result.total = result.per_cpu.front();
    for (unsigned c = 1; c < config.cpus; ++c) result.total.merge(result.per_cpu[c]);
    // Every window, also those in which no softirq ran at all.
    result.series = engine.series();
    while (result.series.size() < windows)
        result.series.push_back(SeriesPoint{.start_ns = tick_time_ns(result.series.size() * window + 1, config.hz)});
    return result;
}

} // namespace

bool reports_remote_expiry(const RunResult& r) {
    return r.design == Design::modern_6_9 || r.total.remote_expiries != 0 || r.total.expired_by_remote != 0;
}

std::string design_name(const RunResult& r) {
    if (r.design == Design::wheel && r.config.wheel) return to_string(*r.config.wheel);
    return std::string(to_string(r.design));
}

RunResult run_machine(Design design, const MachineConfig& config, const WorkloadSpec& workload,
                      const ProgressFn& progress, EventLog* events) {
    const unsigned hz = config.hz;
    if (!valid_hz(hz)) throw std::invalid_argument(fmt::format("hz must be in 1..{}", kMaxHz));
    if (config.ticks == 0 || config.ticks > 10'000'000'000ull)
        throw std::invalid_argument("ticks must be 1..1e10");
    if (config.cpus < 1 || config.cpus > kMaxMachineCpus)
        throw std::invalid_argument(fmt::format("cpus must be 1..{}", kMaxMachineCpus));
    if (config.series_window_ticks &&
        (config.ticks + config.series_window_ticks - 1) / config.series_window_ticks > 1'000'000)
        throw std::invalid_argument("series_window_ticks gives more than 1e6 windows");
    const QueueParams params{
        .hz = hz,
        .start_jiffies = config.start_jiffies.value_or(initial_jiffies(hz)),
        .classic_geometry = config.classic_geometry,
        .classic_slack = config.classic_slack,
        .classic_oldest_first = config.classic_oldest_first,
        .wheel = design == Design::wheel && config.wheel ? std::optional(config.wheel->geometry(hz)) : std::nullopt,
    };
    return with_design_queue(design, params.wheel, [&]<TimerQueue Q>() {
        return drive<Q>(params, design, config, workload, progress, events);
    });
}

} // namespace timersim
