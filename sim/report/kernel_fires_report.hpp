// How far a replay of a kernel trace reproduces the fires the kernel
// recorded (RunResult::kernel_fires, workloads/traces/kernel/kernel_fires.hpp):
// the line every run and compare report of a kernel trace prints, and its
// JSON and CSV forms. A reader sees at once how far to trust the
// counterfactual columns: only a replay that gives back the recording
// kernel's fires makes the other designs' figures a comparison on the same
// machine.
#pragma once

#include "sim/machine/engine_run.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace timersim {

// "replay of modern reproduces 221 of 1118 fires the kernel recorded on the
// same jiffy and CPU (19.8%); 44.3% of its 499 fires are the kernel's", then
// the fires no replay can make, if any. Empty without kernel fires.
std::string kernel_fires_text(const RunResult& r);

// "kernel (as recorded): fires by CPU: CPU 0 N, ...; error (fired -
// requested) in jiffies over M fires: p50 .., p90 .., p99 .., max ..": the
// kernel's own fires, for a column's worth of comparison with each design.
std::string kernel_as_recorded_text(const FireAgreement& a);

// {"kernel_fires", "replay_fires", "same_jiffy_cpu", "recall", "precision",
// "kernel_fires_unreplayable", "kernel_as_recorded": {"fires_by_cpu",
// "error_jiffies": {count, p50, p90, p99, max}}}; null without kernel fires.
nlohmann::ordered_json kernel_fires_json(const RunResult& r);

// CSV rows "DESIGN,kernel_fires_...,VALUE" (compare's design,metric,value).
std::string kernel_fires_csv_rows(const std::string& design, const RunResult& r);

} // namespace timersim
