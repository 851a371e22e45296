// How every command that runs the machine (run, compare, gen, a sweep's
// cells) turns what the user asked for into a run: the command fills a
// RunRequest of plain values from its options, plan_run() resolves the
// clock once (a trace's own, else --hz), fits the machine to the workload
// (the clock, a trace's CPUs and the costs measured from it), fixes the run
// length at that clock and builds the workload. One function, so the
// commands cannot drift apart in how a run is set up, and HZ only flows
// down from here.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "workloads/generators/generator_params.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "wheel/core/clock.hpp"

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
    nlohmann::ordered_json params_json; // GeneratorWorkload::params
};

// A trace read into memory and described; its clock and CPUs are its own.
struct TraceRequest {
    WorkloadSpec spec;
    Clock clock; // its header's, or the HZ its kernel text shows
    // Its last event plus time for the timers it armed to fire: the run's
    // length when none is asked for.
    std::uint64_t natural_ticks = 0;
    unsigned cpus = 1;
    // --machine recorded: the machine the kernel trace was recorded on.
    std::shared_ptr<const RecordedMachine> recorded;
    // Cost model fields measured from the trace (--costs-from-trace).
    std::vector<std::pair<std::uint64_t CostModel::*, std::uint64_t>> costs;
    // A kernel trace: the timer design its kernel ran, where its version
    // tells (kernel_version.hpp).
    std::optional<KernelTimerEra> kernel_era;
    // Its kernel is known to be before 4.2: a classic slot runs oldest first.
    bool kernel_slots_oldest_first = false;
};

struct RunRequest {
    MachineConfig machine; // every setting but the clock and the run length (hz, start_jiffies and ticks are set here)
    unsigned hz = 0;       // --hz (or its default): the clock unless a trace has its own
    RunLength length;
    double default_duration_s = 0; // without a length asked for or a trace's own
    bool cpus_given = false;       // --cpus given: a trace's CPU count does not override it
    std::variant<GeneratorRequest, TraceRequest> workload;
};

struct RunPlan {
    Clock clock;
    MachineConfig machine; // hz and start_jiffies: the clock's
    WorkloadSpec workload;
};

// The run's clock: a trace's own, else a machine booted at `hz` (--hz).
Clock resolve_clock(unsigned hz, const std::variant<GeneratorRequest, TraceRequest>& workload);

// The machine runs at the resolved clock; a trace also sets its CPU count
// unless --cpus was given, and its measured costs replace the cost model's.
// The run length: the one asked for at the clock's HZ, else a trace's
// natural length, else the default duration. Throws std::invalid_argument
// naming the option at fault.
RunPlan plan_run(RunRequest request);

} // namespace timersim
