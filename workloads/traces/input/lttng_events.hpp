// The text of an LTTng trace's events (lttng_ctf.hpp says what it is), made
// from libbabeltrace2's messages: a stream's events into their own
// temporary file as its simple sink receives them, then every stream merged
// by time under the header.
//
//   LttngText text(name);
//   LttngStreamText& s = text.add_stream();    // one per source.ctf.fs output port
//   s.message(m) ... s.finish();               // from the sink's consume function
//   text.throw_error();                        // after a failed graph run: ours, if it was ours
//   text.write_merged(fd);
//
// message() and finish() never throw (they run under libbabeltrace2's C
// frames): they return false, and keep the error for throw_error().
#pragma once

#include "workloads/traces/input/forked_text.hpp"
#include "workloads/traces/input/kernel_line.hpp"

#include <babeltrace2/babeltrace.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>

namespace timersim {

class LttngText;

class LttngStreamText {
public:
    LttngStreamText(LttngText& text, unsigned index);
    bool message(const bt_message* m) noexcept;
    bool finish() noexcept;

private:
    friend class LttngText;
    void stream_beginning(const bt_message* m);
    void event(const bt_message* m);
    void lost(std::uint64_t count, bool known);
    void show_lost(std::uint64_t ns); // "CPU:N [LOST n EVENTS]" for the discarded events not yet shown
    void flush();

    LttngText& text_;
    unsigned index_;
    Fd file_;
    std::string out_;
    bool kernel_ = true;          // its trace's domain is "kernel"
    TimerFlagsText flags_text_ = TimerFlagsText::word;
    bool any_ = false;            // an event was rendered
    std::uint64_t last_ns_ = 0;   // its time, as shown
    unsigned cpu_ = 0;            // its CPU
    std::uint64_t lost_ = 0;      // discarded events not yet shown
    bool lost_unknown_ = false;   // discarded packets: an unknown number
    std::string comm_ = "<...>";  // the task the last sched_switch switched to
    std::int64_t tid_ = 0;
};

class LttngText {
public:
    explicit LttngText(std::string name) : name_(std::move(name)) {}
    LttngStreamText& add_stream();
    std::size_t streams() const noexcept { return streams_.size(); }
    // Throws the error a stream kept, if any.
    void throw_error() const;
    // The header, then every stream's lines in time order. Throws
    // InputError (a temporary file that cannot be read or written, no
    // kernel trace).
    void write_merged(int fd);

private:
    friend class LttngStreamText;
    void keep_error(const char* what) noexcept;

    std::string name_;
    std::deque<LttngStreamText> streams_; // stable addresses: each sink holds its own
    std::string error_;
    // From the first kernel trace's environment.
    bool kernel_seen_ = false;
    std::string kernel_release_, hostname_, tracer_;
    std::map<std::string, std::uint64_t> skipped_by_domain_; // events of other traces
    std::uint64_t backwards_ = 0;                           // events shown at an earlier one's time
    std::uint64_t most_backwards_ns_ = 0;
};

} // namespace timersim
