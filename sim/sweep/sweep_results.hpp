// What `timersim sweep` keeps of a cell's run: one line of JSON (schema
// timersim.sweep-cell.v1), the same bytes whichever process or machine ran
// it, and the merged CSV of many cells.
//
//   {"schema": "timersim.sweep-cell.v1", "id": "...", "args": "--design ...",
//    "design": "wheel:rfc-2015", "hz": 250, "workload": "...", "seed": 1,
//    "options": "--connections 1000", "ticks": 2500, "fired": ..., "early": ...,
//    "late_jiffies": {"p50": .., "p99": .., "max": ..},
//    "late_ns": {"p50": .., "p99": .., "max": ..},
//    "timer_work_ns": .., "softirq_work_ns": .., "max_softirq_ns": ..,
//    "cascade_moves": .., "bytes_per_timer": ..}
//
// Lateness is fired - requested (the error histograms of the run report):
// jiffies exact, ns as the run report's percentiles (bucket upper bounds
// within 12.5 %, max exact).
#pragma once

#include "sim/sweep/sweep_grid.hpp"
#include "sim/machine/engine_run.hpp"

#include <string>
#include <vector>

namespace timersim::sweep {

inline constexpr const char* kSweepCellSchema = "timersim.sweep-cell.v1";

// The cell's JSON line, newline-terminated.
std::string cell_json(const Cell& cell, const RunResult& r);

// A parsed cell line: its id and args, and the raw bytes to write back.
struct CellRecord {
    std::string id, args, text;
    std::string csv_row; // its results.csv row
};
// Throws std::invalid_argument (what: the reason) for a line that is not a
// cell of this schema, or whose id does not match its args.
CellRecord parse_cell_record(const std::string& line);

// results.csv: a header, then one row per record, sorted by args.
std::string results_csv(std::vector<CellRecord> records);

} // namespace timersim::sweep
