// How every command that runs the machine (run, compare, gen, a sweep's
// cells) turns what the user asked for into a run: the command fills a
// RunRequest of plain values from its options, plan_run() fits the machine
// to the workload (a trace's clock, its CPUs and the costs measured from
// it), fixes the run length and builds the workload. One function, so the
// commands cannot drift apart in how a run is set up.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "workloads/generators/generator_params.hpp"
#include "workloads/traces/trace_event.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace timersim {

// The CPUs a run may be asked for (--cpus, or a trace's own count): a
// plausible machine, below what the engine itself takes (kMaxMachineCpus).
inline constexpr unsigned kMaxRequestedCpus = 256;

// --duration or --ticks as given; neither: the workload's or the command's
// default length.
struct RunLength {
    std::optional<std::uint64_t> ticks;
    std::optional<double> duration_s;
};

// The run length in ticks at `hz`, nullopt when none was asked for. Throws
// std::invalid_argument naming the option (--ticks, --duration) for a
// length out of 1..1e9 ticks or for both given.
std::optional<std::uint64_t> requested_ticks(const RunLength& length, unsigned hz);

// Generators by name (--workload), already checked and described
// (workloads/generators/generator_parameters.hpp).
struct GeneratorRequest {
    std::string list;
    GeneratorParams params;
    std::string description;
    std::string json;
};

// A trace read into memory and described; its clock and CPUs are its own.
struct TraceRequest {
    WorkloadSpec spec;
    TraceHeader clock;
    // Its last event plus time for the timers it armed to fire: the run's
    // length when none is asked for.
    std::uint64_t natural_ticks = 0;
    unsigned cpus = 1;
    // Cost model fields measured from the trace (--costs-from-trace).
    std::vector<std::pair<std::uint64_t CostModel::*, std::uint64_t>> costs;
};

struct RunRequest {
    MachineConfig machine; // every setting but the run length (ticks is ignored)
    RunLength length;
    double default_duration_s = 0; // without a length asked for or a trace's own
    bool cpus_given = false;       // --cpus given: a trace's CPU count does not override it
    std::variant<GeneratorRequest, TraceRequest> workload;
};

struct RunPlan {
    MachineConfig machine;
    WorkloadSpec workload;
};

// A trace fixes the machine's HZ and start jiffies and, unless --cpus was
// given, its CPU count; its measured costs replace the cost model's. The run
// length: the one asked for at the final HZ, else a trace's natural length,
// else the default duration. Throws std::invalid_argument naming the option
// at fault.
RunPlan plan_run(RunRequest request);

} // namespace timersim
