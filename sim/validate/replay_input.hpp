// The first half of the kernel-trace replay (kernel_replay.hpp): the trace's
// timer_* lines read as a stream of events, each with its timer object
// (incarnation), and the lines that say a CPU lost events. Internal to
// sim/validate/.
//
// The replay looks a little ahead of the event it replays, never far: the
// same CPU's next two events (is a timer_cancel the detach of an expiry?
// does a run go on at later jiffies?) and the events printed with the same
// timestamp (an equal-timestamp reordering across CPUs). ReplayStream keeps
// a window of events, from the one replayed to the last one read, and hands
// out the next one once everything it may look at is in the window: an
// event with a later timestamp, and the CPU's next events or the time past
// which they would no longer count (kDetachReachNs, kSameRunGapNs). A
// timer_cancel waits for its timer's next event (cancel_meaning.hpp). Memory
// is the window, the timer objects alive and the names, not the trace.
//
// Timer objects are numbered by IncarnationSlots: a number ends with the
// object (the timer_init of its timer= that starts another), and is reused
// once the replay holds nothing of it.
#pragma once

#include "sim/validate/kernel_replay.hpp"
#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/cancel_meaning.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::validate {

// Timer objects are numbered in 32 bits, reused (IncarnationSlots): the
// numbers alive at once are the trace's live timers, not its timer_inits.
using IncarnationIndex = std::uint32_t;
inline constexpr IncarnationIndex kNoIncarnation = 0xFFFFFFFFu;
// Events are numbered from the trace's first (ReplayStream::Seq).
using EventSeq = std::uint64_t;
inline constexpr EventSeq kNoEvent = ~EventSeq{0};
// Function names too (there are at most as many as events).
using FunctionIndex = std::uint32_t;
inline constexpr FunctionIndex kNoFunction = 0xFFFFFFFFu;

// CONFIG_NR_CPUS is at most 8192 (x86_64 MAXSMP).
inline constexpr std::uint32_t kMaxReplayCpus = 8192;

// One timer_* line, copied out of the reader's buffer. Fields ordered by
// size, so that it packs; what would be optional is a flag bit or, for
// numbers bounded below 0xFFFF, that sentinel: a CPU is below
// kMaxReplayCpus (ReplayStream refuses others), an idx is 0..1023
// (FtraceReader refuses others).
struct Event {
    static constexpr std::uint16_t kNone16 = 0xFFFF;
    static constexpr std::uint32_t kNoWideCpu = static_cast<std::uint32_t>(-1); // kNoCpu (timer_bases.hpp)

    std::uint64_t line = 0;
    std::uint64_t timestamp_ns = 0;
    std::uint64_t timer = 0;
    Jiffies expires = 0;
    EventSeq next_same_cpu = kNoEvent; // the next event printed by the same CPU, once read (next_same_cpu_read)
    FunctionIndex function = kNoFunction; // kNoFunction, or an index into ReplayStream::functions()
    IncarnationIndex incarnation = 0;       // which timer object (a timer_init starts a new one)
    IncarnationIndex previous_incarnation = kNoIncarnation; // a timer_init's: the one it ends, if any
    std::uint16_t line_cpu = 0;
    FtraceEventType type = FtraceEventType::timer_init;
    bool deferrable : 1 = false;
    bool pinned : 1 = false;          // flags P (6.9+: the timer goes to BASE_LOCAL)
    bool consumed : 1 = false;        // applied out of print order (an equal-timestamp reordering)
    bool next_same_cpu_read : 1 = false; // next_same_cpu is set
    bool next_of_timer_read : 1 = false; // the next event with the same timer= (any CPU) was read:
    bool next_of_timer_detaches : 1 = false; // ... and it makes this timer_cancel an expiry's detach (detaches_for())

    std::optional<Jiffies> baseclk() const noexcept { return has_baseclk_ ? std::optional(baseclk_) : std::nullopt; }
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

    bool has_baseclk_ : 1 = false;    // (these two share the byte of the flags above)
    bool has_jiffies_ : 1 = false;
    Jiffies baseclk_ = 0;
    Jiffies jiffies_ = 0;
    std::uint16_t cpu_ = kNone16;
    std::uint16_t idx_ = kNone16;
    std::uint16_t remote_cpu_ = kNone16;
    std::uint16_t queued_idx_ = kNone16;
};
static_assert(kMaxReplayCpus < Event::kNone16);
// One is kept for every event of the window (docs/validation.md).
static_assert(sizeof(Event) == 80);

// What cancel_meaning.hpp's rules read of an event.
inline CancelNeighbour neighbour(const Event& e) noexcept {
    static_assert(Event::kNone16 == CancelNeighbour::kNoIdx);
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

// The numbers of timer objects. The stream takes one for each new object;
// the replay ends one when the object's timer= starts another (its
// timer_init replayed), and frees the ended ones it holds nothing of, now
// and then (sweep()): its state for a number is then reset, and the number
// serves a later object.
class IncarnationSlots {
public:
    IncarnationIndex allocate();
    // Numbers handed out so far: the replay's arrays by object are this long.
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

// The timer events of a trace, in print order, with a window ahead of the
// one replayed (above). Throws TraceError for a line it refuses.
class ReplayStream {
public:
    // Reads with `reader` (made with options.hz, not yet read: this sets its
    // filter, observer and --force-hz) and fills result's file, kernel,
    // kernel_6_9, kernel_classic, classic_oldest_first and
    // workload_start_line at once; hz, cpus once the first event is read
    // (primed()); timers, timer_events and the counts of the reader at the
    // end. options.kernel and options.survey are required
    // (std::logic_error without).
    ReplayStream(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result, IncarnationSlots& slots);
    ~ReplayStream();
    ReplayStream(const ReplayStream&) = delete;
    ReplayStream& operator=(const ReplayStream&) = delete;

    // Reads the first event: false if the trace has none (the result is
    // then complete).
    bool primed();
    // The next event to replay (the one before it is done), once the window
    // holds what it may look at; nullptr at the end of the trace.
    Event* next();
    // The event being replayed; after the end, the last one (a note made
    // then names it).
    const Event& current() const;
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
    const Event* next_same_cpu(const Event& e) const;
    // The i-th event after the current one (1: the next), if read.
    Event* ahead(std::size_t i);
    // Events read and not yet replayed, the current one included.
    std::size_t window() const noexcept;

    // Every function= seen, once (Event::function indexes it). Names are
    // never moved: the replay's views of them stay valid.
    const std::deque<std::string>& functions() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::deque<LostMarker>& markers_;
    Event last_;
};

} // namespace timersim::validate
