// The events a replay reads (trace_replay.cpp), in the trace's order, with
// a look-ahead of a few: from LoadedTrace's chunks when the load kept them,
// else from a pass of the replay's own over the input
// (LoadedTrace::Data::reopen), through a ring of kRing events. Either way a
// replay holds at most kRing events of its own, so a trace too long to keep
// replays in memory bounded by its timers, not its length.
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

#include <array>
#include <cstddef>
#include <memory>

namespace timersim {

class EventCursor {
public:
    static constexpr std::size_t kRing = 64;

    explicit EventCursor(const LoadedTrace::Data& data);
    std::size_t size() const noexcept { return data_.count; }
    const trace_store::StoredEvent& at(std::size_t i) {
        if (!source_) return data_.at(i);
        while (read_ <= i) read_more();
        return ring_[i & (kRing - 1)];
    }

private:
    void read_more();

    const LoadedTrace::Data& data_;
    std::unique_ptr<TraceSource> source_; // null: the load kept the events
    std::array<trace_store::StoredEvent, kRing> ring_{};
    std::size_t read_ = 0; // events read from source_
};

} // namespace timersim
