// How far a replay of a kernel trace reproduces the fires the kernel
// recorded (RunResult::kernel_fires, workloads/traces/kernel/kernel_fires.hpp),
// and the kernel itself as recorded, a column beside the designs': the line
// every run and compare report of a kernel trace prints, the kernel's column
// and by-function table, and their JSON and CSV forms. A reader sees at once
// how far to trust the counterfactual columns: only a replay that gives back
// the recording kernel's fires makes the other designs' figures a comparison
// on the same machine.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "sim/machine/error_histogram.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace timersim {

// "replay of modern reproduces 221 of 1118 fires the kernel recorded on the
// same jiffy and CPU (19.8%); 44.3% of its 499 fires are the kernel's", then
// the fires no replay can make, if any, and kernel_as_recorded_text(). Empty
// without kernel fires.
std::string kernel_fires_text(const RunResult& r);

// The kernel's own fires: every timer_expire_entry, and the error (now -
// the expires of the timer's last timer_start) of those whose start the
// trace shows.
ErrorHistogram kernel_error_histogram(const FireAgreement& a);

// "kernel (as recorded): N fires, by CPU: CPU 0 N, ...; error (fired -
// requested) in jiffies over M fires: mean .., p50 .., p90 .., p99 ..,
// p99.9 .., max ..[, K early]".
std::string kernel_as_recorded_text(const FireAgreement& a);

// Where CPUs lost events (a.lost_history.any()): "lost history (left out,
// as validate leaves it out): N lines [and M sequences the kernel cannot
// print] [and R re-placements of validate's wheel, too far behind] say
// (show) CPUs .. lost events; K of the kernel's fires fall in it, and
// `replay_fires`".
std::string lost_history_text(const FireAgreement& a, std::string_view replay_fires);

// "Kernel (as recorded) by function": the `rows` functions the kernel fired
// most (0: all), each with its fires and its error p50, p99 and max in
// jiffies. Empty without kernel fires.
std::string kernel_by_function_text(const FireAgreement& a, std::size_t rows);

// {"kernel_fires", "replay_fires", "same_jiffy_cpu", "recall", "precision",
// "kernel_fires_unreplayable", "unmodelled_kernel", (where inferred)
// "remote_inference", (where validate's replay refused to class lost
// history) "lost_history_unclassed", (where CPUs lost events)
// "lost_history": {lines, sequences, resets, cpus, kernel_fires,
// replay_fires}, "kernel_as_recorded": {"fires",
// "fires_by_cpu", "error_jiffies": {count, mean, min, p50, p90, p99, p99.9,
// max, early, histogram}, "by_function": [{name, fires, error_jiffies:
// {count, p50, p99, max}}] (most fires first)}}; null without kernel fires.
nlohmann::ordered_json kernel_fires_json(const RunResult& r);

// CSV rows "DESIGN,kernel_fires_...,VALUE" (compare's design,metric,value).
std::string kernel_fires_csv_rows(const std::string& design, const RunResult& r);

// The kernel's own column in compare's CSV: rows "kernel,METRIC,VALUE" with
// the designs' metric names (fired, early, error_mean_jiffies,
// error_pNN_jiffies, ...), for the metrics a recording shows.
std::string kernel_column_csv_rows(const FireAgreement& a);

} // namespace timersim
