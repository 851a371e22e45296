// EventQueue: pending events of the discrete-event engine, ordered by
// (time, insertion sequence). Two events at the same nanosecond come out in
// the order they were scheduled, so a run never depends on heap internals:
// the same inputs give the same event order on every platform.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace timersim {

template <class Payload>
class EventQueue {
public:
    struct Event {
        std::uint64_t time_ns;
        std::uint64_t seq;
        Payload payload;
    };

    void reserve(std::size_t n) {
        std::vector<Event> storage;
        storage.reserve(n);
        heap_ = Heap(Later{}, std::move(storage));
    }
    void push(std::uint64_t time_ns, const Payload& payload) { heap_.push(Event{time_ns, next_seq_++, payload}); }
    bool empty() const noexcept { return heap_.empty(); }
    std::size_t size() const noexcept { return heap_.size(); }
    const Event& top() const { return heap_.top(); }
    // Time of the earliest event; UINT64_MAX when empty.
    std::uint64_t next_time() const noexcept { return heap_.empty() ? UINT64_MAX : heap_.top().time_ns; }
    Event pop() {
        Event e = heap_.top();
        heap_.pop();
        return e;
    }

private:
    struct Later {
        bool operator()(const Event& a, const Event& b) const noexcept {
            return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
        }
    };
    using Heap = std::priority_queue<Event, std::vector<Event>, Later>;
    Heap heap_;
    std::uint64_t next_seq_ = 0;
};

} // namespace timersim
