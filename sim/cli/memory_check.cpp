#include "sim/cli/memory_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace timersim::cli {

namespace {

// Above what the runs measured: resident memory also holds vectors that grew
// by doubling, and the generators together (mixed) cost more than apart.
constexpr double kMargin = 1.25;
// The program itself, the reports, the histograms.
constexpr std::uint64_t kBaseBytes = 16ull << 20;

std::string human(std::uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / static_cast<double>(1ull << 30);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / static_cast<double>(1ull << 20));
}

}  // namespace

std::uint64_t bytes_per_connection(std::string_view generator) {
  // Peak RSS of `compare --design modern --duration 5` with 500,000
  // connections, less the program's own, per connection, rounded up ~13 %
  // (classic and heap measured the same within 1 %).
  struct Cost {
    std::string_view name;
    std::uint64_t bytes;
  };
  static constexpr Cost kCosts[] = {
      {"tcp-retransmit", 170}, {"socket-timeouts", 160}, {"delayed-ack", 160}, {"keepalive", 150},
      {"time-wait", 100},      {"uniform", 125},         {"connection-churn", 120}, {"burst", 55},
  };
  for (const Cost& c : kCosts)
    if (c.name == generator) return static_cast<std::uint64_t>(static_cast<double>(c.bytes) * kMargin);
  return 0;
}

std::optional<std::uint64_t> available_memory_bytes() {
  const char* override_path = std::getenv("TIMERSIM_MEMINFO");
  std::ifstream in(override_path != nullptr && *override_path != '\0' ? override_path : "/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

unsigned fit_jobs_to_memory(const MemoryEstimate& estimate, unsigned jobs) {
  jobs = std::max(1u, jobs);
  if (estimate.bytes_per_design == 0) return jobs;
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (!available) return jobs;
  const std::uint64_t usable = *available > kBaseBytes ? *available - kBaseBytes : 0;
  const std::uint64_t fit = usable / estimate.bytes_per_design;
  if (fit == 0)
    throw TooBigError(fmt::format("{}: {} needs about {} per design, more than the {} of memory available "
                                  "(MemAvailable)",
                                  estimate.option, estimate.what, human(estimate.bytes_per_design + kBaseBytes), human(*available)));
  return static_cast<unsigned>(std::min<std::uint64_t>(jobs, fit));
}

}  // namespace timersim::cli
