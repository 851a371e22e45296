// Replay of a real Linux 6.1 (or 6.9+) timer trace through ModernWheel, checking the
// model event by event against what the kernel printed (docs/validation.md).
// A trace of a kernel before 4.8 is checked on ClassicWheel instead
// (classic_replay.hpp: expiries only, into the same ReplayResult).
//
//   check idx:    every timer_start: the idx our wheel computes equals the
//                 kernel's idx=;
//   check expiry: every timer_expire_entry: our wheel fires that timer in the
//                 softirq run the kernel shows, from a bucket whose clock
//                 (FiredTimer.base_clk) equals the kernel's baseclk=, and that
//                 clock is not after the kernel's now=.
//
// One ModernWheel per CPU; jiffies are global (the maximum any event told so
// far). Our softirq runs on CPU c exactly when the trace shows an expiry on
// CPU c. A 6.9+ trace (its version: kernel_version.hpp) gets one wheel per
// CPU and base (LOCAL, GLOBAL, DEF), run in the kernel's order, and the
// expiries a CPU prints after "tmigr_handle_remote_cpu: cpu=N" are checked
// against CPU N's global base (sim/validate/timer_bases.hpp); a trace with no
// timer_migration events at all has those lines inferred from its expiries
// of another CPU's global timers (remote_inference.hpp). It runs one expiry
// at a time (the wheel's budgeted pass), so the
// events the kernel's callback produced (re-arms, cancels, on any CPU) are
// applied between two steps of our run, where that callback ran.
//
// Events whose outcome depends on history the trace does not hold (a timer
// armed before tracing) are counted as `unknown history` and excluded from
// the agreement, never guessed.
//
// Lost history: a sequence 6.1 cannot produce (a timer_start of a timer
// pending in our model without its timer_cancel, since __mod_timer() always
// traces the detach; an expiry of a timer our model never had pending), a
// ring-buffer "[LOST N EVENTS]" line, or a "CPU N buffer started" line tells
// that events of that CPU are missing. Its wheel is then out of step with
// the kernel's: from there on, the CPU's checks are classed `lost history`
// (counted, listed, excluded) until an expiry on it agrees with the kernel
// (its bucket clock equals the kernel's baseclk: the clock is pinned again).
// Checks after that are counted apart, as a resynchronised stretch; the
// agreement proper is over CPUs whose history is whole.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "workloads/traces/kernel/lost_history.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

enum class ReplayCheck : std::uint8_t { idx, expiry };
std::string_view to_string(ReplayCheck check) noexcept;

// Why our model and the kernel disagree (docs/validation.md, "Cause classes").
enum class ReplayCause : std::uint8_t {
    our_clock_differs,    // idx: the kernel's idx is calc_wheel_index(expires, jiffies), ours used another base clk
    kernel_clock_differs, // idx: ours is calc_wheel_index(expires, jiffies), the kernel used another base clk
    index_differs,        // idx: neither is calc_wheel_index(expires, jiffies)
    flags_changed,        // idx: TIMER_DEFERRABLE differs from the timer's earlier starts (no timer_init between)
    baseclk_differs,      // expiry: fired in the same run, from a bucket with another clock
    fired_late,           // expiry: our bucket clock is after the kernel's now
    fired_earlier,        // expiry: our model had already fired the timer in an earlier run
    not_due,              // expiry: pending in our model, in a bucket after the kernel's now
    not_collected,        // expiry: pending and due in our model, but our run did not fire it
    not_pending,          // expiry: our model did not have the timer pending
    other_cpu,            // expiry: pending in our model on another CPU's wheel
    order_differs,        // expiry (classic): our run fired it in the kernel's run, but before a timer the kernel expired first
};
std::string_view to_string(ReplayCause cause) noexcept;

struct ReplayDisagreement {
    std::uint64_t line = 0;  // line of the kernel event in the input
    std::uint64_t timer = 0; // timer= pointer
    std::string function;
    ReplayCheck check = ReplayCheck::idx;
    std::string ours;   // what our model gives (idx, or bucket clock and when it fired)
    std::string kernel; // what the kernel printed
    ReplayCause cause = ReplayCause::index_differs;
    bool boot = false;  // before the "timersim: workload start" marker
    bool resynced = false; // on a CPU resynchronised after lost history (not in the agreement)
};

// A check made while its CPU's history was lost (excluded, never guessed).
struct ReplayLost {
    std::uint64_t line = 0;
    std::uint64_t timer = 0;
    std::string function;
    ReplayCheck check = ReplayCheck::idx;
    unsigned cpu = 0;
    std::string since; // what made the CPU's history lost, and at which line
};

struct ReplayCheckCounts {
    std::uint64_t events = 0;   // timer_start (idx) or timer_expire_entry (expiry) lines
    std::uint64_t agree = 0;
    std::uint64_t disagree = 0;
    std::uint64_t unknown = 0;  // unknown history: excluded
    std::uint64_t lost = 0;     // lost history: excluded
    std::uint64_t resynced_agree = 0;    // on resynchronised CPUs: apart from agree/disagree
    std::uint64_t resynced_disagree = 0;
    std::uint64_t boot_events = 0;
    std::uint64_t boot_agree = 0;
    // agree / (agree + disagree); 1 when nothing was checked.
    double agreement() const noexcept {
        const std::uint64_t checked = agree + disagree;
        return checked == 0 ? 1.0 : static_cast<double>(agree) / static_cast<double>(checked);
    }
};

// Something that is not a check but tells how far the replay can be trusted.
struct ReplayNote {
    std::uint64_t line = 0;
    std::uint64_t timer = 0;
    std::string function;
    std::string what;
    bool boot = false;
};

struct RemoteInference {
    std::uint64_t expiries = 0;
    std::uint64_t runs = 0;
};

struct ReplayResult {
    std::string file;
    unsigned hz = 0;
    std::string hz_source; // set by the caller: where HZ came from (HzResolution::source)
    unsigned cpus = 0;
    std::uint64_t timer_events = 0;    // kept by the filter
    std::uint64_t timers = 0;          // distinct timer= values
    TraceFilter filter;
    TraceFilterCounts filter_counts;
    std::optional<std::uint64_t> workload_start_line; // the marker, if present
    // The recording kernel's version and where it came from.
    KernelVersionResolution kernel;
    // The trace is of a 6.9 or later kernel, replayed with its three bases
    // per CPU and the remote expiry of idle CPUs' global timers.
    bool kernel_6_9 = false;
    // A 6.9+ trace without timer_migration events: its remote expiries were
    // inferred (workloads/traces/kernel/remote_inference.hpp), so many
    // expiries in so many remote runs.
    std::optional<RemoteInference> remote_inferred;
    // Every timer_start (two or more) has flags D|P|I: libtraceevent 1.7's
    // misprint of 6.1's flags (trace-cmd report, perf script), so which
    // timers are deferrable, and in which base they sit, is unknown.
    bool flags_garbled = false;
    // The trace is of a kernel before 4.8, checked on the classic cascading
    // wheel (classic_replay.hpp): its timer_start shows no idx, so only
    // the expiries are checked. Slots ran oldest first before 4.2.
    bool kernel_classic = false;
    bool classic_oldest_first = false;
    // Classic: agreeing expiries of timers a cascade moved down from
    // tv2..tv5 on their way to the run the kernel showed.
    std::uint64_t cascaded_agree = 0;
    ReplayCheckCounts idx;
    ReplayCheckCounts expiry;
    std::vector<ReplayDisagreement> disagreements; // in trace order
    std::map<std::string, std::uint64_t, std::less<>> disagreements_by_cause;
    // Why events were excluded, e.g. "expiry of a timer armed before the trace".
    std::map<std::string, std::uint64_t, std::less<>> unknown_by_reason;
    // Inconsistencies that are not checks (a fire of our model the trace never
    // shows, a cancel of a timer our model had not pending, ...), by class, and
    // the first few of each.
    std::map<std::string, std::uint64_t, std::less<>> notes_by_class;
    std::vector<ReplayNote> notes;
    // Lost history: why each CPU lost it (by class), the checks excluded
    // (the first max_notes_per_class), the CPUs that resynchronised.
    std::map<std::string, std::uint64_t, std::less<>> lost_by_reason;
    std::vector<ReplayLost> lost;
    std::uint64_t resyncs = 0;
    std::uint64_t model_softirq_runs = 0;
    std::uint64_t model_fires = 0;       // fires of our model the kernel did not match
    std::uint64_t empty_softirq_runs = 0; // catch-up runs for a stale next_expiry (nothing due)
    std::uint64_t catch_up_steps = 0;     // jiffies the catch-up stopped at (not every jiffy passed)
    // Cancels of pending timers the model applied, by what they were
    // (cancel_meaning.hpp): the first half of a mod_timer, a del_timer.
    std::uint64_t kernel_requeues = 0;
    std::uint64_t kernel_deletes = 0;
    std::uint64_t migrations = 0;       // pending timers a requeue moved to another CPU's wheel
};

// What the replay must know of the whole trace before its first event,
// from a pass over it (ReplaySurveyor): the replay itself reads the trace
// once, as a stream.
struct ReplaySurvey {
    unsigned cpus = 1;                           // one wheel (or three) per CPU up to the highest a kept event names
    std::optional<Jiffies> first_jiffies;        // the earliest jiffies a kept event shows: our wheels start there
    bool timer_migration = false;                // a timer_migration (tmigr_*) line anywhere: no remote expiry inferred
    std::optional<std::uint64_t> workload_start; // the line of the "timersim: workload start" marker
};

// Gathers a ReplaySurvey from a pass over the trace. Unfiltered, it watches
// another pass (the one that decides HZ: resolve_ftrace_hz()'s observer);
// with a filter, survey_kernel_trace() feeds it the events kept.
class ReplaySurveyor final : public FtraceObserver {
public:
    // `watch_events`: take the timer events the observed pass reads (no
    // filter); otherwise only those given to event().
    explicit ReplaySurveyor(bool watch_events) : watch_events_(watch_events) {}
    void timer_event(const FtraceEvent& e) override {
        if (watch_events_) event(e);
    }
    void timer_softirq(const FtraceTimerSoftirq&) override {}
    void other_line(std::uint64_t line, std::string_view text) override;
    void event(const FtraceEvent& e);
    const ReplaySurvey& survey() const noexcept { return survey_; }

private:
    bool watch_events_;
    ReplaySurvey survey_;
};

struct ReplayOptions {
    std::optional<unsigned> hz;     // --hz; else the input's "# hz=N"
    bool force_hz = false;          // --force-hz: hz even where a "# hz=N" line says otherwise
    std::size_t max_notes_per_class = 20;
    // Run our softirq at each jiffy where a wheel's softirq is due but no
    // timer is (a stale next_expiry), as the kernel's tick does unseen.
    // Only tests turn this off, to show why it is needed.
    bool catch_up_runs = true;
    // --cpu, --function, --from/--to: only these events are replayed.
    TraceFilter filter;
    // The recording kernel (resolve_kernel_version() of a first pass).
    // Required for an InputFile; text in memory without it is read once
    // more for its version (refused if it spans two timer designs).
    std::optional<KernelVersionResolution> kernel;
    // The survey of the trace (ReplaySurvey). Required for an InputFile;
    // text in memory without it is read once more for it.
    std::optional<ReplaySurvey> survey;
    // If given, filled with the lost history as the replay classes it (its
    // windows and the expiries left out), for run and compare to leave out
    // the same (workloads/traces/kernel/lost_history.hpp).
    LostHistoryClasses* lost_history = nullptr;
};

// Replays `text` (the whole ftrace text), or the text `in` reads (a pass of
// KernelText). Throws TraceError for malformed input.
ReplayResult replay_kernel_trace(std::string_view text, std::string file_name, const ReplayOptions& options = {});
ReplayResult replay_kernel_trace(InputFile& in, const ReplayOptions& options = {});
// A pass of its own for the survey, with options' filter (--cpu,
// --function, --from/--to keep fewer events: a pass that watches all of them
// cannot tell). Throws TraceError.
ReplaySurvey survey_kernel_trace(InputFile& in, const ReplayOptions& options);

// The lost history of the trace `request` reads, as this replay classes it
// (a survey pass, then the replay: two passes), for the load behind run and
// compare (TraceLoadOptions::lost_history). Throws TraceError.
LostHistoryClasses classify_lost_history(const LostHistoryRequest& request);

} // namespace timersim
