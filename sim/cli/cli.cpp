#include "sim/cli/cli.hpp"

#include "sim/cli/atomic_file.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/version.hpp"
#include "workloads/traces/input_file.hpp"
#include "workloads/traces/trace_error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

// Prefix guessing is off: with it, "--ver" would mean "--version" until some
// command grows a "--verbose", and then scripts that relied on it would break.
constexpr int kParseStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

void report_usage_error(std::string_view what, std::string_view help_command) {
  fmt::print(stderr, "timersim: {}\ntry '{} --help'\n", what, help_command);
}

// Prints each line of `text` indented by two spaces.
std::string indent_lines(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const auto line = text.substr(0, eol);
    if (!line.empty()) out += fmt::format("  {}", line);
    out += '\n';
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return out;
}

}  // namespace

std::string format_command_help(const po::options_description& options, const CommandHelp& help) {
  po::options_description common("Common options");
  common.add_options()("help,h", "show this help and exit");
  po::options_description all;
  if (!options.options().empty()) all.add(options);
  all.add(common);

  std::ostringstream stream;  // options_description can only be streamed
  stream << all;
  // A caption-less description streams its groups with leading blank lines.
  std::string_view table = stream.view();
  table.remove_prefix(std::min(table.find_first_not_of('\n'), table.size()));

  std::string out = fmt::format("Usage: {}\n\n{}\n\n{}", help.usage, help.description, table);
  if (!help.examples.empty()) out += fmt::format("\nExamples:\n{}", indent_lines(help.examples));
  return out;
}

std::optional<po::variables_map> parse_command_line(std::span<const std::string> args,
                                                    const po::options_description& options,
                                                    const CommandHelp& help,
                                                    const po::positional_options_description& positional) {
  po::options_description all;
  all.add(options);
  all.add_options()("help,h", "show this help and exit");

  po::variables_map vm;
  try {
    const std::vector<std::string> argv(args.begin(), args.end());
    po::store(po::command_line_parser(argv).options(all).positional(positional).style(kParseStyle).run(), vm);
    // --help wins over everything else, including missing required options,
    // so it is checked before notify() validates them.
    if (vm.count("help") != 0) {
      fmt::print("{}", format_command_help(options, help));
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::string format_main_help() {
  std::size_t width = 0;
  for (const Command& command : commands()) width = std::max(width, command.name.size());

  std::string out = fmt::format(
      "timersim {}: a discrete-event simulator of the Linux kernel timer wheels\n"
      "\n"
      "Usage: timersim [--help] [--version] <command> [options]\n"
      "\n"
      "Commands:\n",
      kVersion);
  for (const Command& command : commands()) {
    out += fmt::format("  {:<{}}  {}\n", command.name, width, command.summary);
  }
  out +=
      "\n"
      "Options:\n"
      "  -h, --help     show this help and exit\n"
      "  -V, --version  print the version and exit\n"
      "\n"
      "Run 'timersim <command> --help' for a command's options and examples.\n";
  return out;
}

int run_main(std::span<const std::string> args) noexcept {
  // Reporting can itself fail (e.g. stdout is a closed pipe and fmt throws);
  // the outer handlers make sure that still ends in an exit code, not abort().
  try {
    if (args.empty()) {
      report_usage_error("no command given", "timersim");
      return kExitUsage;
    }
    const std::string& first = args.front();
    const bool is_help = first == "--help" || first == "-h";
    const bool is_version = first == "--version" || first == "-V";
    if ((is_help || is_version) && args.size() > 1) {
      report_usage_error(fmt::format("unexpected argument '{}' after '{}'", args[1], first), "timersim");
      return kExitUsage;
    }
    if (is_help) {
      fmt::print("{}", format_main_help());
      return kExitOk;
    }
    if (is_version) {
      fmt::print("timersim {}\n", kVersion);
      return kExitOk;
    }
    if (first.starts_with('-')) {
      report_usage_error(fmt::format("unknown option '{}' (options go after the command)", first),
                         "timersim");
      return kExitUsage;
    }
    const Command* command = find_command(first);
    if (command == nullptr) {
      report_usage_error(fmt::format("unknown command '{}'", first), "timersim");
      return kExitUsage;
    }

    const std::string help_command = fmt::format("timersim {}", command->name);
    try {
      return command->run(args.subspan(1));
    } catch (const UsageError& e) {
      report_usage_error(e.what(), help_command);
      return kExitUsage;
    } catch (const po::error& e) {
      // A command that parsed without parse_command_line, or read a value
      // with the wrong type: still the user's command line at fault.
      report_usage_error(e.what(), help_command);
      return kExitUsage;
    } catch (const TraceError& e) {
      // Bad input file: its one line (FILE:LINE: what (field)), no usage hint.
      fmt::print(stderr, "timersim: {}\n", e.what());
      return kExitUsage;
    } catch (const InputError& e) {
      // An input that cannot be opened or read (FILE: what): the same.
      fmt::print(stderr, "timersim: {}\n", e.what());
      return kExitUsage;
    } catch (const OutputError& e) {
      // An output that cannot be created, found before anything ran.
      fmt::print(stderr, "timersim: {}\n", e.what());
      return kExitUsage;
    }
  } catch (const std::exception& e) {
    try {
      fmt::print(stderr, "timersim: {}\n", e.what());
    } catch (...) {
    }
    return kExitFailed;
  } catch (...) {
    std::fputs("timersim: unknown error\n", stderr);
    return kExitFailed;
  }
}

}  // namespace timersim::cli
