// TraceWriter: writes a timersim trace (format v1, docs/trace-format.md) to a
// FILE* (e.g. AtomicOutputFile::get()) or a std::ostream, buffering in
// memory and writing in large blocks. Everything it writes reads back through
// TraceReader as the same events.
//
//   TraceWriter out(file, TraceHeader{.hz = 250, .start_jiffies = 4294892296});
//   out.write(event);
//   out.flush();   // then commit the file
#pragma once

#include "workloads/traces/layouts/trace_event.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <ostream>
#include <string_view>

namespace timersim {

class TraceWriter {
public:
    // Writes the header line at once (then the optional comment lines).
    TraceWriter(std::FILE* out, const TraceHeader& header, std::string_view comment = {});
    TraceWriter(std::ostream& out, const TraceHeader& header, std::string_view comment = {});
    ~TraceWriter(); // flushes, ignoring errors: call flush() to see them
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Throws std::invalid_argument for an event the format cannot carry: time
    // before the previous event's, a cancel with an expiry, an arm/modify
    // without one, a token or label that is empty, too long, or has spaces or
    // '='/'#' where they would change the meaning, a cpu or kidx out of range.
    // cb= is written from event.cb_key (event.cb, the dense id, is ignored).
    void write(const TraceEvent& event);

    // "# text" (each line of `text` becomes one comment line).
    void comment(std::string_view text);

    // Writes out everything buffered; throws std::runtime_error on failure.
    void flush();

    std::uint64_t events() const noexcept { return events_; }

private:
    void header_line(const TraceHeader& header, std::string_view comment);
    void maybe_flush() {
        if (buffer_.size() >= kFlushAt) flush();
    }
    static constexpr std::size_t kFlushAt = 64 * 1024;
    std::FILE* file_ = nullptr;
    std::ostream* stream_ = nullptr;
    fmt::memory_buffer buffer_;
    std::uint64_t last_time_ = 0;
    std::uint64_t events_ = 0;
};

} // namespace timersim
