// The precision error as a per-CPU histogram in the layout of
// `rtla timerlat hist` (and cyclictest -h): a few '#' header lines, a
// column header `# Index CPU-000 CPU-001 ...`, one row per bucket that has
// a sample (the bucket's lowest value, then a count per CPU), then the
// rows `over:` (samples past the last bucket), `count:` (every sample,
// over included: the CPU's fired timers), `min:`, `avg:` and `max:` (of
// every sample, exact). Tools written for rtla's output read it.
//
//     HistogramOptions h{.bucket_size = 1, .entries = 256, .unit = HistogramUnit::jiffies};
//     fmt::print("{}", format_latency_histogram(run, h));
//
// Unlike a latency tracer's, our error can be negative (the kernel's own
// clamp fires a timer early): then an `under:` row, before `over:`, counts
// the samples below 0; count is still every sample. A CPU that fired
// nothing shows `-` for min, avg and max.
#pragma once

#include "sim/machine/engine_run.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace timersim {

enum class HistogramUnit : std::uint8_t {
    jiffies, // fired jiffy - requested expiry (CpuMetrics::error_jiffies)
    us,      // fire time - the requested jiffy's tick time, whole us (CpuMetrics::error_us)
};

struct HistogramOptions {
    std::uint64_t bucket_size = 1; // in the unit; rtla's --bucket-size
    std::size_t entries = 256;     // buckets; rtla's --entries
    HistogramUnit unit = HistogramUnit::jiffies;
};

// One run (run: its design; compare: one block per design).
std::string format_latency_histogram(const RunResult& run, const HistogramOptions& options);

} // namespace timersim
