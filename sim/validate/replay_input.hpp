// The first half of the kernel-trace replay (kernel_replay.hpp): the
// trace's timer events as the one kernel event stream reads them
// (kernel_event_stream.hpp: the window, the timer objects, the lines that
// say a CPU lost events), opened for the replay. Internal to sim/validate/.
#pragma once

#include "sim/validate/kernel_replay.hpp"
#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/kernel_event_stream.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::validate {

// The one reading of a kernel trace's events (kernel_event_stream.hpp),
// under the names the replay uses.
using Event = KernelEvent;
using timersim::EventSeq;
using timersim::FunctionIndex;
using timersim::IncarnationIndex;
using timersim::IncarnationSlots;
using timersim::kNoEvent;
using timersim::kNoIncarnation;
using timersim::LostMarker;

// The kernel event stream as the replay opens it: from the options and the
// first pass's survey, and with the replay's result filled from it.
class ReplayStream : public KernelEventStream {
public:
    // Reads with `reader` (made with options.hz, not yet read: this sets its
    // filter, observer and --force-hz) and fills result's file, kernel,
    // kernel_6_9, kernel_classic, classic_oldest_first and
    // workload_start_line at once; hz, cpus once the first event is read
    // (primed()); timers, timer_events and the counts of the reader at the
    // end (finish()). options.kernel and options.survey are required
    // (std::logic_error without).
    ReplayStream(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result, IncarnationSlots& slots);

    // Reads the first event: false if the trace has none (the result is
    // then complete).
    bool primed();
    // KernelEventStream::next(); at the end, the result's counts filled.
    Event* next() {
        Event* e = KernelEventStream::next();
        if (!e) finish();
        return e;
    }

private:
    void finish(); // once
    FtraceReader& reader_;
    const ReplayOptions& options_;
    ReplayResult& result_;
    bool finished_ = false;
};

} // namespace timersim::validate
