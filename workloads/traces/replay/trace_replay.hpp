// Replaying a trace on the simulated machine: a Workload that applies each
// event of a timersim trace (format v1) or of kernel ftrace text at its time
// on its CPU, from the trace read once into memory (LoadedTrace).
#pragma once

#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "workloads/traces/kernel/lost_history.hpp"
#include "workloads/traces/kernel/recorded_machine.hpp"
#include "workloads/traces/kernel/trace_costs.hpp"
#include "workloads/traces/layouts/trace_event.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"
#include "workloads/traces/replay/trace_source.hpp"
#include "workloads/workload.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace timersim {

// What a replay did, for reports.
struct TraceReplayStats {
    std::uint64_t events = 0;          // arm/modify/cancel events applied
    std::uint64_t callback_events = 0; // events recorded inside a callback (cb=), applied in ours
    std::uint64_t callback_events_unmatched = 0; // their fire never came in this replay
    std::uint64_t skipped_lines = 0;   // ftrace: other events, counted
    // Entries the replay looked at to decide where events go (waiting
    // steps, read-ahead callback blocks, pending pump actions): a measure of
    // its own work besides applying events, which tests keep linear in the
    // trace's length.
    std::uint64_t bookkeeping_steps = 0;
};

// The clock a trace fixes (ftrace text has no HZ: `hz` gives it), the time
// of its last event and what else a run needs to know before it starts.
struct TraceSummary {
    TraceHeader header;
    std::uint64_t last_event_ns = 0;
    std::uint64_t last_event_line = 0; // for errors about the run's length
    // Kernel text: the tick of the kernel's last fire (its now=), which
    // comes after the last event when the trace ends in expiries that arm
    // nothing (an expiry's lines give no event).
    std::uint64_t last_fire_ns = 0;
    // Where the recording ends: its last event or its last fire.
    std::uint64_t end_ns() const noexcept { return last_event_ns > last_fire_ns ? last_event_ns : last_fire_ns; }
    std::uint64_t events = 0;
    unsigned cpus = 1; // highest cpu= seen + 1
    // Kernel text: where its HZ came from (hz_inference.hpp, HzResolution::source).
    std::string hz_source;
    // Kernel text: the recording kernel's version (kernel_version.hpp).
    KernelVersionResolution kernel;
    // Kernel text before 4.2: timers taken as deferrable, as they fired
    // late (deferrable_inference.hpp), and their arms.
    std::size_t inferred_deferrable_timers = 0;
    std::uint64_t inferred_deferrable_arms = 0;
};

// A trace read (kernel text: after the pass that decides its HZ), its
// events held in memory as compact events (32 bytes each; each timer's
// first label kept apart, by timer; annotations dropped) for any number of
// replays: compare replays it once per design, on several threads, without
// reading the input again. A trace with more events than
// TraceLoadOptions::max_event_bytes holds is not kept: each replay then
// reads the events again from the input as a stream (event_cursor.hpp), in
// memory bounded by the timers and a window of a few events. Immutable.
class LoadedTrace {
public:
    struct Data; // in trace_replay.cpp
    explicit LoadedTrace(std::unique_ptr<Data> data);
    ~LoadedTrace();
    const std::string& file() const noexcept;
    TraceKind kind() const noexcept;
    const TraceSummary& summary() const noexcept;
    // The filter it was read with and what it kept (TraceLoadOptions).
    const TraceFilter& filter() const noexcept;
    const TraceFilterCounts& filter_counts() const noexcept;
    // With TraceLoadOptions::costs_from_trace: the costs the trace shows.
    const TraceCosts* costs() const noexcept;
    // A kernel trace: the machine it was recorded on (recorded_machine.hpp);
    // else null.
    std::shared_ptr<const RecordedMachine> recorded_machine() const noexcept;
    std::size_t memory_bytes() const noexcept; // what the events and the timers' names take
    const Data& data() const noexcept { return *data_; }

private:
    std::unique_ptr<Data> data_;
};

// Reads `in` (not read before) to its end. Errors in the trace throw
// TraceError (FILE:LINE: what (field)); an input that cannot be opened,
// InputError. A trace whose events are not kept (TraceLoadOptions::
// max_event_bytes) keeps a descriptor of the input open to read it again.
// Kernel text is read twice, its HZ decided by resolve_ftrace_hz() (a
// --hz the trace contradicts, or no HZ to be found, is a TraceError); the
// HzChoice's --force-hz replays at --hz regardless. A timersim trace's
// header gives its clock and `hz` is not used.
std::shared_ptr<const LoadedTrace> load_trace(InputFile& in, TraceKind kind, const HzChoice& hz);

// What else a load does: keep only the events a filter names (the HZ of a
// kernel trace is still decided from all of it), and measure the costs of
// a kernel trace's softirq runs and callbacks (trace_costs.hpp; InputError
// if it has none). The costs are measured over the whole trace, unfiltered.
struct TraceLoadOptions {
    TraceFilter filter;
    bool costs_from_trace = false;
    // A kernel trace: --kernel, the version that recorded it, over what the
    // trace shows (resolve_kernel_version()).
    std::optional<KernelVersion> kernel;
    // The most the events may take in memory (32 bytes each). A trace with
    // more is not kept: each replay reads its events again from the input,
    // as a stream (a kernel trace's timers, fires and names are still kept).
    std::size_t max_event_bytes = kDefaultMaxEventBytes;
    static constexpr std::size_t kDefaultMaxEventBytes = std::size_t{256} << 20;
    // A kernel trace: validate's model, to class its lost history as
    // validate does (lost_history.hpp). Asked only where the trace gives
    // cause (KernelFireCollector::history_in_doubt()), a filter is active
    // (validate sees only the kept events) or the kernel ran the cascading
    // wheel, and only where the kernel's design is known (validate refuses
    // a version that spans two); it reads the text twice more. Without it,
    // or where it throws TraceError (a check only validate makes: the load
    // says so in FireAgreement::lost_history_unclassed), a CPU's history is
    // lost only from a line saying so to its base's next fire.
    LostHistoryClassifier lost_history;
};
std::shared_ptr<const LoadedTrace> load_trace(InputFile& in, TraceKind kind, const HzChoice& hz,
                                              const TraceLoadOptions& options);
std::shared_ptr<const LoadedTrace> load_trace(const std::string& path, TraceKind kind, const HzChoice& hz);

// A factory for WorkloadSpec replaying `trace` (each call a replay of its
// own). Errors found while replaying (an event on a CPU the machine does not
// have) are thrown as TraceError from the run. `stats`, if given, receives
// the last replay's statistics when that replay ends (its workload is
// destroyed with the run), not while it runs.
// What a callback costs instead of the cost model's callback_ns
// (Workload::callback_cost_ns):
//   by_function (a trace loaded with costs_from_trace): the p50 of its
//     function's callbacks in the trace (a timer's function: its first
//     event's label; a function without a complete callback in the trace:
//     the p50 of all callbacks);
//   as_recorded (a kernel trace on its recorded machine): the length of the
//     kernel's callback of that timer nearest in jiffies, from its
//     timer_expire_entry to its _exit, as the recording ran it. A callback
//     that ran long (a vCPU the host stalled) lets jiffies move on inside
//     the run, as they did in the recording. Timers the kernel never fired
//     cost as by_function, or the model's.
struct ReplayCallbackCosts {
    bool by_function = false;
    bool as_recorded = false;
};
WorkloadFactory trace_replay(std::shared_ptr<const LoadedTrace> trace, TraceReplayStats* stats = nullptr,
                             ReplayCallbackCosts costs = {});

// The same from a file: summarize_trace() loads it for its summary, and
// each call of this factory loads `path` anew (tests and benchmarks; the
// CLI loads once).
TraceSummary summarize_trace(const std::string& path, TraceKind kind, std::optional<unsigned> hz);
WorkloadFactory trace_replay(const std::string& path, TraceKind kind, const TraceHeader& header,
                             TraceReplayStats* stats = nullptr);

} // namespace timersim
