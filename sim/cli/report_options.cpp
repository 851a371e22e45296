#include "sim/cli/report_options.hpp"

#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/report/group_report.hpp"

#include <fmt/format.h>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

// rtla timerlat hist's limits for its --bucket-size and --entries.
constexpr std::uint64_t kMaxBucketSize = 1'000'000;
constexpr std::uint64_t kMaxEntries = 1'000'000;

} // namespace

void add_report_options(po::options_description& options) {
    options.add_options()
        ("by", po::value<std::string>(),
         "a table of timers per group, every group: function (the timer's label: a trace's label=, the kernel "
         "callback; a generator's own name), cpu (the CPU whose base queued and fired it) or level (the wheel "
         "level it was queued at; the heap has none) or base (the timer base it was queued on: modern-6.9's local "
         "for pinned timers, global or deferrable; the other designs' standard or deferrable). Without it the text "
         "shows the 10 functions that fired most")
        ("hist", po::bool_switch(),
         "write the precision error as a per-CPU histogram in the layout of rtla timerlat hist instead of the report "
         "(compare: one per design)")
        ("bucket-size", po::value<std::uint64_t>()->default_value(1), "--hist: width of a bucket, in --hist-unit (1..1000000)")
        ("entries", po::value<std::uint64_t>()->default_value(256), "--hist: number of buckets (1..1000000); larger values count in over:")
        ("hist-unit", po::value<std::string>()->default_value("jiffies"),
         "--hist: jiffies (fired jiffy minus requested) or us (fire time minus the requested jiffy's tick time)");
}

ReportChoice report_choice(const po::variables_map& vm, const std::string& format, MachineConfig& machine) {
    ReportChoice r;
    if (vm.count("by")) {
        const std::string name = choice_option(vm, "by", {"function", "cpu", "level", "base"});
        machine.group_by = *group_by_from_string(name);
        r.by_given = true;
        r.group_rows = 0;
    } else {
        machine.group_by = GroupBy::function;
        r.group_rows = kDefaultTopGroups;
    }
    const bool hist_tuned = !vm["bucket-size"].defaulted() || !vm["entries"].defaulted() || !vm["hist-unit"].defaulted();
    if (!vm["hist"].as<bool>()) {
        if (hist_tuned) throw UsageError("--bucket-size, --entries and --hist-unit shape --hist: give --hist too");
        return r;
    }
    if (format != "text") throw UsageError(fmt::format("--hist: writes its own text layout, not --format {}", format));
    HistogramOptions h;
    h.bucket_size = vm["bucket-size"].as<std::uint64_t>();
    if (h.bucket_size < 1 || h.bucket_size > kMaxBucketSize)
        throw UsageError(fmt::format("--bucket-size: must be 1..{}, got {}", kMaxBucketSize, h.bucket_size));
    const std::uint64_t entries = vm["entries"].as<std::uint64_t>();
    if (entries < 1 || entries > kMaxEntries)
        throw UsageError(fmt::format("--entries: must be 1..{}, got {}", kMaxEntries, entries));
    h.entries = static_cast<std::size_t>(entries);
    h.unit = choice_option(vm, "hist-unit", {"jiffies", "us"}) == "us" ? HistogramUnit::us : HistogramUnit::jiffies;
    machine.error_us_histogram = h.unit == HistogramUnit::us;
    r.hist = h;
    return r;
}

} // namespace timersim::cli
