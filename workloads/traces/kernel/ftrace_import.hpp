// Import of real kernel timer traces (docs/kernel-traces.md, "How kernel
// events become trace v1 events"): FtraceImporter turns the events of the
// kernel event stream (kernel_event_stream.hpp, the reading validate has
// too) into trace v1 events, undoing the kernel's tracing habits:
//
//   * every expiry is traced as timer_cancel (the detach in the run loop),
//     then timer_expire_entry: that pair is an expiry, not a del_timer(), and
//     gives no event (the simulator decides when timers fire);
//   * mod_timer() on a pending timer that changes bucket traces timer_cancel
//     then timer_start on the same CPU: one `modify`;
//     (which a timer_cancel is, cancel_meaning.hpp says, for validate too)
//   * mod_timer() that keeps the timer in its bucket traces nothing, so
//     nothing is emitted;
//   * a timer_cancel that is neither is a del_timer(): a `cancel`, unless the
//     timer was armed before the trace began (then nothing: the replay never
//     had it);
//   * a timer_start not preceded by a cancel is an `arm`;
//   * timer_start/timer_cancel traced by a CPU between a timer's
//     timer_expire_entry and timer_expire_exit come from that callback: the
//     events get cb= that timer.
//
// The stream hands out a timer_cancel once its timer's next event is read
// (or the trace has moved on by kDetachReachNs), so the converted events
// stay in time order; memory is the timer map plus the events inside that
// window. pair_window_ns is the requeue's reach (CancelReach::requeue_ns, at
// most kDetachReachNs) and how long a callback waits for its
// timer_expire_exit.
#pragma once

#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/kernel/pre_trace_timers.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_event.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace timersim {

struct FtraceImportStats {
    std::uint64_t arms = 0;
    std::uint64_t modifies = 0;
    std::uint64_t cancels = 0;
    std::uint64_t expiries = 0;             // timer_expire_entry lines (fires)
    std::uint64_t expiry_detaches = 0;      // timer_cancel lines recognised as an expiry's detach
    std::uint64_t requeues = 0;             // cancel + start pairs turned into one modify
    std::uint64_t dropped_cancels = 0;      // del_timer() of timers armed before the trace
    std::uint64_t anomalies = 0;            // starts of pending timers without a cancel, expiries of pending timers without one
    std::uint64_t timers = 0;               // distinct timers seen
    std::uint64_t callback_events = 0;      // events inside a callback (cb=): between timer_expire_entry and _exit on that CPU
    std::uint64_t unconfirmed_callbacks = 0; // expiries whose timer_expire_exit never came (their events get no cb=)
    std::uint64_t pre_trace_arms = 0;       // timers armed before the trace, armed at its start (arm_before_trace())
    std::uint64_t inferred_deferrable_arms = 0; // arms taken as deferrable by infer_deferrable()
};

// A CPU's timer softirq run as the trace shows it: its first
// timer_expire_entry at jiffy `now`, at the replay time next() gave it
// among the events (in trace order, on the kernel's jiffies).
struct RecordedRunTime {
    std::uint32_t cpu = 0;
    Jiffies now = 0;
    std::uint64_t time_ns = 0;
};

class FtraceImporter {
public:
    static constexpr std::uint64_t kDefaultPairWindowNs = 10'000'000; // 10 ms

    // Reads `reader` (its filter and HZ set) through the kernel event
    // stream, which observes it: `also` sees every line the reader passes.
    explicit FtraceImporter(FtraceReader& reader, std::uint64_t pair_window_ns = kDefaultPairWindowNs,
                            FtraceObserver* also = nullptr);
    ~FtraceImporter();
    FtraceImporter(const FtraceImporter&) = delete;
    FtraceImporter& operator=(const FtraceImporter&) = delete;

    // The next trace v1 event (time relative to the first event line; timer
    // key the pointer as a token "0x%016x"; expiry at=expires; kidx/know
    // annotations). string_views are valid until the next call.
    bool next(TraceEvent& event);

    // Replay times on the kernel's own jiffies (kernel_clock.hpp): each
    // event's time is the one that lands it, on the machine's tick grid, on
    // the jiffy the kernel was at, and start_jiffies the kernel's at the
    // first event. Without a clock, times are the trace's, from the first
    // event. `clock` must outlive the importer; call before next().
    void use_clock(const KernelClock* clock);
    // Timers the trace first shows expiring were armed before it began
    // (pre_trace_timers.hpp): each is armed at the trace's first event,
    // on the CPU that fired it, to expire at the jiffy the kernel fired it
    // (expires = that `now`; flags and function as its entry shows them).
    // Its fire and the events of its callback then replay as the trace's
    // own. The cascading wheel fires it on that jiffy; the 4.8+ wheel, where
    // its bucket from the trace's start puts it (the kernel's arm, earlier,
    // is not in the trace). Call before next(); not with a filter, whose
    // window has its own start.
    void arm_before_trace(std::vector<PreTraceFire> fires);
    // A kernel before 4.2 prints no flags: these timers (pointers,
    // ascending; DeferrableInference::timers()) are taken as deferrable in
    // every timer_start without flags=. Call before next().
    void infer_deferrable(std::vector<std::uint64_t> timers);
    const KernelClock* clock() const noexcept; // the one in use, or null

    // Valid once next() returned an event or false: hz, and start_jiffies
    // derived from the first event that shows jiffies (INITIAL_JIFFIES(hz) if
    // none did).
    TraceHeader header() const;
    const FtraceImportStats& stats() const noexcept;
    // The input line of the event next() gave last (a requeue's modify: its
    // timer_start's; a timer armed before the trace: the first event's),
    // for errors about it; 0 before the first.
    std::uint64_t line() const noexcept;
    // The runs read so far (all of them once next() returned false), in
    // trace order: one per CPU and jiffy, the first.
    const std::vector<RecordedRunTime>& recorded_runs() const noexcept;
    // A later pass over text whose runs an earlier one kept: keep none
    // (they are one for every jiffy a CPU ran its timers: tens of MB for a
    // long trace, a copy per replay reading it again). Events are timed
    // the same. Call before next().
    void forget_recorded_runs() noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace timersim
