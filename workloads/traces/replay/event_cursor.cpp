#include "workloads/traces/replay/event_cursor.hpp"

#include <algorithm>
#include <stdexcept>

namespace timersim {

EventCursor::EventCursor(const LoadedTrace::Data& data)
    : data_(data),
      pass_(data.events_kept() ? SharedPass::Reader() : data.passes->join(data.reopen, data.count, data.file)) {}

void EventCursor::use_chunk(std::size_t k, std::size_t i) {
    if (i >= data_.count) throw std::logic_error("EventCursor: an event beyond the trace");
    furthest_ = std::max(furthest_, i);
    // No later call asks for an event before furthest_ - kRing + 1.
    const std::size_t needed = furthest_ + 1 >= kRing ? (furthest_ + 1 - kRing) / SharedPass::kChunk : 0;
    auto* slot = static_cast<std::pair<std::size_t, std::shared_ptr<const SharedPass::Chunk>>*>(nullptr);
    for (auto& h : held_) {
        if (h.second && h.first == k) slot = &h;
        else if (h.second && h.first < needed) h.second.reset();
    }
    if (!slot) {
        for (auto& h : held_)
            if (!h.second) slot = &h;
        if (!slot) throw std::logic_error("EventCursor: more than three chunks at once");
        slot->first = k;
        slot->second = pass_.chunk(k);
    }
    if (needed > released_) {
        pass_.release(needed);
        released_ = needed;
    }
    chunk_ = slot->second.get();
    chunk_index_ = k;
}

} // namespace timersim
