// A comparison: one workload on the same simulated machine, once per timer
// queue (`timersim compare`). Each design gets a fresh machine and a fresh
// instance of the workload (a generator with the same seed, a trace with
// the same events), so operations that do not depend on fires come at the
// same simulated times for every design; what a workload does when a
// timer fires (re-arms, a trace's callback events) comes when that design
// fires it. Only the queue differs.
#pragma once

#include "sim/machine/design.hpp"
#include "sim/machine/engine_run.hpp"
#include "sim/machine/event_log.hpp"
#include "workloads/workload.hpp"

#include <optional>
#include <span>
#include <vector>

namespace timersim {

// One design of a comparison: a registry design, or the configurable wheel
// with its geometry (compare --design wheel:SPEC, several side by side).
struct ComparedDesign {
    Design design = Design::modern;
    std::optional<WheelSpec> wheel; // Design::wheel only
};

struct Comparison {
    std::vector<RunResult> runs; // one per design, in the order asked for
};

// Runs `workload` on `machine` for each design, up to `jobs` designs at a
// time on their own threads (the results do not depend on it). Throws
// std::invalid_argument for no design, a design given twice (a wheel: the
// same spec string twice), or a machine the engine cannot run. A wheel's
// run has its spec in config.wheel; reports name it by design_name(). With `events`, every design's enqueues, fires and
// cancels are logged (designs one after the other, each in time order; the
// designs then run one at a time).
Comparison compare_designs(std::span<const Design> designs, const MachineConfig& machine,
                           const WorkloadSpec& workload, const ProgressFn& progress = {},
                           EventLog* events = nullptr, unsigned jobs = 1);
Comparison compare_designs(std::span<const ComparedDesign> designs, const MachineConfig& machine,
                           const WorkloadSpec& workload, const ProgressFn& progress = {},
                           EventLog* events = nullptr, unsigned jobs = 1);

} // namespace timersim
