#include "sim/cli/cli.hpp"

#include "sim/cli/commands.hpp"
#include "sim/cli/memory_check.hpp"
#include "sim/cli/version.hpp"
#include "sim/report/atomic_file.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/trace_error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <system_error>
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

template <class T>
bool is_typed(const po::value_semantic* semantic) {
  return dynamic_cast<const po::typed_value<T>*>(semantic) != nullptr;
}

// Boost reads "-1" into an unsigned option as 2^N - 1 (it parses the way
// strtoul does); --hz -1 then reported "got 4294967295" and --seed -1 ran
// with seed 2^64 - 1. Every unsigned option refuses a minus sign, as typed.
void refuse_negative_unsigned(const po::parsed_options& parsed, const po::options_description& all) {
  for (const po::option& option : parsed.options) {
    const po::option_description* description = all.find_nothrow(option.string_key, false);
    if (description == nullptr) continue;
    const po::value_semantic* semantic = description->semantic().get();
    if (!is_typed<unsigned short>(semantic) && !is_typed<unsigned>(semantic) && !is_typed<unsigned long>(semantic) &&
        !is_typed<unsigned long long>(semantic))
      continue;
    for (const std::string& value : option.value) {
      const auto first = value.find_first_not_of(" \t");
      if (first != std::string::npos && value[first] == '-')
        throw UsageError(fmt::format("--{}: expected a number 0 or greater, got '{}'", description->long_name(), value));
    }
  }
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
    const po::parsed_options parsed =
        po::command_line_parser(argv).options(all).positional(positional).style(kParseStyle).run();
    refuse_negative_unsigned(parsed, all);
    po::store(parsed, vm);
    // --help wins over everything else, including missing required options,
    // so it is checked before notify() validates them.
    if (vm.count("help") != 0) {
      fmt::print("{}", format_command_help(options, help));
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::required_option& e) {
    // A positional argument has an option name only inside the parser:
    // the user is told what the usage line calls it, not "--input".
    const std::string missing = e.get_option_name();
    for (unsigned i = 0; i < positional.max_total_count() && i < 8; ++i)
      if (missing == "--" + positional.name_for_position(i))
        throw UsageError(fmt::format("the input FILE is missing (- reads standard input); usage: {}", help.usage));
    throw UsageError(e.what());
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

namespace {

// Runs the command line: the exit code, or an exception for a failed run.
int dispatch(std::span<const std::string> args) {
  {
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
    } catch (const FileUsageError& e) {
      fmt::print(stderr, "timersim: {}\n", e.what());
      return kExitUsage;
    } catch (const TooBigError& e) {
      fmt::print(stderr, "timersim: {}\n", e.what());
      return kExitUsage;
    }
  }
}

// Set when run_main() has reported stdout broken: close_stdout() then does
// not say it again (a closed stdout fails to close as well).
bool stdout_error_reported = false;

void report_stdout_error(int error) noexcept {
  stdout_error_reported = true;
  std::fprintf(stderr, "timersim: stdout: %s\n", std::strerror(error != 0 ? error : EIO));
}

// Whether what the command wrote to stdout (C stdio, and std::cout, which
// writes through it) reached the file: flushes both and checks their error
// flags. `error` is the errno of a write that already failed, if known.
bool stdout_written(int& error) noexcept {
  // stdio first: std::cout's flush flushes stdout too, and would take the
  // errno of a failure with it.
  errno = 0;
  if (std::fflush(stdout) != 0 && error == 0) error = errno;
  try {
    std::cout.flush();
  } catch (...) {
  }
  return !std::ferror(stdout) && !std::cout.fail();
}

}  // namespace

int run_main(std::span<const std::string> args) noexcept {
  // Reporting can itself fail (e.g. stdout is a closed pipe and fmt throws);
  // the handlers make sure that still ends in an exit code, not abort().
  int status = kExitFailed;
  int stdout_error = 0;  // errno of a failed write to stdout
  try {
    status = dispatch(args);
  } catch (const std::system_error& e) {
    // fmt::print throws this when a write fails; on stdout it is reported
    // below as stdout's error, like a failure the final flush finds.
    status = kExitFailed;
    if (std::ferror(stdout)) {
      stdout_error = e.code().category() == std::generic_category() || e.code().category() == std::system_category()
                         ? e.code().value()
                         : 0;
    } else {
      std::fprintf(stderr, "timersim: %s\n", e.what());
    }
  } catch (const std::exception& e) {
    // A writer that failed on stdout (-o -) names its own file; stdout's
    // one line below says it.
    if (std::ferror(stdout))
      stdout_error = errno;  // most likely still the failed write's
    else
      std::fprintf(stderr, "timersim: %s\n", e.what());
    status = kExitFailed;
  } catch (...) {
    std::fputs("timersim: unknown error\n", stderr);
    status = kExitFailed;
  }
  // Every command's output ends here: a report lost to a full disk or a
  // closed file is a failed run, never exit 0.
  if (!stdout_written(stdout_error)) {
    report_stdout_error(stdout_error);
    // A caller running more commands (the tests) starts clean.
    std::clearerr(stdout);
    std::cout.clear();
    if (status == kExitOk) status = kExitFailed;
  }
  return status;
}

int close_stdout(int status) noexcept {
  // Closing is the last chance to see a write error (NFS reports some only
  // here); after it nothing else may write to stdout.
  errno = 0;
  const bool failed = std::ferror(stdout) != 0;
  if (std::fclose(stdout) != 0 || failed) {
    if (!stdout_error_reported) report_stdout_error(errno);
    if (status == kExitOk) status = kExitFailed;
  }
  return status;
}

}  // namespace timersim::cli
