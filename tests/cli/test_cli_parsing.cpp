// The CLI plumbing in sim/: the command table, parse_command_line() and the
// exit codes / messages of run_main().
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/version.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

namespace po = boost::program_options;
using namespace timersim;
using namespace timersim::cli;

namespace {

struct Captured {
  int code = -1;
  std::string out;
  std::string err;
};

std::string read_all(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  return text;
}

// Runs `body` with file descriptors 1 and 2 redirected to temporary files, so
// the test sees exactly what a user's terminal would (fmt::print writes
// through C stdio, hence the flushes).
Captured capture(const std::function<int()>& body) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  const int saved_out = ::dup(1);
  const int saved_err = ::dup(2);
  ::dup2(::fileno(out), 1);
  ::dup2(::fileno(err), 2);

  Captured result;
  result.code = body();

  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, 1);
  ::dup2(saved_err, 2);
  ::close(saved_out);
  ::close(saved_err);
  result.out = read_all(out);
  result.err = read_all(err);
  std::fclose(out);
  std::fclose(err);
  return result;
}

Captured run_cli(std::vector<std::string> args) {
  return capture([&] { return run_main(args); });
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto eol = text.find('\n', start);
    if (eol == std::string::npos) {
      result.push_back(text.substr(start));
      break;
    }
    result.push_back(text.substr(start, eol - start));
    start = eol + 1;
  }
  return result;
}

// A stand-in for a real command's options.
struct Fixture {
  po::options_description options{"Options"};
  po::positional_options_description positional;
  CommandHelp help{
      .usage = "timersim demo [options] [input]",
      .description = "A command used only by the tests.",
      .examples = "timersim demo --count 3\ntimersim demo trace.txt",
  };

  Fixture() {
    options.add_options()                                                   //
        ("count", po::value<int>()->default_value(1), "how many")          //
        ("name", po::value<std::string>()->required(), "a required name")  //
        ("input", po::value<std::string>(), "input file");
    positional.add("input", 1);
  }

  std::optional<po::variables_map> parse(std::vector<std::string> args) const {
    return parse_command_line(args, options, help, positional);
  }
};

}  // namespace

TEST_CASE("the command table") {
  REQUIRE_FALSE(commands().empty());

  SUBCASE("every command is well formed and listed once") {
    std::set<std::string_view> names;
    for (const Command& command : commands()) {
      CAPTURE(command.name);
      CHECK_FALSE(command.name.empty());
      CHECK_FALSE(command.name.starts_with('-'));
      CHECK_FALSE(command.summary.empty());
      CHECK((command.run != nullptr));  // parenthesised: doctest cannot print function pointers
      CHECK(names.insert(command.name).second);
    }
  }

  SUBCASE("lookup by name") {
    const Command* version = find_command("version");
    REQUIRE(version != nullptr);
    CHECK(version->name == "version");
    CHECK(find_command("no-such-command") == nullptr);
    CHECK(find_command("") == nullptr);
    CHECK(find_command("versio") == nullptr);  // no prefix matching
  }
}

TEST_CASE("parse_command_line reads options") {
  const Fixture f;

  SUBCASE("defaults and explicit values") {
    const auto vm = f.parse({"--name", "x"});
    REQUIRE(vm);
    CHECK((*vm)["count"].as<int>() == 1);
    CHECK((*vm)["name"].as<std::string>() == "x");
    CHECK((*vm).count("input") == 0);
  }

  SUBCASE("--opt=value, --opt value and positionals") {
    const auto vm = f.parse({"--count=7", "--name", "y", "trace.txt"});
    REQUIRE(vm);
    CHECK((*vm)["count"].as<int>() == 7);
    CHECK((*vm)["input"].as<std::string>() == "trace.txt");
  }
}

TEST_CASE("parse_command_line rejects bad command lines with UsageError") {
  const Fixture f;
  CHECK_THROWS_WITH_AS(f.parse({"--name", "x", "--bogus"}), doctest::Contains("--bogus"), UsageError);
  CHECK_THROWS_WITH_AS(f.parse({"--name", "x", "--count", "many"}), doctest::Contains("--count"),
                       UsageError);
  CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("--name"), UsageError);       // required
  CHECK_THROWS_AS(f.parse({"--name", "x", "--cou", "2"}), UsageError);              // no prefixes
  CHECK_THROWS_AS(f.parse({"--name", "x", "a.txt", "b.txt"}), UsageError);          // one positional
  CHECK_THROWS_AS(f.parse({"--name"}), UsageError);                                 // missing value
}

TEST_CASE("parse_command_line handles --help") {
  const Fixture f;
  for (const char* flag : {"--help", "-h"}) {
    CAPTURE(flag);
    bool parsed = true;
    // --help wins even though the required --name is missing.
    const Captured c = capture([&] {
      parsed = f.parse({flag}).has_value();
      return 0;
    });
    CHECK_FALSE(parsed);
    CHECK(c.err.empty());
    CHECK(c.out == format_command_help(f.options, f.help));
  }

  const std::string text = format_command_help(f.options, f.help);
  CHECK(text.starts_with("Usage: timersim demo [options] [input]\n"));
  CHECK(text.find("--count") != std::string::npos);
  CHECK(text.find("--help") != std::string::npos);
  CHECK(text.find("Examples:\n  timersim demo --count 3\n  timersim demo trace.txt\n") !=
        std::string::npos);
}

TEST_CASE("run_main: help and version") {
  const std::string version_line = fmt::format("timersim {}\n", kVersion);

  for (const char* flag : {"--help", "-h"}) {
    CAPTURE(flag);
    const Captured c = run_cli({flag});
    CHECK(c.code == kExitOk);
    CHECK(c.err.empty());
    CHECK(c.out == format_main_help());
  }
  for (const Command& command : commands()) {
    CHECK(format_main_help().find(fmt::format("  {}", command.name)) != std::string::npos);
  }

  for (const std::vector<std::string>& args : {std::vector<std::string>{"--version"}, {"-V"}, {"version"}}) {
    CAPTURE(args.front());
    const Captured c = run_cli(args);
    CHECK(c.code == kExitOk);
    CHECK(c.out == version_line);
    CHECK(c.err.empty());
  }

  const Captured c = run_cli({"version", "--help"});
  CHECK(c.code == kExitOk);
  CHECK(c.out.starts_with("Usage: timersim version"));
}

TEST_CASE("run_main: bad usage exits 2 with one error line and a hint") {
  struct Case {
    std::vector<std::string> args;
    std::string error;
    std::string hint;
  };
  const std::vector<Case> cases{
      {{}, "timersim: no command given", "try 'timersim --help'"},
      {{"frobnicate"}, "timersim: unknown command 'frobnicate'", "try 'timersim --help'"},
      {{"--bogus"}, "timersim: unknown option '--bogus' (options go after the command)",
       "try 'timersim --help'"},
      {{"--help", "version"}, "timersim: unexpected argument 'version' after '--help'",
       "try 'timersim --help'"},
      {{"version", "--bogus"}, "timersim: unrecognised option '--bogus'", "try 'timersim version --help'"},
      {{"version", "extra"}, "", "try 'timersim version --help'"},
  };
  for (const Case& test : cases) {
    CAPTURE(fmt::format("{}", fmt::join(test.args, " ")));
    const Captured c = run_cli(test.args);
    CHECK(c.code == kExitUsage);
    CHECK(c.out.empty());
    const auto err = lines(c.err);
    REQUIRE(err.size() == 2);
    if (test.error.empty()) {
      CHECK(err[0].starts_with("timersim: "));
    } else {
      CHECK(err[0] == test.error);
    }
    CHECK(err[1] == test.hint);
  }
}

TEST_CASE("run_main: a negative number for an unsigned option is refused as typed, not wrapped") {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  // Small runs, so that a wrapped value the old code accepted (--seed) ends
  // in a quick exit 0 instead of a long run.
  const std::vector<std::string> tiny{"--ticks", "1", "--connections", "1"};
  const auto with_tiny = [&](std::vector<std::string> args) {
    args.insert(args.end(), tiny.begin(), tiny.end());
    return args;
  };
  const std::vector<Case> cases{
      {{"levels", "--hz", "-1"}, "timersim: --hz: expected a number 0 or greater, got '-1'"},
      {{"levels", "--hz=-250"}, "timersim: --hz: expected a number 0 or greater, got '-250'"},
      {with_tiny({"run", "--seed", "-1"}), "timersim: --seed: expected a number 0 or greater, got '-1'"},
      {with_tiny({"compare", "--jobs", "-1"}), "timersim: --jobs: expected a number 0 or greater, got '-1'"},
      {with_tiny({"compare", "-j", "-2"}), "timersim: --jobs: expected a number 0 or greater, got '-2'"},
      {with_tiny({"run", "--cpus", "-0"}), "timersim: --cpus: expected a number 0 or greater, got '-0'"},
      {{"run", "--ticks", "-5"}, "timersim: --ticks: expected a number 0 or greater, got '-5'"},
      {{"validate", "x", "--max-listed", "-1"}, "timersim: --max-listed: expected a number 0 or greater, got '-1'"},
  };
  for (const Case& test : cases) {
    CAPTURE(fmt::format("{}", fmt::join(test.args, " ")));
    const Captured c = run_cli(test.args);
    CHECK(c.code == kExitUsage);
    CHECK(c.out.empty());
    const auto err = lines(c.err);
    REQUIRE(err.size() == 2);
    CHECK(err[0] == test.error);
  }
  // A signed option still takes a negative value (and checks its range itself).
  const Captured c = run_cli({"step", "--ticks", "-1"});
  CHECK(c.code == kExitUsage);
  CHECK(c.err.find("expected a number 0 or greater") == std::string::npos);
  CHECK(c.err.find("--ticks") != std::string::npos);
}

TEST_CASE("run_main: a trace replaces the generators, so their options are refused with one") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"run", "--trace", "x.trace", "--ftrace", "y.txt"}, "timersim: --trace and --ftrace: give one or the other"},
      {{"run", "--trace", "x.trace", "--workload", "burst"}, "timersim: --workload and --trace: give one or the other"},
      {{"run", "--trace", "x.trace", "--loss", "0.5"}, "timersim: --loss: a generator parameter, not used with --trace"},
  };
  for (const auto& [args, error] : cases) {
    CAPTURE(fmt::format("{}", fmt::join(args, " ")));
    const Captured c = run_cli(args);
    CHECK(c.code == kExitUsage);
    const auto err = lines(c.err);
    REQUIRE(err.size() == 2);
    CHECK(err[0] == error);
    CHECK(err[1] == "try 'timersim run --help'");
  }
}
