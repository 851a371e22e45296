// The first half of the kernel-trace replay (kernel_replay.hpp): the trace's
// timer_* lines copied out as events, each with its timer object
// (incarnation) and the next event of its CPU, and the lines that say a
// CPU lost events. Internal to sim/validate/.
#pragma once

#include "sim/validate/kernel_replay.hpp"
#include "wheel/core/jiffies.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::validate {

// Events and timer objects are numbered in 32 bits: an Event is copied
// for every timer line of the trace, and its size is validate's memory.
using EventIndex = std::uint32_t;
inline constexpr EventIndex kNoIncarnation = 0xFFFFFFFFu;
inline constexpr EventIndex kNoEvent = 0xFFFFFFFFu;
inline constexpr std::size_t kMaxEvents = kNoEvent - 1;
// Function names too (there are at most as many as events).
using FunctionIndex = std::uint32_t;
inline constexpr FunctionIndex kNoFunction = 0xFFFFFFFFu;

// CONFIG_NR_CPUS is at most 8192 (x86_64 MAXSMP).
inline constexpr std::uint32_t kMaxReplayCpus = 8192;

// One timer_* line, copied out of the reader's buffer: 80 bytes, one for
// every timer line of the trace. Fields ordered by size, so that it packs;
// what would be optional is a flag bit or, for numbers bounded below
// 0xFFFF, that sentinel: a CPU is below kMaxReplayCpus
// (read_replay_input() refuses others), an idx is 0..1023 (FtraceReader
// refuses others).
struct Event {
    static constexpr std::uint16_t kNone16 = 0xFFFF;
    static constexpr std::uint32_t kNoWideCpu = static_cast<std::uint32_t>(-1); // kNoCpu (timer_bases.hpp)

    std::uint64_t line = 0;
    std::uint64_t timestamp_ns = 0;
    std::uint64_t timer = 0;
    Jiffies expires = 0;
    FunctionIndex function = kNoFunction; // kNoFunction, or an index into ReplayInput::functions
    EventIndex incarnation = 0;       // which timer object (a timer_init starts a new one)
    EventIndex previous_incarnation = kNoIncarnation; // a timer_init's: the one it ends, if any
    EventIndex next_same_cpu = 0;     // index of the next event printed by the same CPU
    EventIndex next_same_timer = kNoEvent; // index of the next event with the same timer= (any CPU)
    std::uint16_t line_cpu = 0;
    FtraceEventType type = FtraceEventType::timer_init;
    bool deferrable : 1 = false;
    bool pinned : 1 = false;          // flags P (6.9+: the timer goes to BASE_LOCAL)
    bool consumed : 1 = false;        // applied out of print order (an equal-timestamp reordering)

    std::optional<Jiffies> baseclk() const noexcept { return has_baseclk_ ? std::optional(baseclk_) : std::nullopt; }
    std::optional<Jiffies> jiffies() const noexcept { return has_jiffies_ ? std::optional(jiffies_) : std::nullopt; }
    std::optional<std::uint32_t> cpu() const noexcept { return wide(cpu_); }
    std::optional<std::uint32_t> idx() const noexcept { return wide(idx_); }
    // Printed while line_cpu ran the remote expiry of this idle CPU's global
    // timers (6.9+: after its tmigr_handle_remote_cpu line, until the end of
    // that TIMER softirq); kNoWideCpu otherwise.
    std::uint32_t remote_cpu() const noexcept { return wide(remote_cpu_).value_or(kNoWideCpu); }
    // The same, inferred where the trace has no timer_migration events
    // (read_replay_input()); used only then.
    std::uint32_t inferred_remote_cpu() const noexcept { return wide(inferred_remote_cpu_).value_or(kNoWideCpu); }

    void set_baseclk(std::optional<Jiffies> v) noexcept {
        has_baseclk_ = v.has_value();
        baseclk_ = v.value_or(0);
    }
    void set_jiffies(std::optional<Jiffies> v) noexcept {
        has_jiffies_ = v.has_value();
        jiffies_ = v.value_or(0);
    }
    // Each below kNone16 (above); a CPU may also be kNoWideCpu.
    void set_cpu(std::optional<std::uint32_t> v) noexcept { cpu_ = narrow(v); }
    void set_idx(std::optional<std::uint32_t> v) noexcept { idx_ = narrow(v); }
    void set_remote_cpu(std::uint32_t cpu) noexcept { remote_cpu_ = narrow_cpu(cpu); }
    void set_inferred_remote_cpu(std::uint32_t cpu) noexcept { inferred_remote_cpu_ = narrow_cpu(cpu); }

private:
    static std::optional<std::uint32_t> wide(std::uint16_t v) noexcept {
        return v == kNone16 ? std::nullopt : std::optional<std::uint32_t>(v);
    }
    static std::uint16_t narrow(std::optional<std::uint32_t> v) noexcept {
        return v ? static_cast<std::uint16_t>(*v) : kNone16;
    }
    static std::uint16_t narrow_cpu(std::uint32_t cpu) noexcept {
        return cpu == kNoWideCpu ? kNone16 : static_cast<std::uint16_t>(cpu);
    }

    bool has_baseclk_ : 1 = false;    // (these two share the byte of the flags above)
    bool has_jiffies_ : 1 = false;
    Jiffies baseclk_ = 0;
    Jiffies jiffies_ = 0;
    std::uint16_t cpu_ = kNone16;
    std::uint16_t idx_ = kNone16;
    std::uint16_t remote_cpu_ = kNone16;
    std::uint16_t inferred_remote_cpu_ = kNone16;
};
static_assert(kMaxReplayCpus < Event::kNone16);
// One is copied for every timer line: its size is validate's memory, as
// docs/validation.md, docs/trace-format.md and docs/performance.md give it.
static_assert(sizeof(Event) == 80);

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
    // Every function= seen, once (Event::function indexes it). Not changed
    // after read_replay_input(): the replay's names are views of these.
    std::vector<std::string> functions;
};

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
