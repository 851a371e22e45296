// The events of a timersim trace (format v1, docs/trace-format.md): what
// TraceReader returns, what TraceWriter writes and what the ftrace importer
// produces.
//
// A trace is a header (HZ and the jiffies value at time 0) followed by events
// in non-decreasing simulated time. Each event arms, modifies or cancels one
// timer, named by a 64-bit number or a symbolic token (e.g. the hashed pointer
// ftrace prints); readers map both to dense ids 0, 1, 2... in order of first
// appearance.
#pragma once

#include "wheel/core/clock.hpp"
#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace timersim {

struct TraceHeader {
    unsigned hz = 0;            // CONFIG_HZ, 1..kMaxHz; 0 until known (no HZ is assumed)
    Jiffies start_jiffies = 0;  // jiffies at time 0
};

// The clock a trace fixes for the run that replays it.
constexpr Clock clock_of(const TraceHeader& header) noexcept {
    return {header.hz, header.start_jiffies, ClockSource::trace};
}

enum class TraceEventKind : std::uint8_t {
    arm,     // add_timer()/mod_timer(): on a pending timer it behaves like modify
    modify,  // mod_timer(): re-arms a pending timer, arms an idle one
    cancel,  // del_timer(): nothing happens if the timer is not pending
};

// How an arm/modify gives the new expiry.
enum class ExpiryForm : std::uint8_t {
    none,        // cancel
    in_jiffies,  // in=Nj: expires = jiffies at the event + N
    in_ns,       // in=N<ns|us|ms|s>: N ns from the event, rounded up to whole jiffies
    at_jiffies,  // at=J: expires = J (absolute, may be in the past)
};

// Timer flags carried by a trace (the timer_setup() flags that matter).
struct TraceFlags {
    bool deferrable = false; // TIMER_DEFERRABLE
    bool pinned = false;     // TIMER_PINNED
    bool irqsafe = false;    // TIMER_IRQSAFE
    bool any() const noexcept { return deferrable || pinned || irqsafe; }
    friend bool operator==(const TraceFlags&, const TraceFlags&) = default;
};

// A timer as named in the trace: a number (all decimal digits) or a token
// (anything else without whitespace, at most kMaxTimerToken bytes).
struct TimerKey {
    bool symbolic = false;
    std::uint64_t number = 0;  // when !symbolic
    std::string_view token;    // when symbolic
    friend bool operator==(const TimerKey& a, const TimerKey& b) noexcept {
        return a.symbolic == b.symbolic && (a.symbolic ? a.token == b.token : a.number == b.number);
    }
};

inline constexpr std::size_t kMaxTimerToken = 64;
inline constexpr std::size_t kMaxLabel = 255;
inline constexpr std::uint32_t kMaxTraceCpu = 0x3FFFF; // TIMER_CPUMASK

struct TraceEvent {
    std::uint64_t time_ns = 0;
    TraceEventKind kind = TraceEventKind::arm;
    std::uint32_t timer = 0;  // dense id (set by readers; ignored by the writer)
    TimerKey key;             // as written in the trace
    ExpiryForm expiry = ExpiryForm::none;
    std::uint64_t expiry_value = 0; // jiffies (in_jiffies, at_jiffies) or ns (in_ns)
    TraceFlags flags;
    std::optional<std::uint32_t> cpu;
    std::string_view label;   // e.g. the kernel callback name; empty if none
    // Annotations from a kernel trace (timersim import): the bucket index the
    // kernel's timer_start reported (idx=) and the kernel's jiffies at the
    // event (expires - timeout). Replays may compare against them.
    std::optional<std::uint32_t> kidx;
    std::optional<Jiffies> know;
    // cb=: the event happened inside this timer's callback (the timer that
    // fired). Replays hold it until that timer fires and apply it there.
    // `cb` is the dense id (set by readers), `cb_key` the name as written
    // (the writer writes cb= when cb_key is set).
    std::optional<std::uint32_t> cb;
    std::optional<TimerKey> cb_key;
};

// Readers' string_views (key.token, label) stay valid until the next call to
// next() on the same reader.

std::string_view to_string(TraceEventKind kind) noexcept;

// The jiffies value at simulated time t: start_jiffies plus the number of the
// last tick at or before t, tick n being at floor(n * 1e9 / HZ) ns (as
// wheel/core/jiffies.hpp's tick_time_ns).
Jiffies jiffies_at(const TraceHeader& header, std::uint64_t time_ns) noexcept;

// Number of the last tick at or before time_ns (tick_index_at()).
std::uint64_t ticks_at(unsigned hz, std::uint64_t time_ns) noexcept;

// The absolute expiry an arm/modify asks for, given the header (in_ns rounds
// up to whole jiffies like msecs_to_jiffies()). Only for arm/modify.
Jiffies expiry_jiffies(const TraceHeader& header, const TraceEvent& event) noexcept;

} // namespace timersim
