#include "sim/cli/commands.hpp"

#include <array>

namespace timersim::cli {

namespace {

constexpr std::array kCommands{
    Command{"compare", "run one workload through several designs (default: classic wheel, modern wheel, exact heap)", run_compare},
    Command{"run", "run a workload on the simulated machine: ticks, TIMER_SOFTIRQ, ksoftirqd and their cost", run_run},
    Command{"levels", "print the level tables of the kernel wheels or another design (granularity and range per level)", run_levels},
    Command{"explain", "explain where one timer lands in each wheel, why, and when it fires", run_explain},
    Command{"step", "watch the wheels tick by tick: buckets, clock, firings, cascades, cost", run_step},
    Command{"sweep", "run a grid of designs x HZ x workloads x parameters x seeds; Pareto charts; GNU parallel jobs", run_sweep},
    Command{"gen", "run a workload and record it as a timersim trace (replay it with run --trace)", run_gen},
    Command{"import", "convert a kernel timer trace (ftrace, trace-cmd, perf script, trace.dat) to a timersim trace", run_import},
    Command{"validate", "replay a real Linux 6.1 timer trace through the modern wheel and check it event by event", run_validate},
    Command{"version", "print the timersim version", run_version},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

const Command* find_command(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

}  // namespace timersim::cli
