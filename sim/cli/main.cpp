// timersim: entry point. Everything but argv handling lives in the
// timersim_cli library (sim/cli/cli.cpp) so the tests can drive it directly.
#include "sim/cli/cli.hpp"

#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  return timersim::cli::run_main(args);
}
