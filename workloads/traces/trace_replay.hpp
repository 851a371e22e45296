// Replaying a trace on the simulated machine: a Workload that streams a
// timersim trace (format v1) or kernel ftrace text from its file, in constant
// memory, and applies each event at its time on its CPU.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/traces/trace_event.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace timersim {

enum class TraceKind : std::uint8_t { timersim, ftrace };

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

// The clock a trace fixes (ftrace text has no HZ: `hz` gives it) and the
// time of its last event, from one streaming pass. Throws TraceError.
struct TraceSummary {
    TraceHeader header;
    std::uint64_t last_event_ns = 0;
    std::uint64_t events = 0;
    unsigned cpus = 1; // highest cpu= seen + 1
};
TraceSummary summarize_trace(const std::string& path, TraceKind kind, std::optional<unsigned> hz);

// A factory for WorkloadSpec: each call opens `path` anew. Errors in the
// trace are thrown as TraceError (FILE:LINE: what (field)) from the run.
// `stats`, if given, receives the last replay's statistics.
WorkloadFactory trace_replay(const std::string& path, TraceKind kind, const TraceHeader& header,
                             TraceReplayStats* stats = nullptr);

} // namespace timersim
