// The seeds' designs' own figures in the run and compare reports: Varghese &
// Lauck's START/STOP/PER_TICK/EXPIRY counts (the paper's unit: list
// elements and slots visited) beside the measured (simulated) cost, and the
// garbage netty and cog hold for cancelled timers. Designs that count none
// of this (classic, modern, heap) get nothing, so their reports are as
// they were.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "sim/report/json.hpp"

#include <string>

namespace timersim {

// The text section of `timersim run`, or "" for a design without these figures.
std::string seed_costs_text(const RunResult& r, const CpuMetrics& m);
// Adds "paper_costs": {...}, "list_steps": N and "garbage": {...} to a
// JSON report's "counters", or nothing for a design without these figures.
void add_seed_costs(ordered_json& counters, const RunResult& r, const CpuMetrics& m);

} // namespace timersim
