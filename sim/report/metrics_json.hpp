// The parts of a run's metrics that the run and compare JSON reports (and
// the group table's) share, as values for write_json() (sim/report/json.hpp).
#pragma once

#include "sim/machine/error_histogram.hpp"
#include "sim/machine/log_histogram.hpp"
#include "sim/report/json.hpp"
#include "softirq/cost_model.hpp"
#include "wheel/core/timer_queue.hpp"

namespace timersim {

// {"count", "mean", "min", "p50", "p90", "p99", "p99.9", "max"} of an error
// histogram in jiffies; all but count null when it is empty.
ordered_json error_stats_json(const ErrorHistogram& h);
// {"count", "mean", "min", "p50" .. "max"} of a log2 histogram (ns), all but
// count null when it is empty; "max" is the top bucket's bound unless
// `exact_max`, which gives the largest value itself (the compare report).
ordered_json log2_stats_json(const Log2Histogram& h, bool exact_max);
// Every error with its count, [[error, count], ...], ascending.
ordered_json error_histogram_json(const ErrorHistogram& h);
// "cost_model_ns": the ns charged per piece of timer work.
ordered_json cost_model_json(const CostModel& k);
// "counters": the queue's operation counts, enqueues to peak_pending (the
// seeds' own figures are added by add_seed_costs(), seed_costs.hpp).
ordered_json queue_counters_json(const QueueCounters& q);

} // namespace timersim
