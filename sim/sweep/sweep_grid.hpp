// The grid of `timersim sweep`: designs x HZ x workloads x parameters x
// seeds, and its cells. A cell is a `timersim run` command line in a
// canonical order, so it means exactly what the same options mean to run,
// names itself (its id is a hash of that line) and travels as one argument
// (--cell) to another process or machine.
//
//   Grid g = parse_grid_file("grid.ini");      // or filled from options
//   for (const Cell& c : expand(g)) ...         // in grid order
//
// Grid file: one `key = value` per line, '#' comments; the keys are the
// sweep options without their dashes, and repeat where the option does:
//   design   = classic, modern, wheel:rfc-2015     (comma-separated)
//   hz       = 250, 1000
//   workload = tcp-retransmit, timer-storm+keepalive   ('+' runs generators together)
//   seed     = 1..3                                  (a list or a range)
//   param    = connections=1000,10000               (a run option swept; repeatable)
//   set      = cpus=2                                (a run option fixed; repeatable; `set = nohz` for a switch)
//   duration = 10                                    (seconds per cell)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim::sweep {

// A grid key, a grid file line or a cell line that is not valid: the user's
// options at fault (the CLI reports it as a usage error).
class GridError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Grid {
    std::vector<std::string> designs{"classic", "modern", "heap"};
    std::vector<unsigned> hz{250};
    std::vector<std::string> workloads{"tcp-retransmit,socket-timeouts"};
    std::vector<std::uint64_t> seeds{1};
    // Swept run options, in the order given: name and its values.
    std::vector<std::pair<std::string, std::vector<std::string>>> params;
    // Fixed run options: name and value ("" for a switch).
    std::vector<std::pair<std::string, std::string>> sets;
    std::string duration = "10";
};

struct Cell {
    std::vector<std::string> args; // the run options, canonical order
    std::string line;              // args joined by spaces
    std::string id;                // 16 hex digits of a hash of `line`
    std::string design, workload;
    unsigned hz = 0;
    std::uint64_t seed = 0;
    std::string options; // the args after --duration: swept and fixed options alike
};

// Applies one `key = value` (from a file line or an option); GridError
// naming `where` ("--design" or "FILE:LINE: design") on a bad value.
void apply_grid_key(Grid& g, std::string_view key, std::string_view value, const std::string& where);
// Reads a grid file over the defaults; InputError / GridError with FILE:LINE.
Grid parse_grid_file(const std::string& path);

// Every cell, designs outermost, then HZ, workloads, parameters (first
// outermost) and seeds.
std::vector<Cell> expand(const Grid& g);
// The cell of a --cell line (what --emit-jobs writes); GridError if it is
// not one.
Cell cell_from_line(const std::string& line);

} // namespace timersim::sweep
