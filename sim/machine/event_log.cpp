#include "sim/machine/event_log.hpp"

#include <stdexcept>

namespace timersim {

namespace {

constexpr std::string_view event_name(TimerEvent e) {
    switch (e) {
    case TimerEvent::enqueue: return "enqueue";
    case TimerEvent::fire: return "fire";
    case TimerEvent::cancel: return "cancel";
    case TimerEvent::cascade: return "cascade";
    case TimerEvent::softirq_start: return "softirq_start";
    case TimerEvent::softirq_end: return "softirq_end";
    }
    return "?";
}

template <class T>
void field(fmt::memory_buffer& out, const std::optional<T>& v) {
    out.push_back(',');
    if (v) fmt::format_to(std::back_inserter(out), "{}", *v);
}

template <class... T>
void fields(fmt::memory_buffer& out, const std::optional<T>&... v) {
    (field(out, v), ...);
}

// RFC 4180: a name with a comma, a quote or a line break is quoted, quotes
// doubled (trace keys and labels have no whitespace, but may have commas).
void text_field(fmt::memory_buffer& out, std::string_view s) {
    out.push_back(',');
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(s);
        return;
    }
    out.push_back('"');
    for (const char c : s) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
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

void EventLog::add(std::string_view design, const EventRow& r) {
    fmt::format_to(std::back_inserter(buffer_), "{},{},{},{},{}", design, r.cpu, r.time_ns, r.jiffies,
                   event_name(r.event));
    fields(buffer_, r.timer, r.expires, r.level, r.idx, r.bucket_expiry, r.clk);
    text_field(buffer_, r.name);
    text_field(buffer_, r.label);
    fields(buffer_, r.from_level, r.from_idx, r.expired, r.cascade_moves, r.cost_ns);
    buffer_.push_back('\n');
    if (buffer_.size() > (1u << 16)) flush();
}

void EventLog::flush() {
    if (buffer_.size() == 0) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size())
        throw std::runtime_error("cannot write the event log");
    buffer_.clear();
}

} // namespace timersim
