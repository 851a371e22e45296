#include "sim/machine/event_log.hpp"

#include <stdexcept>

namespace timersim {

namespace {
constexpr std::string_view event_name(TimerEvent e) {
    switch (e) {
    case TimerEvent::enqueue: return "enqueue";
    case TimerEvent::fire: return "fire";
    case TimerEvent::cancel: return "cancel";
    }
    return "?";
}
} // namespace

EventLog::EventLog(std::FILE* out) : out_(out) { buffer_.append(header); }

EventLog::~EventLog() {
    try {
        flush();
    } catch (...) {
        // The owner of the file reports write errors when it commits.
    }
}

void EventLog::add(std::string_view design, unsigned cpu, std::uint64_t time_ns, Jiffies jiffies, TimerEvent event,
                   std::uint64_t timer, Jiffies expires, const Placement* p, bool has_buckets) {
    auto out = std::back_inserter(buffer_);
    fmt::format_to(out, "{},{},{},{},{},{},{},", design, cpu, time_ns, jiffies, event_name(event), timer, expires);
    if (event == TimerEvent::enqueue && p) {
        if (has_buckets)
            fmt::format_to(out, "{},{},{}\n", p->level, p->slot, p->bucket_expiry);
        else
            fmt::format_to(out, ",,{}\n", p->bucket_expiry);
    } else {
        buffer_.append(std::string_view(",,\n"));
    }
    if (buffer_.size() > (1u << 16)) flush();
}

void EventLog::flush() {
    if (buffer_.size() == 0) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size())
        throw std::runtime_error("cannot write the event log");
    buffer_.clear();
}

} // namespace timersim
