// The table of timersim subcommands.
//
// Adding a command:
//   1. write sim/cmd_<name>.cpp defining  int run_<name>(std::span<const std::string>)
//      (use cli::parse_command_line from sim/cli/cli.hpp for its options and --help);
//   2. declare run_<name> below;
//   3. add a row to the table in sim/cli/commands.cpp;
//   4. add cmd_<name>.cpp to the sources in sim/meson.build.
//
// The table is an explicit list rather than self-registering static objects:
// objects in a static library that nothing references are dropped by the
// linker, so self-registration silently loses commands.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace timersim::cli {

struct Command {
  std::string_view name;     // what the user types: "timersim <name> ..."
  std::string_view summary;  // one line, shown by "timersim --help"
  // Receives the arguments after the command name. Returns the process exit
  // code (0 ok, 1 run failed); throws UsageError for bad usage or bad input.
  int (*run)(std::span<const std::string> args);
};

// All commands, in the order "timersim --help" lists them.
std::span<const Command> commands();

// The command called `name`, or nullptr.
const Command* find_command(std::string_view name);

// Entry points, one per sim/cmd_<name>.cpp.
int run_version(std::span<const std::string> args);
int run_compare(std::span<const std::string> args);
int run_run(std::span<const std::string> args);
int run_levels(std::span<const std::string> args);
int run_explain(std::span<const std::string> args);
int run_step(std::span<const std::string> args);
int run_gen(std::span<const std::string> args);
int run_sweep(std::span<const std::string> args);
int run_import(std::span<const std::string> args);
int run_validate(std::span<const std::string> args);

}  // namespace timersim::cli
