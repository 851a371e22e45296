// timersim validate: replays a real Linux 6.1 timer trace through our model of
// the 6.1 wheel (ModernWheel, one per CPU), or a pre-4.8 one through the
// classic wheel, and checks it event by event (sim/validate/kernel_replay.hpp,
// classic_replay.hpp, docs/validation.md).
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/trace_filter_options.hpp"
#include "sim/report/validate_report.hpp"
#include "sim/validate/kernel_replay.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/kernel_text.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace timersim::cli {

namespace po = boost::program_options;

int run_validate(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("input", po::value<std::string>()->required(),
         "the kernel trace (the positional FILE; - for standard input; xz, gzip or zstd compressed or not)")
        ("min", double_value(100.0),
         "fail (exit 1) when either check agrees on fewer than PERCENT of the events it could check")
        ("max-listed", po::value<std::size_t>()->default_value(50), "list at most N disagreements (and N notes)")
        ("format", po::value<std::string>()->default_value("text"), "output: text or json");
    add_kernel_hz_options(options);
    add_kernel_version_option(options);
    add_trace_filter_options(options);
    po::positional_options_description positional;
    positional.add("input", 1);
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim validate FILE [--hz H] [--min PERCENT] [--max-listed N] [--format text|json]",
            .description =
                "Replay a real Linux 6.1 timer trace (ftrace text or a trace.dat with the timer:timer_* events, as\n"
                "tests/data/kernel/) through our model of the 6.1 wheel, one wheel per CPU, and check\n"
                "every timer_start (our idx = the kernel's idx=) and every timer_expire_entry (our\n"
                "softirq fires that timer from a bucket whose clock is the kernel's baseclk=, not\n"
                "after now=). Events that depend on history the trace does not hold are counted as\n"
                "unknown history and excluded. Ends with 'agreement: idx A/B, expiry C/D'; exit 1 when\n"
                "either check agrees on less than --min percent. The filters (--cpu, --function,\n"
                "--from, --to) keep only the events they name; the report counts what each dropped.\n"
                "A trace of a kernel before 4.8 (an LTTng trace directory of Linux 3.6, say) is replayed\n"
                "on the classic cascading wheel instead: its timer_start has no idx, so only the\n"
                "expiries are checked (fired in the kernel's run, in the kernel's order).\n"
                "See docs/validation.md.",
            .examples = "timersim validate tests/data/kernel/capture-6.1-hz250.trace.xz\n"
                        "timersim validate trace.txt --hz 1000 --min 99.5 --format json\n"
                        "timersim validate trace.txt --cpu 1 --from 5s\n"
                        "timersim validate tests/data/lttng/lttng-3.6-scp",
        },
        positional);
    if (!vm) return kExitOk;

    const std::string input = (*vm)["input"].as<std::string>();
    const HzChoice hz = kernel_hz_choice(*vm);
    const std::optional<KernelVersion> kernel = kernel_version_option(*vm);
    const TraceFilter filter = trace_filter_option(*vm, true);
    const double min_percent = (*vm)["min"].as<double>();
    if (!(min_percent >= 0.0 && min_percent <= 100.0))
        throw UsageError(fmt::format("--min: must be 0..100, got {}", min_percent));
    const std::size_t max_listed = (*vm)["max-listed"].as<std::size_t>();
    const std::string format = choice_option(*vm, "format", {"text", "json"});

    // FILE or "-", decompressed in-process when xz, gzip or zstd (by its
    // magic bytes, whatever its name).
    // Read in two passes (kernel_text.hpp), never held whole.
    InputFile in(input, InputFile::Directories::opened); // a directory: an LTTng trace
    KernelText text(in);
    ReplayResult result;
    try {
        // HZ never assumed: --hz, the '# hz=' line or the jiffies, each
        // checked against what the trace shows (hz_inference.hpp).
        // The replay streams the trace; what it must know of the whole
        // trace first, the same pass gathers (or, with a filter, a pass of
        // its own: the kept events are the filter's).
        ReplaySurveyor surveyor(true);
        const HzResolution resolved = resolve_ftrace_hz([&]() -> InputFile& { return text.pass(); }, text.name(),
                                                        hz, HzPassExtras::none,
                                                        filter.active() ? nullptr : &surveyor);
        ReplayOptions options{.hz = resolved.hz,
                              .force_hz = resolved.forced,
                              .max_notes_per_class = max_listed,
                              .filter = filter,
                              .kernel = resolve_kernel_version(resolved.kernel_evidence, kernel, text.name())};
        options.survey = filter.active() ? survey_kernel_trace(text.pass(), options) : surveyor.survey();
        result = replay_kernel_trace(text.pass(), options);
        result.hz_source = resolved.source;
        require_kept(filter, result.filter_counts, in.name(), "timer events");
    } catch (const TraceError& e) {
        fmt::print(stderr, "timersim: {}\n", e.what());
        return kExitUsage;
    }
    // Every check counts, those of resynchronised stretches too: a listed
    // disagreement is below the default --min 100 wherever it was found.
    const auto below = [&](const ReplayCheckCounts& c) {
        const std::uint64_t agree = c.agree + c.resynced_agree;
        const std::uint64_t checked = agree + c.disagree + c.resynced_disagree;
        return checked > 0 && static_cast<double>(agree) * 100.0 < min_percent * static_cast<double>(checked);
    };
    // A trace without timer events validates nothing: that is a failure too.
    const bool passed = result.timer_events > 0 && !below(result.idx) && !below(result.expiry);
    if (format == "json")
        fmt::print("{}", format_validate_json(result, max_listed, min_percent, passed));
    else
        fmt::print("{}", format_validate_text(result, max_listed));
    return passed ? kExitOk : kExitFailed;
}

} // namespace timersim::cli
