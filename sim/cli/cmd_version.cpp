#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/version.hpp"

#include <fmt/core.h>

namespace timersim::cli {

int run_version(std::span<const std::string> args) {
  const boost::program_options::options_description options("Options");
  const auto vm = parse_command_line(args, options,
                                     {
                                         .usage = "timersim version",
                                         .description = "Print the timersim version and exit.",
                                         .examples = "timersim version",
                                     });
  if (!vm) return kExitOk;
  fmt::print("timersim {}\n", kVersion);
  return kExitOk;
}

}  // namespace timersim::cli
