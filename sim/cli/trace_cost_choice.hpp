// --costs-from-trace: which cost model fields the costs measured from a
// kernel trace (workloads/traces/kernel/trace_costs.hpp) replace, and how the
// reports say so. An explicit --cost-*-ns wins over the trace.
#pragma once

#include "sim/report/json.hpp"
#include "softirq/cost_model.hpp"
#include "workloads/traces/kernel/trace_costs.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace timersim::cli {

struct TraceCostChoice {
    std::vector<std::pair<std::uint64_t CostModel::*, std::uint64_t>> fields; // field, its new value
    bool by_function = false; // each callback costs its function's p50
    std::string text;         // lines for the text report (no trailing newline)
    ordered_json json;        // an object, for the workload's "costs_from_trace"
};

TraceCostChoice trace_cost_choice(const TraceCosts& costs, const boost::program_options::variables_map& vm);

} // namespace timersim::cli
