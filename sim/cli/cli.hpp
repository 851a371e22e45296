// Command-line plumbing shared by every timersim subcommand.
//
// Exit codes: 0 ok, 1 the run failed, 2 bad usage or bad input. Errors are
// reported as one line "timersim: <what is wrong>" on stderr followed by a hint
// line "try 'timersim <command> --help'".
//
// A command's run function (see sim/cli/commands.hpp) typically looks like:
//
//   int run_levels(std::span<const std::string> args) {
//     namespace po = boost::program_options;
//     po::options_description options("Options");
//     options.add_options()
//         ("hz", po::value<int>()->default_value(250), "timer frequency (CONFIG_HZ)");
//     const auto vm = parse_command_line(args, options, {
//         .usage = "timersim levels [options]",
//         .description = "Print the granularity and range of each wheel level.",
//         .examples = "timersim levels\ntimersim levels --hz 1000",
//     });
//     if (!vm) return kExitOk;  // --help was printed
//     if ((*vm)["hz"].as<int>() <= 0) throw UsageError("--hz must be positive");
//     ...
//     return kExitOk;
//   }
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// Bad usage or bad input (unknown option, malformed or out-of-range value,
// unreadable input the user named). Exits with kExitUsage. Any other exception
// escaping a command is a failed run (kExitFailed).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Text of "timersim <command> --help", around the options table.
struct CommandHelp {
  std::string_view usage;        // e.g. "timersim levels [options]"
  std::string_view description;  // a sentence or short paragraph
  std::string_view examples;     // one command line per line
};

// Parses a command's arguments against `options`, adding -h/--help (commands
// must not define it themselves). Returns nullopt after printing the help to
// stdout if --help was given; the command then returns kExitOk. Throws
// UsageError for anything wrong on the command line. Unambiguous prefixes of
// long options are NOT accepted, so adding an option never changes the meaning
// of an existing command line.
std::optional<boost::program_options::variables_map> parse_command_line(
    std::span<const std::string> args,
    const boost::program_options::options_description& options,
    const CommandHelp& help,
    const boost::program_options::positional_options_description& positional = {});

// What "timersim <command> --help" prints.
std::string format_command_help(const boost::program_options::options_description& options,
                                const CommandHelp& help);

// What "timersim --help" prints.
std::string format_main_help();

// The whole program, minus argv[0]: dispatches to a command, turns every
// exception into a message and an exit code. Never throws. Ends by flushing
// stdout and checking that everything written to it arrived: if not (a full
// disk, a closed file), "timersim: stdout: <strerror>" on stderr and exit 1.
int run_main(std::span<const std::string> args) noexcept;

// main()'s last step: closes stdout and returns `status`, or kExitFailed
// with the same "timersim: stdout: ..." line if the close fails.
int close_stdout(int status) noexcept;

}  // namespace timersim::cli
