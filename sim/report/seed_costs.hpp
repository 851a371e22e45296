// The seeds' designs' own figures in the run and compare reports: Varghese &
// Lauck's START/STOP/PER_TICK/EXPIRY counts (the paper's unit: list
// elements and slots visited) beside the measured (simulated) cost, and the
// garbage netty and cog hold for cancelled timers. Designs that count none
// of this (classic, modern, heap) get nothing, so their reports are as
// they were.
#pragma once

#include "sim/machine/engine_run.hpp"

#include <string>

namespace timersim {

// The text section of `timersim run`, or "" for a design without these figures.
std::string seed_costs_text(const RunResult& r, const CpuMetrics& m);
// `, "paper_costs": {...}, "list_steps": N, "garbage": {...}` (leading comma)
// for a JSON object, or "".
std::string seed_costs_json(const RunResult& r, const CpuMetrics& m);

} // namespace timersim
