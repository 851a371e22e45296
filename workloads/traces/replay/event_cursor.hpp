// The events a replay reads (trace_replay.cpp), in the trace's order, with
// a look-ahead of a few: from LoadedTrace's chunks when the load kept them,
// else from a pass over the input (LoadedTrace::Data::reopen) that the
// replays running at the same time share (shared_pass.hpp: compare's
// designs on their threads read and parse the input once between them).
// Either way a replay holds a few chunks at most, so a trace too long to
// keep replays in memory bounded by its timers, not its length.
//
//   EventCursor events(data);
//   for (std::size_t i = 0; i < events.size(); ++i) {
//       const StoredEvent& e = events.at(i);      // valid until at(i + kRing)
//       if (i + 24 < events.size()) events.at(i + 24); // looking ahead
//   }
//
// at(i) takes i at or after the last i minus kRing + 1 (a replay reads in
// order and looks ahead by less than kRing); it throws TraceError when the
// input read again ends early (a file that changed is an InputError first).
// Internal to workloads/traces.
#pragma once

#include "workloads/traces/replay/loaded_trace_data.hpp"
#include "workloads/traces/replay/shared_pass.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <utility>

namespace timersim {

class EventCursor {
public:
    static constexpr std::size_t kRing = 64;

    explicit EventCursor(const LoadedTrace::Data& data);
    std::size_t size() const noexcept { return data_.count; }
    const trace_store::StoredEvent& at(std::size_t i) {
        if (data_.events_kept()) return data_.at(i);
        const std::size_t k = i / SharedPass::kChunk;
        if (k != chunk_index_ || !chunk_) use_chunk(k, i);
        return (*chunk_)[i % SharedPass::kChunk];
    }

private:
    // Makes chunk k current (read by the shared pass if not held), for
    // event i; lets go of the chunks no later call can need.
    void use_chunk(std::size_t k, std::size_t i);

    const LoadedTrace::Data& data_;
    SharedPass::Reader pass_; // when the load did not keep the events
    // The chunks held: the current one, the one before (looking back up to
    // kRing) and the one after (looking ahead), by index.
    std::array<std::pair<std::size_t, std::shared_ptr<const SharedPass::Chunk>>, 3> held_{};
    const SharedPass::Chunk* chunk_ = nullptr;
    std::size_t chunk_index_ = 0;
    std::size_t furthest_ = 0; // the highest i asked for
    std::size_t released_ = 0; // the chunks below it are let go
};

} // namespace timersim
