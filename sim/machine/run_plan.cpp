#include "sim/machine/run_plan.hpp"

#include "workloads/generators/generator_catalog.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace timersim {

namespace {

// The longest run a user may ask for.
constexpr std::uint64_t kMaxTicks = 1'000'000'000ull;

} // namespace

std::optional<std::uint64_t> requested_ticks(const RunLength& length, unsigned hz) {
    if (length.ticks && length.duration_s)
        throw std::invalid_argument("--duration and --ticks: give one or the other");
    if (length.ticks) {
        const std::uint64_t ticks = *length.ticks;
        if (ticks < 1 || ticks > kMaxTicks)
            throw std::invalid_argument(fmt::format("--ticks: must be 1..1e9, got {}", ticks));
        return ticks;
    }
    if (length.duration_s) {
        const double duration = *length.duration_s;
        if (!(duration > 0) || duration * hz > static_cast<double>(kMaxTicks) || std::llround(duration * hz) < 1)
            throw std::invalid_argument(
                fmt::format("--duration: must be at least one tick and at most 1e9 ticks, got {}", duration));
        return static_cast<std::uint64_t>(std::llround(duration * hz));
    }
    return std::nullopt;
}

Clock resolve_clock(unsigned hz, const std::variant<GeneratorRequest, TraceRequest>& workload) {
    if (const auto* trace = std::get_if<TraceRequest>(&workload)) return trace->clock;
    return boot_clock(hz);
}

RunPlan plan_run(RunRequest request) {
    const Clock clock = resolve_clock(request.hz, request.workload);
    RunPlan plan{clock, std::move(request.machine), {}};
    MachineConfig& machine = plan.machine;
    machine.hz = clock.hz;
    machine.start_jiffies = clock.start_jiffies;
    std::optional<std::uint64_t> natural_ticks;
    if (auto* trace = std::get_if<TraceRequest>(&request.workload)) {
        // A trace recorded on N CPUs replays on N unless the user says otherwise.
        if (trace->cpus > machine.cpus && !request.cpus_given) {
            if (trace->cpus > kMaxRequestedCpus)
                throw std::invalid_argument(
                    fmt::format("--cpus: the trace uses {} CPUs, more than the {} the machine can have", trace->cpus,
                                kMaxRequestedCpus));
            machine.cpus = trace->cpus;
        }
        for (const auto& [field, ns] : trace->costs) machine.costs.*field = ns;
        machine.recorded = trace->recorded;
        natural_ticks = trace->natural_ticks;
    }
    if (machine.numa_nodes < 1 || machine.numa_nodes > machine.cpus)
        throw std::invalid_argument(
            fmt::format("--numa-nodes: must be 1..{} (the CPUs), got {}", machine.cpus, machine.numa_nodes));
    machine.ticks = requested_ticks(request.length, clock.hz)
                        .value_or(natural_ticks.value_or(
                            static_cast<std::uint64_t>(request.default_duration_s * clock.hz)));
    if (auto* trace = std::get_if<TraceRequest>(&request.workload)) {
        plan.workload = std::move(trace->spec);
    } else {
        auto& generators = std::get<GeneratorRequest>(request.workload);
        plan.workload = {.name = generators.list,
                         .description = std::move(generators.description),
                         .params = std::move(generators.params_json),
                         .factory = workload_list_factory(generators.list, generators.params, machine.ticks,
                                                          clock.hz, machine.tick_jitter_ns)};
    }
    return plan;
}

} // namespace timersim
