// Output options that would overwrite what the command reads: checked on
// the options before anything is created, so `run --trace t -o t` cannot
// replace its own input.
#pragma once

#include <boost/program_options.hpp>

#include <initializer_list>

namespace timersim::cli {

// Throws FileUsageError (one line, exit 2) when an output option names the
// same file (device and inode, through any symlink or hard link) as an
// input option, or as another output option. Options not given are skipped;
// "-" (stdin, stdout) is never compared. Names are option names as in the
// variables_map ("output" is shown as -o, "input" as FILE).
void refuse_output_onto_input(const boost::program_options::variables_map& vm,
                              std::initializer_list<const char*> outputs,
                              std::initializer_list<const char*> inputs);

} // namespace timersim::cli
