// The workload options every workload-running command shares (run, compare,
// gen, step): `--workload NAME[,NAME...]` with the generators' parameters,
// or `--trace FILE` / `--ftrace FILE` to replay a recorded or kernel trace.
#pragma once

#include "sim/cli/memory_check.hpp"
#include "sim/machine/engine_run.hpp"
#include "workloads/workload.hpp"
#include "workloads/traces/trace_event.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace timersim::cli {

// Adds --workload, every generator parameter, --trace and --ftrace, the
// trace filters (trace_filter_options.hpp) and --costs-from-trace.
// `default_workload` is what --workload means when not given.
void add_workload_options(boost::program_options::options_description& options,
                          const char* default_workload = "tcp-retransmit,socket-timeouts");

struct WorkloadChoice {
    WorkloadSpec spec;
    // A trace fixes the machine's clock (its HZ and start jiffies); a
    // generator leaves it to --hz.
    std::optional<TraceHeader> clock;
    // How long the workload wants to run when the user gives no duration:
    // a trace's last event plus time for its timers to drain; nullopt for
    // generators (the command's default applies).
    std::optional<std::uint64_t> natural_ticks;
    // A trace's CPUs (highest cpu= + 1); 0 for generators.
    unsigned cpus = 0;
    // What one design's run needs (generators; unknown for traces).
    MemoryEstimate memory;
    // --costs-from-trace: the cost model fields the trace replaces (those
    // not given explicitly with --cost-*-ns), applied by
    // fit_machine_to_workload().
    std::vector<std::pair<std::uint64_t CostModel::*, std::uint64_t>> costs;
};

// Validates the options (UsageError with the option's name on bad values;
// a trace's own errors as FILE:LINE: what (field)). `hz` is the machine's HZ
// from --hz, `ticks` the run length (generators stop scheduling after it).
WorkloadChoice workload_choice(const boost::program_options::variables_map& vm, unsigned hz, std::uint64_t ticks);

// Fits the machine to the chosen workload: a trace's HZ and start jiffies,
// and its CPUs unless --cpus was given; then the run length: --duration or
// --ticks at the final HZ, else the workload's natural length, else
// `default_duration_s`.
void fit_machine_to_workload(MachineConfig& machine, const WorkloadChoice& choice,
                             const boost::program_options::variables_map& vm, double default_duration_s);

} // namespace timersim::cli
