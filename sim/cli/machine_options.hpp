// The simulated machine's options, shared by every command that runs the
// engine (run, compare): HZ, CPUs, NOHZ idle, ksoftirqd latency, tick jitter,
// the softirq's expiry bound, the classic wheel's slack and geometry, the
// cost model, and the run length. Declared and validated in one place so
// `run` and `compare` spell, document and check them the same way.
#pragma once

#include "sim/machine/engine_run.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>

namespace timersim::cli {

// --cpus accepts 1..kMaxMachineCpus.
inline constexpr unsigned kMaxMachineCpus = 256;

// Adds --hz, --duration, --ticks, --cpus, --nohz, --ksoftirqd-delay-ns,
// --tick-jitter-ns, --jitter-seed, --max-expiries-per-softirq, --slack,
// --base-small, --zero-cost and one --cost-<what>-ns per CostModel field.
// `default_duration_s` is what the help says the run lasts without
// --duration or --ticks.
void add_machine_options(boost::program_options::options_description& options, double default_duration_s);

// Every machine setting but the run length (MachineConfig::ticks is left at
// its default): that may depend on the workload (a trace's own length).
// Throws UsageError naming the option on a bad value.
MachineConfig machine_config(const boost::program_options::variables_map& vm);

// The run length from --duration or --ticks at `hz`; nullopt when neither
// was given. Throws UsageError naming the option on a bad value, or when
// both are given.
std::optional<std::uint64_t> run_length_option(const boost::program_options::variables_map& vm, unsigned hz);

} // namespace timersim::cli
