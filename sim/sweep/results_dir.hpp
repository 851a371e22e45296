// A sweep's results directory: DIR/cells/ID.json, one cell's JSON line each
// (sweep_results.hpp), and DIR/results.csv over them. Cells are run into it
// on threads, found there again when a stopped sweep resumes, and merged
// into it from the lines emitted jobs printed elsewhere. Running a cell is
// the caller's (the CLI turns its line into a run of the machine).
#pragma once

#include "sim/sweep/sweep_grid.hpp"
#include "sim/sweep/sweep_results.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace timersim::sweep {

// DIR/cells/ID.json.
std::string cell_path(const std::string& dir, const std::string& id);

// The cell's line from DIR, if it is there and is this cell's (a damaged
// file or another cell's line: nullopt, so it runs again).
std::optional<CellRecord> done_cell(const std::string& dir, const Cell& cell);

// Creates DIR and DIR/cells; OutputError if it cannot.
void make_dirs(const std::string& dir);

// Writes DIR/results.csv over `records` and returns its path.
std::string write_results_csv(const std::string& dir, std::vector<CellRecord> records);

// A cell's JSON line (cell_json()); may throw, which stops the sweep.
using CellRunner = std::function<std::string(const Cell&)>;

// Runs the cells not yet in DIR on `jobs` threads, each written to DIR as it
// ends; `progress` gets the fraction done (under a lock). A failing cell
// stops the others from starting new ones and is rethrown.
void run_cells(const std::vector<const Cell*>& todo, const std::string& dir, unsigned jobs, const CellRunner& run_cell,
               const std::function<void(double)>& progress);

// Cell lines from files (one per line, as the emitted jobs print them) or
// from DIR/cells/*.json, sorted by id; the same id twice must be the same
// bytes. InputError for a file that cannot be opened, GridError for a line
// that is not a cell or an id given twice with different results.
std::vector<CellRecord> read_cells(const std::vector<std::string>& paths);

} // namespace timersim::sweep
