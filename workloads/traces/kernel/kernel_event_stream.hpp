// The one reading of a kernel trace's timer events, for every replay of it:
// `timersim validate` (sim/validate/) and the import behind run, compare
// and step (ftrace_import.hpp) both take their events from here, so they
// see the same events, with the same neighbours, and read each
// timer_cancel by the same rule (cancel_meaning.hpp).
//
//   IncarnationSlots slots;
//   KernelEventStream stream(reader, {.file = name}, slots);
//   while (KernelEvent* e = stream.next()) {
//       if (e->type == FtraceEventType::timer_cancel)
//           switch (stream.cancel_meaning(*e)) ...   // its neighbours are read
//       stream.take_markers_before(e->line, [](const LostMarker& m) {...});
//   }
//
// A replay looks a little ahead of the event it replays, never far: the
// same CPU's next two events (is a timer_cancel the detach of an expiry?
// does a run go on at later jiffies?) and the events printed with the same
// timestamp (an equal-timestamp reordering across CPUs). The stream keeps
// a window of events, from the one replayed to the last one read, and
// hands out the next one once everything it may look at is in the window:
// an event with a later timestamp, and the CPU's next events or the time
// past which they would no longer count (kDetachReachNs, kSameRunGapNs). A
// timer_cancel waits for its timer's next event. Memory is the window, the
// timer objects alive and the names, not the trace.
//
// Timer objects are numbered by IncarnationSlots: a number ends with the
// object (the timer_init of its timer= that starts another), and is reused
// once the consumer holds nothing of it.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/cancel_meaning.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// Timer objects are numbered in 32 bits, reused (IncarnationSlots): the
// numbers alive at once are the trace's live timers, not its timer_inits.
using IncarnationIndex = std::uint32_t;
inline constexpr IncarnationIndex kNoIncarnation = 0xFFFFFFFFu;
// Events are numbered from the trace's first.
using EventSeq = std::uint64_t;
inline constexpr EventSeq kNoEvent = ~EventSeq{0};
// Function and module names too (there are at most as many as events;
// kNoFunction, kernel_fires.hpp, for none).
using FunctionIndex = std::uint32_t;

// CONFIG_NR_CPUS is at most 8192 (x86_64 MAXSMP).
inline constexpr std::uint32_t kMaxKernelCpus = 8192;

// How many CPUs a kernel trace has, counted as its timer events go by:
// `cpus` (start at 1), raised past the [CPU] column and the cpu= of `e`
// (below kMaxKernelCpus). validate sizes its wheels by it, and run and
// compare keep the lines saying a CPU lost events of those CPUs only.
inline std::uint32_t trace_cpus_with(const FtraceEvent& e, std::uint32_t cpus) noexcept {
    for (const std::uint32_t cpu : {e.line_cpu, e.cpu.value_or(0)})
        if (cpu < kMaxKernelCpus && cpu >= cpus) cpus = cpu + 1;
    return cpus;
}

// One timer_* line, copied out of the reader's buffer. Fields ordered by
// size, so that it packs; what would be optional is a flag bit or, for
// numbers bounded below 0xFFFF, that sentinel: a CPU is below
// kMaxKernelCpus (the stream refuses others), an idx is 0..1023
// (FtraceReader refuses others).
struct KernelEvent {
    static constexpr std::uint16_t kNone16 = 0xFFFF;
    static constexpr std::uint32_t kNoWideCpu = static_cast<std::uint32_t>(-1);

    std::uint64_t line = 0;
    std::uint64_t timestamp_ns = 0;
    std::uint64_t timer = 0;
    Jiffies expires = 0;
    EventSeq next_same_cpu = kNoEvent; // the next event printed by the same CPU, once read (next_same_cpu_read)
    FunctionIndex function = kNoFunction; // kNoFunction, or an index into KernelEventStream::functions()
    FunctionIndex module = kNoFunction;   // "function=fn [module]": an index into KernelEventStream::modules()
    IncarnationIndex incarnation = 0;       // which timer object (a timer_init starts a new one)
    IncarnationIndex previous_incarnation = kNoIncarnation; // a timer_init's: the one it ends, if any
    std::uint16_t line_cpu = 0;
    FtraceEventType type = FtraceEventType::timer_init;
    bool deferrable : 1 = false;
    bool pinned : 1 = false;          // flags P (6.9+: the timer goes to BASE_LOCAL)
    bool consumed : 1 = false;        // applied out of print order (a consumer's mark: validate's reordering)
    bool next_same_cpu_read : 1 = false; // next_same_cpu is set
    bool next_of_timer_read : 1 = false; // the next event with the same timer= (any CPU) was read:
    bool next_of_timer_detaches : 1 = false; // ... and it makes this timer_cancel an expiry's detach (detaches_for())
    bool irqsafe : 1 = false;         // flags I
    bool flags_known : 1 = false;     // the line had flags= (before 4.2 none is printed)
    bool next_of_timer_is_cpus_next : 1 = false; // ... and it was also the next event its CPU printed

    std::optional<Jiffies> baseclk() const noexcept { return has_baseclk_ ? std::optional(baseclk_) : std::nullopt; }
    // When the event was traced, if the line tells (FtraceEvent::jiffies()).
    std::optional<Jiffies> jiffies() const noexcept { return has_jiffies_ ? std::optional(jiffies_) : std::nullopt; }
    std::optional<std::uint32_t> cpu() const noexcept { return wide(cpu_); }
    std::optional<std::uint32_t> idx() const noexcept { return wide(idx_); }
    // A timer_cancel's: the idx= its timer was queued at, if the trace
    // shows it pending (its last timer_start since its last cancel or
    // expiry); kNone16 otherwise.
    std::uint16_t queued_idx() const noexcept { return queued_idx_; }
    void set_queued_idx(std::uint16_t v) noexcept { queued_idx_ = v; }
    // Printed while line_cpu ran the remote expiry of this idle CPU's global
    // timers (6.9+: after its tmigr_handle_remote_cpu line, until the end of
    // that TIMER softirq, or as inferred where the trace has no
    // timer_migration events); kNoWideCpu otherwise.
    std::uint32_t remote_cpu() const noexcept { return wide(remote_cpu_).value_or(kNoWideCpu); }

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
    void set_remote_cpu(std::uint32_t cpu) noexcept { remote_cpu_ = cpu == kNoWideCpu ? kNone16 : narrow(cpu); }

private:
    static std::optional<std::uint32_t> wide(std::uint16_t v) noexcept {
        return v == kNone16 ? std::nullopt : std::optional<std::uint32_t>(v);
    }
    static std::uint16_t narrow(std::optional<std::uint32_t> v) noexcept {
        return v ? static_cast<std::uint16_t>(*v) : kNone16;
    }

    bool has_baseclk_ : 1 = false;
    bool has_jiffies_ : 1 = false;
    Jiffies baseclk_ = 0;
    Jiffies jiffies_ = 0;
    std::uint16_t cpu_ = kNone16;
    std::uint16_t idx_ = kNone16;
    std::uint16_t remote_cpu_ = kNone16;
    std::uint16_t queued_idx_ = kNone16;
};
static_assert(kMaxKernelCpus < KernelEvent::kNone16);
// One is kept for every event of the window (docs/validation.md).
static_assert(sizeof(KernelEvent) == 88);

// What cancel_meaning.hpp's rules read of an event.
inline CancelNeighbour neighbour(const KernelEvent& e) noexcept {
    static_assert(KernelEvent::kNone16 == CancelNeighbour::kNoIdx);
    const std::uint16_t idx = e.type == FtraceEventType::timer_cancel ? e.queued_idx()
                              : e.idx()                                 ? static_cast<std::uint16_t>(*e.idx())
                                                                        : CancelNeighbour::kNoIdx;
    return {e.type, e.timer, e.timestamp_ns, e.line_cpu, idx};
}

// A line that says events are missing: "CPU:N [LOST M EVENTS]" (also
// "[M EVENTS DROPPED]") or "##### CPU N buffer started ####".
struct LostMarker {
    std::uint64_t line = 0;
    unsigned cpu = 0;
    std::string what;
};
// The marker `text` (a line the reader passes as other_line()) is, if it
// is one. "buffer started" is trace-cmd report's first line of a CPU's
// buffer: what that CPU traced before is not in the trace.
std::optional<LostMarker> lost_marker_of(std::uint64_t line, std::string_view text);

// The numbers of timer objects. The stream takes one for each new object;
// the consumer ends one when the object's timer= starts another (its
// timer_init handled), and frees the ended ones it holds nothing of, now
// and then (sweep()): its state for a number is then reset, and the number
// serves a later object.
class IncarnationSlots {
public:
    IncarnationIndex allocate();
    // Numbers handed out so far: a consumer's arrays by object are this long.
    std::size_t size() const noexcept { return size_; }
    // How many objects were numbered before the one numbered i now: the
    // order the trace first shows them in (as the numbers were, before any
    // served twice).
    std::uint64_t birth(IncarnationIndex i) const noexcept { return birth_[i]; }
    void end(IncarnationIndex i) { ended_.push_back(i); }
    // Enough ended to be worth a sweep (amortised: at least half as many as
    // are numbered).
    bool sweep_due() const noexcept { return ended_.size() >= std::max<std::size_t>(1024, size_ / 2); }
    // Frees every ended number held(i) is false for, after reset(i).
    template <class Held, class Reset>
    void sweep(Held&& held, Reset&& reset) {
        std::size_t kept = 0;
        for (const IncarnationIndex i : ended_) {
            if (held(i)) {
                ended_[kept++] = i;
                continue;
            }
            reset(i);
            free_.push_back(i);
        }
        ended_.resize(kept);
    }

private:
    std::size_t size_ = 0;
    std::uint64_t born_ = 0;
    std::vector<std::uint64_t> birth_; // by number
    std::vector<IncarnationIndex> free_;
    std::vector<IncarnationIndex> ended_;
};

// Which remote expiries the stream marks (KernelEvent::remote_cpu()):
// none (before 4.8 no CPU expires another's timers; or not wanted); as the
// trace's tmigr_handle_remote_cpu lines say (6.9+); inferred from the timer
// events, for a 6.9+ trace without timer_migration events
// (remote_inference.hpp).
enum class RemoteMarks : std::uint8_t { none, from_lines, inferred };

struct KernelStreamOptions {
    std::string file;               // named in errors
    // CPUs the trace has, from a first pass over it: an event of another
    // is refused (the file changed between passes). Without, any CPU
    // below kMaxKernelCpus.
    std::optional<std::uint32_t> cpus;
    RemoteMarks remote = RemoteMarks::from_lines;
    // Also sees every line the reader passes (the stream observes the
    // reader; this one keeps seeing them through it).
    FtraceObserver* also = nullptr;
};

struct KernelStreamCounts {
    std::uint64_t events = 0;            // timer events read
    std::uint64_t timers = 0;            // distinct timer= read
    std::uint64_t inferred_expiries = 0; // RemoteMarks::inferred: expiries taken as remote
    std::uint64_t inferred_runs = 0;     // ... and the remote runs they make
};

// The timer events of a trace, in print order, with a window ahead of the
// one handed out (above). Throws TraceError for a line it refuses.
class KernelEventStream {
public:
    // Reads with `reader` (not yet read; its filter and HZ set before the
    // first next()): observes it until the end of the trace or the
    // stream's end, whichever comes first.
    KernelEventStream(FtraceReader& reader, KernelStreamOptions options, IncarnationSlots& slots);
    ~KernelEventStream();
    KernelEventStream(const KernelEventStream&) = delete;
    KernelEventStream& operator=(const KernelEventStream&) = delete;

    // The next event (the one before it is done), once the window holds
    // what it may look at; nullptr at the end of the trace.
    KernelEvent* next();
    // Whether the trace has an event, read ahead if none was (then next()
    // hands it out).
    bool any();
    // The event being handed out; after the end, the last one (a note made
    // then names it).
    const KernelEvent& current() const;
    // The trace's end was read (counts() are final).
    bool ended() const noexcept;
    // Lost-event markers before line `line`, in line order, each once.
    template <class F>
    void take_markers_before(std::uint64_t line, F&& f) {
        while (!markers_.empty() && markers_.front().line < line) {
            f(markers_.front());
            markers_.pop_front();
        }
    }

    // The next event printed by e's CPU, if read: e is the current event or
    // one the window holds.
    const KernelEvent* next_same_cpu(const KernelEvent& e) const;
    KernelEvent* next_same_cpu(const KernelEvent& e); // the same, to mark it (KernelEvent::consumed)
    // The i-th event after the current one (1: the next), if read.
    KernelEvent* ahead(std::size_t i);
    // Events read and not yet handed out, the current one included.
    std::size_t window() const noexcept;
    // What the current timer_cancel `e` was (cancel_meaning.hpp), from the
    // neighbours the window holds: its timer's next event, and its CPU's
    // when that is the same event (a requeue). Of `reach`, requeue_ns: the
    // detach was judged as the timer's next event was read, at the
    // kernel's reach (kDetachReachNs).
    CancelMeaning cancel_meaning(const KernelEvent& e, CancelReach reach = {}) const;

    // Every function= and module seen, once (KernelEvent::function and
    // ::module index them). Names are never moved: views of them stay valid.
    const std::deque<std::string>& functions() const noexcept;
    const std::deque<std::string>& modules() const noexcept;
    const KernelStreamCounts& counts() const noexcept;
    // The first event read (not handed out: read) that shows jiffies, as
    // (its timestamp, those jiffies).
    std::optional<JiffiesSample> first_jiffies() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::deque<LostMarker>& markers_;
    KernelEvent last_;
};

} // namespace timersim
