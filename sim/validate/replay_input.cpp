// ReplayStream (replay_input.hpp): the kernel event stream opened for the
// replay.
#include "sim/validate/replay_input.hpp"

#include "workloads/traces/input/trace_error.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace timersim::validate {

namespace {

// A 6.9+ trace without timer_migration events on more than one CPU. (On
// one CPU there is nothing to infer: no other CPU's timers, and no
// hierarchy to trace: 6.9 tmigr_init() returns early with one CPU.)
bool infers_remote(const ReplayResult& result, const ReplaySurvey& survey) {
    return result.kernel_6_9 && !survey.timer_migration && survey.cpus > 1;
}

// Fills what the options and the first pass decide of `result`, sets the
// reader up, and says how the stream reads the trace.
KernelStreamOptions open_for_replay(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result) {
    if (!options.survey) throw std::logic_error("ReplayStream: ReplayOptions::survey not given");
    result.file = reader.file_name();
    if (!options.kernel) throw std::logic_error("ReplayStream: ReplayOptions::kernel not resolved");
    result.kernel = *options.kernel;
    // The era decides the model: the classic wheel before 4.8 (its slots'
    // order by whether the kernel is before 4.2), the wheel of 4.8 and
    // later, and 6.9's bases. A trace with no timer_start or
    // timer_expire_entry line shows no version, and has nothing either
    // check could use either.
    const KernelTimerEra era = result.kernel.source.empty() ? KernelTimerEra::in_place
                                                            : result.kernel.era_for("validate", result.file);
    if (era == KernelTimerEra::cascading) {
        result.kernel_classic = true;
        const KernelVersionRange& range = result.kernel.range;
        constexpr KernelVersion hlist_slots{4, 2}; // 4.2: "timer: Remove FIFO guarantee"
        if (range.classic_slots_oldest_first())
            result.classic_oldest_first = true;
        else if (range.at_least < hlist_slots)
            throw TraceError(result.file, result.kernel.line ? result.kernel.line : 1, "kernel",
                             fmt::format("kernel {}{}: the order of a wheel slot's timers changed in 4.2; give the "
                                         "kernel with --kernel",
                                         range.describe(),
                                         result.kernel.source.empty() ? "" : " from " + result.kernel.source));
    }
    result.kernel_6_9 = era == KernelTimerEra::pull_model;
    const ReplaySurvey& survey = *options.survey;
    result.workload_start_line = survey.workload_start;
    if (options.force_hz) reader.force_hz();
    reader.set_filter(options.filter);
    return KernelStreamOptions{.file = result.file,
                               .cpus = survey.cpus,
                               .remote = result.kernel_classic      ? RemoteMarks::none
                                         : infers_remote(result, survey) ? RemoteMarks::inferred
                                                                         : RemoteMarks::from_lines};
}

} // namespace

ReplayStream::ReplayStream(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result,
                           IncarnationSlots& slots)
    : KernelEventStream(reader, open_for_replay(reader, options, result), slots), reader_(reader),
      options_(options), result_(result) {}

bool ReplayStream::primed() {
    if (!any()) {
        finish();
        return false;
    }
    result_.hz = reader_.hz();
    result_.cpus = options_.survey->cpus;
    return true;
}

void ReplayStream::finish() {
    if (finished_) return;
    finished_ = true;
    const KernelStreamCounts& read = counts();
    result_.timers = read.timers;
    result_.timer_events = read.events;
    const FtraceReaderStats& stats = reader_.stats();
    result_.flags_garbled = stats.starts_with_flags >= 2 && stats.starts_with_dpi == stats.starts_with_flags;
    result_.filter = options_.filter;
    result_.filter_counts = reader_.filter_counts();
    if (read.events == 0) result_.hz = options_.hz.value_or(0);
    if (infers_remote(result_, *options_.survey) && read.events > 0)
        result_.remote_inferred = RemoteInference{.expiries = read.inferred_expiries, .runs = read.inferred_runs};
}

} // namespace timersim::validate
