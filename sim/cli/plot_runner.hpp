// `timersim compare --plot DIR`: runs timersim-plot (scripts/plot, Python 3
// with matplotlib) on the comparison's JSON. The script is looked for next
// to the running binary, which is where both the build tree
// (build/sim/timersim-plot) and `meson install` (bin/timersim-plot) put it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace timersim {

// The plot script next to the running executable, if it is there.
std::optional<std::string> find_plot_script();

// Creates DIR if needed, before a long run is spent on plots that could not
// be written. Throws std::runtime_error naming DIR when that fails.
void prepare_plot_dir(const std::string& dir);

// Writes `json` to DIR/compare.json (creating DIR), then draws the plots
// from it into DIR. When the plots cannot be drawn on this machine (no
// script, no python3, no matplotlib) it says so in one line on stderr,
// naming the package to install, and returns: the comparison itself has
// succeeded. Throws std::runtime_error when DIR cannot be written or the
// script fails.
void draw_plots(const std::string& json, const std::string& dir);

// Runs the script `name` found next to the binary with `args`, with the
// same rules: a missing script or python3 is one line on stderr and a
// return, a failing script a std::runtime_error.
void run_plot_script(const std::string& name, const std::vector<std::string>& args);

} // namespace timersim
