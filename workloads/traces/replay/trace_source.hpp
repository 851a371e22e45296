// One way to read any trace: a TraceSource is a stream of trace v1 events
// (trace_event.hpp) with dense timer ids, whatever the input's layout: a
// timersim trace (TraceReader), or kernel text in any of its layouts
// (/sys/kernel/tracing/trace, trace-cmd report, perf script, trace.dat)
// through FtraceReader and FtraceImporter. Every command that replays a
// trace reads it through here: run and compare (load_trace), step
// (TraceFeed) and import (which writes the events out).
//
//   InputFile in(path);
//   auto source = open_trace_source(in, TraceKind::ftrace, HzChoice{.option = hz});
//   TraceEvent e;
//   while (source->next(e)) { ... e.timer, e.kind, expiry_jiffies(source->header(), e) ... }
//
// Kernel text is read twice (kernel_text.hpp): its HZ and its clock are
// decided from all of it (hz_inference.hpp) before the first event is
// converted; a timersim trace is read once. Neither is held in memory. Errors in the input throw TraceError (FILE:LINE: what
// (field)); an input that cannot be read, InputError.
#pragma once

#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_event.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace timersim {

enum class TraceKind : std::uint8_t { timersim, ftrace };

class TraceSource;
// Makes another pass over the same events, from their start: the same
// events with the same dense ids, read again from the input (a replay whose
// events were not kept in memory, trace_replay.hpp). Callable from several
// threads at once; each source it makes is for one thread. Throws what
// reading the input again throws (InputError).
using TraceReopener = std::function<std::unique_ptr<TraceSource>()>;

class TraceSource {
public:
    virtual ~TraceSource() = default;
    // The next event; its string_views (key.token, label, cb_key) are valid
    // until the next call.
    virtual bool next(TraceEvent& e) = 0;
    // The trace's clock. A timersim trace's header; kernel text's HZ as
    // resolved and its jiffies at time 0, from the first event that shows
    // them (so asking before the first next() reads ahead one event).
    virtual const TraceHeader& header() = 0;
    virtual std::uint64_t line() const = 0;          // the line of the event next() gave last
    virtual std::uint64_t skipped_lines() const = 0; // kernel text: lines of other events
    virtual const TraceFilterCounts& filter_counts() const = 0;
    // Kernel text: where its HZ came from (HzResolution::source); else empty.
    virtual const std::string& hz_source() const = 0;
    // Kernel text: what its first pass showed of the recording kernel
    // (kernel_version.hpp); else null.
    virtual const KernelVersionEvidence* kernel_evidence() const = 0;
    // Kernel text: the reader and the importer, for their statistics; else null.
    virtual const FtraceReader* kernel_reader() const = 0;
    virtual const FtraceImporter* kernel_importer() const = 0;
    // Kernel text: the recording kernel as resolved (resolve_kernel_version()
    // of kernel_evidence() and --kernel), before the first next() or
    // header(). A kernel before 4.2 prints no timer flags: its timers that
    // fired late are taken as deferrable (deferrable_inference.hpp).
    // Returns how many timers that is.
    virtual std::size_t use_kernel(const KernelVersionRange&) { return 0; }
    // Once the events are read to their end: what reads them again (no
    // observer sees that pass), or an empty function where the input
    // cannot be read again (a timersim trace whose InputFile was not kept
    // for reading again, input_file.hpp).
    virtual TraceReopener reopener() = 0;
    // Kernel text: the text from its start, unread, as an input more passes
    // are made of (InputFile::read_again()), for validate's model to read
    // (lost_history.hpp); else null.
    virtual std::unique_ptr<InputFile> kernel_text() { return nullptr; }
};

// `hz` applies to kernel text (a timersim trace's header fixes its clock).
// `filter` keeps only the events it names (the HZ of kernel text is still
// decided from all of it); `observer`, if given, sees every kernel timer_*
// event and TIMER_SOFTIRQ line (trace_costs.hpp) and must outlive the source.
// (kernel_source.cpp)
std::unique_ptr<TraceSource> open_trace_source(InputFile& in, TraceKind kind, const HzChoice& hz,
                                               const TraceFilter& filter = {}, FtraceObserver* observer = nullptr);

// A timersim trace alone (trace_source.cpp): what builds without the kernel
// layouts' libraries (the browser playground).
std::unique_ptr<TraceSource> open_timersim_source(InputFile& in, const TraceFilter& filter = {});
std::unique_ptr<TraceSource> open_timersim_source(std::FILE* in, std::string file_name);

} // namespace timersim
