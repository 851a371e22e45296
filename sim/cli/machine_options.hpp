// The simulated machine's options, shared by every command that runs the
// engine (run, compare): HZ, CPUs, NOHZ idle, ksoftirqd latency, tick jitter,
// the softirq's expiry bound, the classic wheel's slack and geometry, the
// cost model, and the run length. Declared and validated in one place so
// `run` and `compare` spell, document and check them the same way.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "sim/machine/run_plan.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>

namespace timersim::cli {

// Adds --hz, --duration, --ticks, --cpus, --nohz, --ksoftirqd-delay-ns,
// --tick-jitter-ns, --jitter-seed, --max-expiries-per-softirq, --slack,
// --base-small, --zero-cost and one --cost-<what>-ns per CostModel field.
// `default_duration_s` is what the help says the run lasts without
// --duration or --ticks.
void add_machine_options(boost::program_options::options_description& options, double default_duration_s);

// Every machine setting but the clock and the run length (hz, start_jiffies
// and ticks are the run plan's: a trace has its own). `hz` is --hz
// (hz_option()), the tick period --tick-jitter-ns is checked against.
// Throws UsageError naming the option on a bad value.
MachineConfig machine_config(const boost::program_options::variables_map& vm, unsigned hz);

// --duration or --ticks as given, checked at `hz` (requested_ticks()):
// UsageError naming the option on a bad value, or when both are given.
RunLength run_length_option(const boost::program_options::variables_map& vm, unsigned hz);

} // namespace timersim::cli
