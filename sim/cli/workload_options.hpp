// The workload options every workload-running command shares (run, compare,
// gen, step): `--workload NAME[,NAME...]` with the generators' parameters,
// or `--trace FILE` / `--ftrace FILE` to replay a recorded or kernel trace.
#pragma once

#include "sim/cli/memory_check.hpp"
#include "sim/machine/run_plan.hpp"

#include <boost/program_options.hpp>

#include <optional>
#include <string_view>
#include <variant>

namespace timersim::cli {

// Adds --workload, every generator parameter, --trace and --ftrace, the
// trace filters (trace_filter_options.hpp) and --costs-from-trace.
// `default_workload` is what --workload means when not given.
void add_workload_options(boost::program_options::options_description& options,
                          const char* default_workload = "tcp-retransmit,socket-timeouts");

// The workload the options chose, ready for the run plan, and what it needs
// of memory per design (generators; unknown for traces).
struct WorkloadChoice {
    std::variant<GeneratorRequest, TraceRequest> workload;
    MemoryEstimate memory;
};

// Validates the options (UsageError with the option's name on bad values;
// a trace's own errors as FILE:LINE: what (field)). `hz` is --hz, which a
// kernel trace's HZ is checked against when given.
WorkloadChoice workload_choice(const boost::program_options::variables_map& vm, unsigned hz);

struct PlannedRun {
    RunPlan plan;
    MemoryEstimate memory;
    std::optional<KernelTimerEra> kernel_era; // TraceRequest::kernel_era
    bool kernel_slots_oldest_first = false;   // TraceRequest::kernel_slots_oldest_first
};

// The design that is the recording kernel's: classic up to 4.7, modern
// from 4.8 to 6.8, modern-6.9 from 6.9 (a default --design for a kernel
// trace of a known era).
std::string_view kernel_design_name(KernelTimerEra era) noexcept;

// The recording kernel's rules the classic wheel takes for a replay of
// its trace. A kernel of the cascading era (up to 4.7) traces
// timer_start's expires after apply_slack(): replayed on the classic wheel
// with its slack again, a timer would land later than the kernel put it.
// So without --slack, a replay of such a trace has no slack
// (MachineConfig::classic_slack off). Before 4.2 a slot's timers run
// oldest first (MachineConfig::classic_oldest_first), as validate checks.
void use_traced_kernel_rules(const boost::program_options::variables_map& vm, const PlannedRun& run,
                             MachineConfig& config);
// The same for step, which builds its queues without a PlannedRun.
void use_traced_kernel_rules(const boost::program_options::variables_map& vm, std::optional<KernelTimerEra> kernel_era,
                             bool slots_oldest_first, std::optional<std::int64_t>& classic_slack,
                             bool& classic_oldest_first);

// The run a command's options ask for: `machine` (machine_config(), and the
// command's design) at the clock resolved from `hz` (--hz) and the workload
// the workload options chose, for --duration/--ticks or else a trace's own
// length or else `default_duration_s` (sim/machine/run_plan.hpp).
// UsageError naming the option at fault.
PlannedRun planned_run(const boost::program_options::variables_map& vm, MachineConfig machine, unsigned hz,
                       double default_duration_s);

} // namespace timersim::cli
