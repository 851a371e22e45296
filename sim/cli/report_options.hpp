// The report options run and compare share: --by (timers by function, CPU
// or wheel level) and --hist with --bucket-size, --entries and --hist-unit
// (the precision error as an rtla-style per-CPU histogram). Declared and
// checked in one place so both commands spell them the same.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "sim/report/latency_histogram_report.hpp"

#include <boost/program_options.hpp>

#include <cstddef>
#include <optional>

namespace timersim::cli {

void add_report_options(boost::program_options::options_description& options);

struct ReportChoice {
    bool by_given = false;                  // --by: every group, and CSV is the group table
    std::size_t group_rows = 10;            // rows of the text's group table (0: all)
    std::optional<HistogramOptions> hist;   // --hist: the report is the histogram
};

// Checks the options against `format` (--hist writes its own text layout)
// and sets what the machine must collect for them (group_by, error_us).
ReportChoice report_choice(const boost::program_options::variables_map& vm, const std::string& format,
                           MachineConfig& machine);

} // namespace timersim::cli
