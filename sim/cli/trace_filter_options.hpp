// --cpu, --function, --from/--to: the filter every trace-reading command
// takes (workloads/traces/layouts/trace_filter.hpp has the semantics), declared and
// checked in one place. `step` has its own --from (ticks), so there the
// window is --trace-from/--trace-to.
#pragma once

#include "workloads/traces/layouts/trace_filter.hpp"

#include <boost/program_options.hpp>

namespace timersim::cli {

struct FilterOptionNames {
    const char* from = "from";
    const char* to = "to";
};

void add_trace_filter_options(boost::program_options::options_description& options, FilterOptionNames names = {});

// The filter given (inactive if none). UsageError naming the option for a
// bad value, a window that ends before it starts, or (kernel_trace false)
// an @timestamp, which only kernel text has.
TraceFilter trace_filter_option(const boost::program_options::variables_map& vm, bool kernel_trace,
                                FilterOptionNames names = {});

// A filter that kept none of a trace's events leaves nothing to replay,
// check or write: InputError (one line, exit 2) "FILE: --cpu 7 keeps none of its 3225 timer
// events (dropped 3225 by --cpu)". `what` names the events.
void require_kept(const TraceFilter& filter, const TraceFilterCounts& counts, const std::string& file,
                  std::string_view what);

} // namespace timersim::cli
