#include "workloads/traces/replay/event_cursor.hpp"

#include "workloads/traces/input/trace_error.hpp"

namespace timersim {

EventCursor::EventCursor(const LoadedTrace::Data& data) : data_(data) {
    if (!data.events_kept()) source_ = data.reopen();
}

void EventCursor::read_more() {
    TraceEvent e;
    if (read_ >= data_.count || !source_->next(e))
        throw TraceError(data_.file, source_->line(), "events",
                         "the trace read again does not give the events it gave before");
    ring_[read_ & (kRing - 1)] = trace_store::stored_event(e);
    ++read_;
}

} // namespace timersim
