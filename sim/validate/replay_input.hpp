// The first half of the kernel-trace replay (kernel_replay.hpp): the trace's
// timer_* lines copied out as events, each with its timer object
// (incarnation) and the next event of its CPU, and the lines that say a
// CPU lost events. Internal to sim/validate/.
#pragma once

#include "sim/validate/kernel_replay.hpp"
#include "wheel/core/jiffies.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace timersim::validate {

// Events and timer objects are numbered in 32 bits: an Event is copied
// for every timer line of the trace, and its size is validate's memory.
using EventIndex = std::uint32_t;
inline constexpr EventIndex kNoIncarnation = 0xFFFFFFFFu;
inline constexpr EventIndex kNoEvent = 0xFFFFFFFFu;
inline constexpr std::size_t kMaxEvents = kNoEvent - 1;

// One timer_* line, copied out of the reader's buffer (fields ordered by
// size, so that it packs).
struct Event {
    std::uint64_t line = 0;
    std::uint64_t timestamp_ns = 0;
    std::uint64_t timer = 0;
    Jiffies expires = 0;
    std::optional<Jiffies> baseclk;
    std::optional<Jiffies> jiffies;
    std::string_view function;        // empty, or one of ReplayInput::functions
    std::optional<std::uint32_t> cpu;
    std::optional<std::uint32_t> idx;
    std::uint32_t line_cpu = 0;
    // Printed while line_cpu ran the remote expiry of this idle CPU's global
    // timers (6.9+: after its tmigr_handle_remote_cpu line, until the end of
    // that TIMER softirq); kNoCpu otherwise.
    std::uint32_t remote_cpu = static_cast<std::uint32_t>(-1);
    // The same, inferred where the trace has no timer_migration events
    // (infer_remote_expiries() in replay_input.cpp); used only then.
    std::uint32_t inferred_remote_cpu = static_cast<std::uint32_t>(-1);
    EventIndex incarnation = 0;       // which timer object (a timer_init starts a new one)
    EventIndex previous_incarnation = kNoIncarnation; // a timer_init's: the one it ends, if any
    EventIndex next_same_cpu = 0;     // index of the next event printed by the same CPU
    EventIndex next_same_timer = kNoEvent; // index of the next event with the same timer= (any CPU)
    FtraceEventType type = FtraceEventType::timer_init;
    bool deferrable = false;
    bool pinned = false;              // flags P (6.9+: the timer goes to BASE_LOCAL)
    bool consumed = false;            // applied out of print order (an equal-timestamp reordering)
};
// One is copied for every timer line: its size is validate's memory, as
// docs/validation.md and docs/kernel-traces.md give it.
static_assert(sizeof(Event) == 128);

// A line that says events are missing: "CPU:N [LOST M EVENTS]" (also
// "[M EVENTS DROPPED]") or "##### CPU N buffer started ####".
struct LostMarker {
    std::uint64_t line = 0;
    unsigned cpu = 0;
    std::string what;
};

struct ReplayInput {
    std::vector<Event> events;
    std::vector<LostMarker> markers;
    std::size_t incarnations = 0; // distinct timer objects (ids 0..incarnations-1)
    // Every function= seen, once: the events' and the replay's function
    // names are views of these (a node set, so they stay put when it grows).
    struct NameHash {
        using is_transparent = void; // find() takes a string_view: no copy to look a name up
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_set<std::string, NameHash, std::equal_to<>> functions;
};

// CONFIG_NR_CPUS is at most 8192 (x86_64 MAXSMP).
inline constexpr std::uint32_t kMaxReplayCpus = 8192;

// The recording kernel of ftrace text in memory, from a pass over all of
// it (kernel_version.hpp), for a replay of text given none.
KernelVersionResolution kernel_version_of_text(std::string_view text, const std::string& file_name,
                                               std::optional<unsigned> hz);

// Reads every timer_* event `reader` gives (a reader made with options.hz,
// not yet read; this sets its filter and --force-hz) and fills result's
// file, kernel, kernel_6_9, kernel_classic, classic_oldest_first, hz, cpus,
// timers, timer_events and workload_start_line. Throws TraceError, also for
// a kernel whose timer design it cannot tell (options.kernel is required:
// std::logic_error without it).
ReplayInput read_replay_input(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result);

} // namespace timersim::validate
