// TraceFilter: which events of a trace a command keeps (--cpu, --function,
// --from/--to), applied by the readers before anything is imported,
// replayed or checked, and counted by reason for the reports.
//
//   TraceFilter f;
//   f.cpus = parse_cpu_list("0,2-3");        // the CPU an event happened on
//   f.function = "tcp_*";                     // glob, as set_ftrace_filter
//   f.from = parse_trace_time("1.5s");        // from the trace's first event
//   reader.set_filter(f);                     // FtraceReader or TraceReader
//   ... reader.filter_counts().kept, .dropped_by_time ...
//
// Semantics (docs/trace-format.md, "Filters"): the window [from, to) works
// as if the capture had started at `from` and stopped at `to`. Timers armed
// before `from` are unknown to what follows (their cancels are dropped, their
// fires replay nothing, like timers armed before a capture began); timers
// armed inside the window and due after `to` still fire in a replay, which
// runs on until its timers drain, but nothing recorded after `to` happens.
// An event dropped for several reasons is counted once, under the first of
// time, cpu, function.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// A point in a trace: ns after its first event (kernel text) or after its
// time 0 (a timersim trace), or, for kernel text only, an absolute trace
// timestamp as printed (`@SECONDS`).
struct TraceTime {
    std::uint64_t ns = 0;
    bool absolute = false;
    friend bool operator==(const TraceTime&, const TraceTime&) = default;
};

struct TraceFilter {
    std::optional<std::vector<bool>> cpus; // cpus[c]: keep events of CPU c (absent: every CPU)
    std::optional<std::string> function;   // glob over the callback's name
    std::optional<TraceTime> from;         // keep events at or after
    std::optional<TraceTime> to;           // keep events before

    bool active() const noexcept { return cpus || function || from || to; }
    bool keeps_cpu(std::uint32_t cpu) const noexcept {
        return !cpus || (cpu < cpus->size() && (*cpus)[cpu]);
    }
};

struct TraceFilterCounts {
    std::uint64_t kept = 0;
    std::uint64_t dropped_by_time = 0;     // outside --from/--to
    std::uint64_t dropped_by_cpu = 0;      // not on a --cpu CPU
    std::uint64_t dropped_by_function = 0; // callback not matching --function (or not known)
    std::uint64_t dropped() const noexcept { return dropped_by_time + dropped_by_cpu + dropped_by_function; }
    friend bool operator==(const TraceFilterCounts&, const TraceFilterCounts&) = default;
};

// Decides for one event and counts it. `function` is empty when the event's
// timer has no known callback; `relative_ns` is the event's time from the
// trace's first event (or time 0), `absolute_ns` its timestamp as printed
// (kernel text; the same as relative_ns for a timersim trace, where `@` is
// refused beforehand).
bool filter_event(const TraceFilter& filter, TraceFilterCounts& counts, std::uint32_t cpu,
                  std::string_view function, std::uint64_t relative_ns, std::uint64_t absolute_ns);

// Parsers for the options; each throws std::invalid_argument saying what is
// wrong with the text (the CLI prefixes the option's name).
// "0,2-3": CPU numbers and ranges, at most kMaxFilterCpu.
std::vector<bool> parse_cpu_list(std::string_view text);
// "1.5s", "200ms", "750us", "10ns" (a unit is required; at most 9 decimals
// in total precision), or "@1234.567890" (an absolute timestamp in seconds).
TraceTime parse_trace_time(std::string_view text);
// Glob as the kernel's set_ftrace_filter accepts: '*' any run, '?' one
// character, '[...]' a class; no other special characters.
bool glob_match(std::string_view pattern, std::string_view text) noexcept;
// Checks the pattern is well-formed (brackets closed, not empty).
void check_glob(std::string_view pattern);

inline constexpr std::uint32_t kMaxFilterCpu = 4095;

// "kept 120 of 200 events; dropped 50 by --from/--to, 30 by --cpu" (one
// phrase for text reports; `what` names the events: "timer events").
std::string describe_filter_counts(const TraceFilterCounts& counts, std::string_view what);
// The filter as options: "--cpu 0,2-3 --function 'tcp_*' --from 1.5s --to @12.000000000".
std::string describe_filter(const TraceFilter& filter);
// The filter and its counts as a JSON object: {"cpu": "0,2-3", "function":
// "tcp_*", "from_ns": N, "to_ns": N (or "from_timestamp_ns" for @), "kept":
// N, "dropped": {"time": N, "cpu": N, "function": N}}; absent options are
// left out. A value: the report that shows it writes it (its strings
// escaped as every report's are).
nlohmann::ordered_json filter_json(const TraceFilter& filter, const TraceFilterCounts& counts);

} // namespace timersim
