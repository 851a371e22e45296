// What `timersim step --cpus N` prints for one tick of the machine
// (sim/machine/machine_stepper.hpp): as text, a table with a row per CPU
// (its tick, its TIMER_SOFTIRQ, its bases' pending timers, its NOHZ state)
// and then what each CPU's softirq fired, a remote expiry marked "remote
// for CPU n"; as JSON Lines, one timersim.step.v1 frame per CPU
// (docs/output.md) with the CPU's fields and its modern-6.9 layout rows.
#pragma once

#include "sim/machine/machine_stepper.hpp"
#include "sim/report/step_report.hpp"

#include <string>
#include <vector>

namespace timersim {

// One frame: every CPU's part of one tick (JSON: with the CPUs' bases after it).
std::string render_cpus_text(const std::vector<CpuTick>& cpus, const View& v);
// A tick in which no CPU ticked, armed or fired: the text view draws a run
// of such ticks with the same table once, under cpus_quiet_title().
bool cpus_quiet(const std::vector<CpuTick>& cpus);
std::string cpus_quiet_title(const TickReport& first, const TickReport& last, const View& v);
std::string render_cpus_json(const std::vector<CpuTick>& cpus, const MachineStepper& machine, const View& v);

} // namespace timersim
