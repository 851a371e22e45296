// What validate's two replays share (kernel_replay.cpp: 4.8+ on
// ModernWheel; classic_replay.cpp: before 4.8 on ClassicWheel): the walk
// over the trace's events in print order, and the ledger of checks it
// fills in ReplayResult (agree, disagree, unknown history, lost history and
// its resynchronisation, notes, the boot marker). The wheels, and which
// check is made how, stay with each replay. Internal to sim/validate.
#pragma once

#include "sim/validate/kernel_replay.hpp"
#include "sim/validate/replay_input.hpp"
#include "workloads/traces/kernel/lost_history.hpp"
#include "wheel/core/jiffies.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::validate {

// Whether a CPU's wheel can be checked against the kernel's: its history is
// whole, lost (events missing: checks excluded), or lost and then pinned
// again by an agreeing expiry (checks counted apart).
enum class History : std::uint8_t { whole, lost, resynced };

struct CpuHistory {
    History history = History::whole;
    std::string lost_since; // why, and where
    // Its lost-history window open in ReplayLedger::classes, if any, and
    // its first window (reclass_as_lost() moves that one's start back).
    std::optional<std::size_t> window;
    std::optional<std::size_t> first_window;
};

// A timer object as a report names it: its timer= and last function=.
struct TimerName {
    std::uint64_t timer = 0;
    std::string_view function; // ReplayStream::functions() holds the text
};

struct ReplayLedger {
    ReplayResult& result;
    const std::deque<std::string>& functions; // ReplayStream::functions()
    std::size_t max_notes_per_class = 0;
    std::vector<CpuHistory> cpus;            // by CPU (result.cpus of them)
    std::vector<TimerName> names;            // by timer object (Event::incarnation; grown by replay_events())
    std::vector<unsigned> disagreement_cpus; // beside result.disagreements: the CPU of each
    // Beside result.disagreements: the jiffies of each, and an expiry's
    // timer, now= and printing CPU (for reclass_as_lost()).
    std::vector<LostHistoryClasses::Expiry> disagreement_at;
    // ReplayOptions::lost_history: where the lost history is classed, for
    // the replays of run and compare (lost_history.hpp); null: nowhere.
    LostHistoryClasses* classes = nullptr;
    std::optional<Jiffies> latest_jiffies; // the most the events showed so far
    std::uint64_t last_sequence_line = 0;  // lose_history(): one sequence may lose two CPUs
};

// A ledger for the events `stream` reads, over result.cpus CPUs (the
// stream primed). The stream must outlive it.
ReplayLedger make_ledger(const ReplayStream& stream, ReplayResult& result, const ReplayOptions& options);

// The jiffies our wheels start at: the earliest any event shows, else the
// kernel's INITIAL_JIFFIES.
Jiffies first_jiffies(const ReplayOptions& options, unsigned hz);

// Before the "timersim: workload start" marker?
bool boot(const ReplayLedger& ledger, std::uint64_t line) noexcept;

// One more event of a check's kind (timer_start or timer_expire_entry).
void count_event(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e);

// Counts a note of class `cls`: is it among the first few listed?
bool note_listed(ReplayLedger& ledger, std::string_view cls);
void note(ReplayLedger& ledger, const Event& e, std::string what, std::string_view cls);
// A fire of our model the kernel did not match, noted at event `at`:
// "our softirq on CPU c fired it <how> <when>: <why>".
void note_model_fire(ReplayLedger& ledger, const Event& at, std::size_t incarnation, unsigned cpu,
                     std::string_view how, Jiffies when, std::string_view why);
// e restarts (or cancels) a timer our model fired where the trace never
// shows that expiry: at `unit` `when`, in the run at line `line`.
void note_restart_after_model_fire(ReplayLedger& ledger, const Event& e, std::string_view unit, Jiffies when,
                                   std::uint64_t line);
void note_cancel_after_model_fire(ReplayLedger& ledger, const Event& e, std::string_view unit, Jiffies when,
                                  std::uint64_t line);
void note_init_of_pending(ReplayLedger& ledger, const Event& e);
void note_start_of_pending(ReplayLedger& ledger, const Event& e);
void note_cancel_not_pending(ReplayLedger& ledger, const Event& e);

// The timer object whose kernel callback runs on a CPU, from its
// timer_expire_entry to its timer_expire_exit.
using RunningCallback = std::optional<std::size_t>;
// A timer_expire_entry on a CPU: counted; a callback still running there
// lost its timer_expire_exit (noted).
void enter_expiry(ReplayLedger& ledger, const Event& e, RunningCallback& callback);
// Does timer_expire_exit e end the callback running (then it is over)?
bool exits_callback(const ReplayLedger& ledger, const Event& e, RunningCallback& callback);

// An event excluded as unknown history: its outcome depends on what
// happened before the trace.
void unknown(ReplayLedger& ledger, ReplayCheckCounts& counts, std::string_view reason);

// What showed a CPU's history lost (LostHistoryClasses counts them).
enum class LossEvidence : std::uint8_t {
    sequence, // a sequence the kernel cannot print, proved at `line`
    marker,   // the line says the CPU lost events
    reset,    // our classic wheel fell too far behind and was re-placed
};
// From here on, CPU c's wheel is out of step with the kernel's.
void lose_history(ReplayLedger& ledger, unsigned c, std::string_view why, std::uint64_t line,
                  LossEvidence evidence = LossEvidence::sequence);

// A check of CPU c while its history is lost: excluded and listed.
bool excluded_as_lost(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e, ReplayCheck check,
                      unsigned c);
// A check of CPU c that agrees. An expiry agreeing on a CPU whose history
// is lost resynchronises it. True if counted in the agreement proper.
bool agree(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e, ReplayCheck check, unsigned c);
void disagree(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e, ReplayCheck check, unsigned c,
              std::string ours, std::string kernel, ReplayCause cause);
// Lost history of CPU c proven at line `proven`, after line `from`: its
// disagreements in between (not on a resynchronised stretch) followed from
// the events lost there. They move to the lost history, named with the
// line that proved it.
void reclass_as_lost(ReplayLedger& ledger, unsigned c, std::uint64_t from, std::uint64_t proven,
                     std::string_view why);

// Jiffies may not jump by more than one boot can (2^32) between two events:
// throws TraceError naming e's line.
void check_jiffies_jump(const ReplayLedger& ledger, const Event& e, Jiffies from, Jiffies to);

// Is timer_cancel e one the model applies, and what is it? Not the detach
// of an expiry (cancel_meaning(), as every replay of a kernel trace reads
// it), nor one of a timer the trace never showed armed (`known`; noted):
// then nothing. Else the first half of a requeue, or a del_timer.
std::optional<CancelMeaning> cancel_to_apply(ReplayLedger& ledger, const ReplayStream& stream, const Event& e,
                                             bool known);
// Counts a cancel the model applied to a pending timer, by what it is
// (result.kernel_requeues, kernel_deletes).
void count_applied_cancel(ReplayLedger& ledger, CancelMeaning meaning);
// The jiffies of the next expiry of the same run on e's CPU: the CPU's next
// event past at most its detach (a timer_cancel), if it is an expire_entry
// of the same base's run at most kSameRunGapNs after e (a later run of the
// CPU comes a tick or more later).
std::optional<Jiffies> next_expiry_jiffies_on_cpu(const ReplayStream& stream, const Event& e);

// Checks classed lost when a later line proved it come in line order.
void sort_lost_by_line(ReplayResult& result);

// What the replay of the trace's end calls each CPU's run end with.
inline constexpr std::string_view kFiredAfterTrace = "our model fired it after the trace's last expiry on that CPU";

// The timer objects a replay's CPUs hold besides its wheels (a callback
// running, a fire of our run parked until the kernel shows it), sorted:
// `held` for a sweep of ended objects (replay_events()).
template <class Cpu>
void collect_held_by_cpus(const std::vector<Cpu>& cpus, std::vector<IncarnationIndex>& held) {
    held.clear();
    for (const Cpu& s : cpus) {
        if (s.callback) held.push_back(static_cast<IncarnationIndex>(*s.callback));
        if (s.parked) held.push_back(static_cast<IncarnationIndex>(s.parked->id));
    }
    std::sort(held.begin(), held.end());
}

// Walks the stream's events in print order, as the kernel printed them:
// the lost-event markers before each, then the event to the replay
// (`checker`'s advance_jiffies() to its jiffies, then its on_init(),
// on_start(), on_cancel(), on_expire_entry() or on_expire_exit()). Before
// an event of a timer object numbered anew, checker.grow(n) makes room for
// n objects; when enough objects have ended, checker.prepare_holds() then
// checker.holds(i) tell which the replay still holds and checker.forget(i) resets the others' state
// before their numbers serve again. At the end, checker.end_trace(c) ends
// each CPU's run, and the checks classed lost come in line order.
template <class Checker>
void replay_events(ReplayLedger& ledger, ReplayStream& stream, IncarnationSlots& slots, Checker& checker) {
    while (Event* next = stream.next()) {
        const Event& e = *next;
        stream.take_markers_before(e.line, [&](const LostMarker& m) {
            if (m.cpu < ledger.cpus.size()) lose_history(ledger, m.cpu, m.what, m.line, LossEvidence::marker);
        });
        if (e.consumed) continue; // applied earlier, out of print order
        if (slots.size() > ledger.names.size()) {
            ledger.names.resize(slots.size());
            checker.grow(slots.size());
        }
        TimerName& name = ledger.names[e.incarnation];
        name.timer = e.timer;
        if (e.function != kNoFunction) name.function = ledger.functions[e.function];
        if (const auto j = e.jiffies()) {
            checker.advance_jiffies(*j);
            if (!ledger.latest_jiffies || time_after(*j, *ledger.latest_jiffies)) ledger.latest_jiffies = j;
        }
        switch (e.type) {
        case FtraceEventType::timer_init: checker.on_init(e); break;
        case FtraceEventType::timer_start: checker.on_start(e); break;
        case FtraceEventType::timer_cancel: checker.on_cancel(e); break;
        case FtraceEventType::timer_expire_entry: checker.on_expire_entry(e); break;
        case FtraceEventType::timer_expire_exit: checker.on_expire_exit(e); break;
        }
        if (e.type == FtraceEventType::timer_init && e.previous_incarnation != kNoIncarnation)
            slots.end(e.previous_incarnation);
        if (slots.sweep_due()) {
            checker.prepare_holds();
            slots.sweep([&](IncarnationIndex i) { return checker.holds(i); },
                        [&](IncarnationIndex i) {
                            ledger.names[i] = TimerName{};
                            checker.forget(i);
                        });
        }
    }
    // The end of the trace ends every run; what our model still fires is
    // a fire the trace does not show.
    for (unsigned c = 0; c < ledger.cpus.size(); ++c) checker.end_trace(c);
    sort_lost_by_line(ledger.result);
}

} // namespace timersim::validate
