// TraceReader: streams a timersim trace (format v1, docs/trace-format.md)
// event by event. Memory stays constant apart from the map of timer ids: one
// fixed line buffer, no allocation per event (lines are parsed in place with
// std::string_view and std::from_chars).
//
//   std::ifstream in("run.trace");
//   TraceReader reader(in, "run.trace");      // reads and checks the header
//   TraceEvent e;
//   while (reader.next(e)) { ... e.timer is a dense id 0, 1, 2 ... }
//
// Every problem with the input throws TraceError ("FILE:LINE: what (field)").
#pragma once

#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/layouts/trace_event.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"

#include <cstdint>
#include <cstdio>
#include <istream>
#include <memory>
#include <string>

namespace timersim {

inline constexpr std::size_t kMaxTraceLine = 4096;

class TraceReader {
public:
    TraceReader(std::istream& in, std::string file_name);
    TraceReader(std::FILE* in, std::string file_name);
    explicit TraceReader(InputFile& in); // any file, "-", compressed or not (input_file.hpp); named in.name()
    ~TraceReader();
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    const TraceHeader& header() const noexcept;

    // The next event, or false at the end of the input. event.label and
    // event.key.token point into the line buffer: valid until the next call
    // (timer_key(event.timer) has a copy that lives as long as the reader).
    bool next(TraceEvent& event);

    // Keep only the events `filter` names (trace_filter.hpp): --from/--to
    // against the event's time (ns from the trace's time 0; '@' times are
    // for kernel traces and must not be given), --cpu against cpu= (an event
    // without one is CPU 0's, where the replay runs it), --function against
    // the callback name of the timer's label= (the part before a
    // "[module]"), from this event or the timer's last event with one.
    // Dropped events take no dense id. Call before next().
    void set_filter(TraceFilter filter);
    const TraceFilterCounts& filter_counts() const noexcept;

    const std::string& file_name() const noexcept;
    std::uint64_t line() const noexcept; // line of the last event or error
    std::uint64_t events() const noexcept; // events returned so far

    // Distinct timers seen so far and the key each dense id stands for.
    std::size_t timer_count() const noexcept;
    TimerKey timer_key(std::uint32_t id) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace timersim
