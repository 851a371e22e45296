#include "sim/validate/replay_ledger.hpp"

#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace timersim::validate {

namespace {

// No trace of one boot moves jiffies further between two of its events:
// 2^32 jiffies is 49 days at HZ=1000. A jump beyond it is a broken line,
// and replaying it would cost our wheels one __run_timers() round per
// NEXT_TIMER_MAX_DELTA (2^30) jiffies crossed: minutes for 2^60.
inline constexpr Jiffies kMaxJiffiesJump = Jiffies{1} << 32;

bool resynced(const ReplayLedger& ledger, unsigned c) {
    return c < ledger.cpus.size() && ledger.cpus[c].history == History::resynced;
}

} // namespace

ReplayLedger make_ledger(const ReplayStream& stream, ReplayResult& result, const ReplayOptions& options) {
    ReplayLedger ledger{
        .result = result, .functions = stream.functions(), .max_notes_per_class = options.max_notes_per_class};
    ledger.cpus.resize(result.cpus);
    ledger.classes = options.lost_history;
    return ledger;
}

Jiffies first_jiffies(const ReplayOptions& options, unsigned hz) {
    return options.survey && options.survey->first_jiffies ? *options.survey->first_jiffies : initial_jiffies(hz);
}

bool boot(const ReplayLedger& ledger, std::uint64_t line) noexcept {
    return ledger.result.workload_start_line && line < *ledger.result.workload_start_line;
}

void count_event(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e) {
    ++counts.events;
    if (boot(ledger, e.line)) ++counts.boot_events;
}

bool note_listed(ReplayLedger& ledger, std::string_view cls) {
    const std::uint64_t n = ++ledger.result.notes_by_class[std::string(cls)];
    return n <= ledger.max_notes_per_class;
}

void note(ReplayLedger& ledger, const Event& e, std::string what, std::string_view cls) {
    if (!note_listed(ledger, cls)) return;
    ledger.result.notes.push_back(ReplayNote{e.line, e.timer, std::string(ledger.names[e.incarnation].function),
                                             std::move(what), boot(ledger, e.line)});
}

void note_model_fire(ReplayLedger& ledger, const Event& at, std::size_t incarnation, unsigned cpu,
                     std::string_view how, Jiffies when, std::string_view why) {
    if (!note_listed(ledger, "model fire not matched by the kernel")) return;
    const TimerName& name = ledger.names[incarnation];
    ledger.result.notes.push_back(ReplayNote{at.line, name.timer, std::string(name.function),
                                             fmt::format("our softirq on CPU {} fired it {} {}: {}", cpu, how,
                                                         when, why),
                                             boot(ledger, at.line)});
}

void note_restart_after_model_fire(ReplayLedger& ledger, const Event& e, std::string_view unit, Jiffies when,
                                   std::uint64_t line) {
    note(ledger, e,
         fmt::format("restarted; our model had fired it at {} {} (line {}) and the trace never shows that expiry",
                     unit, when, line),
         "unknown history: restarted after a fire of our model the trace never shows (lost events?)");
}

void note_cancel_after_model_fire(ReplayLedger& ledger, const Event& e, std::string_view unit, Jiffies when,
                                  std::uint64_t line) {
    note(ledger, e, fmt::format("the kernel cancelled a timer our model had fired at {} {} (line {})", unit, when, line),
         "cancelled after a fire of our model the trace never shows");
}

void note_init_of_pending(ReplayLedger& ledger, const Event& e) {
    note(ledger, e, "timer_init of a timer that is pending in our model (its cancel or expiry is missing?)",
         "init of a pending timer");
}

void note_start_of_pending(ReplayLedger& ledger, const Event& e) {
    note(ledger, e, "timer_start of a timer pending in our model without a timer_cancel (lost events?)",
         "start of a pending timer");
}

void note_cancel_not_pending(ReplayLedger& ledger, const Event& e) {
    note(ledger, e, "timer_cancel of a timer not pending in our model", "cancel of a timer not pending in our model");
}

void enter_expiry(ReplayLedger& ledger, const Event& e, RunningCallback& callback) {
    count_event(ledger, ledger.result.expiry, e);
    if (!callback) return;
    note(ledger, e, "timer_expire_entry while the previous callback on this CPU has not exited",
         "missing timer_expire_exit");
    callback.reset();
}

bool exits_callback(const ReplayLedger& ledger, const Event& e, RunningCallback& callback) {
    if (!callback || ledger.names[*callback].timer != e.timer) return false;
    callback.reset();
    return true;
}

void unknown(ReplayLedger& ledger, ReplayCheckCounts& counts, std::string_view reason) {
    ++counts.unknown;
    ++ledger.result.unknown_by_reason[std::string(reason)];
}

void lose_history(ReplayLedger& ledger, unsigned c, std::string_view why, std::uint64_t line,
                  LossEvidence evidence) {
    CpuHistory& s = ledger.cpus.at(c);
    ++ledger.result.lost_by_reason[std::string(why)];
    if (LostHistoryClasses* classes = ledger.classes) {
        switch (evidence) {
        case LossEvidence::marker: ++classes->lines; break;
        case LossEvidence::reset: ++classes->resets; break;
        case LossEvidence::sequence:
            if (line != ledger.last_sequence_line) ++classes->sequences;
            ledger.last_sequence_line = line;
            break;
        }
        if (!s.window) {
            s.window = classes->windows.size();
            if (!s.first_window) s.first_window = s.window;
            classes->windows.push_back(LostHistoryClasses::Window{c, ledger.latest_jiffies, std::nullopt});
        }
    }
    if (s.history == History::lost) return;
    s.history = History::lost;
    s.lost_since = fmt::format("{} (line {})", why, line);
}

bool excluded_as_lost(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e, ReplayCheck check,
                      unsigned c) {
    if (c >= ledger.cpus.size() || ledger.cpus[c].history != History::lost) return false;
    ++counts.lost;
    if (ledger.classes && check == ReplayCheck::expiry)
        if (const auto now = e.jiffies()) ledger.classes->expiries.push_back({e.timer, *now, e.line_cpu});
    ReplayResult& result = ledger.result;
    if (result.lost.size() < ledger.max_notes_per_class)
        result.lost.push_back(ReplayLost{e.line, e.timer, std::string(ledger.names[e.incarnation].function), check,
                                         c, ledger.cpus[c].lost_since});
    return true;
}

bool agree(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e, ReplayCheck check, unsigned c) {
    if (excluded_as_lost(ledger, counts, e, check, c)) {
        // An expiry from the kernel's own bucket clock: our wheel's clock
        // is pinned to the kernel's again.
        if (check == ReplayCheck::expiry) {
            CpuHistory& s = ledger.cpus[c];
            s.history = History::resynced;
            ++ledger.result.resyncs;
            if (ledger.classes && s.window) {
                ledger.classes->windows[*s.window].to = e.jiffies();
                s.window.reset();
            }
        }
        return false;
    }
    if (resynced(ledger, c)) {
        ++counts.resynced_agree;
        return false;
    }
    ++counts.agree;
    if (boot(ledger, e.line)) ++counts.boot_agree;
    return true;
}

void disagree(ReplayLedger& ledger, ReplayCheckCounts& counts, const Event& e, ReplayCheck check, unsigned c,
              std::string ours, std::string kernel, ReplayCause cause) {
    if (excluded_as_lost(ledger, counts, e, check, c)) return;
    const bool apart = resynced(ledger, c);
    ++(apart ? counts.resynced_disagree : counts.disagree);
    ReplayResult& result = ledger.result;
    ++result.disagreements_by_cause[std::string(to_string(cause))];
    result.disagreements.push_back(ReplayDisagreement{e.line, e.timer,
                                                      std::string(ledger.names[e.incarnation].function), check,
                                                      std::move(ours), std::move(kernel), cause,
                                                      boot(ledger, e.line), apart});
    ledger.disagreement_cpus.push_back(c);
    ledger.disagreement_at.push_back({e.timer, e.jiffies().value_or(ledger.latest_jiffies.value_or(0)), e.line_cpu});
}

void reclass_as_lost(ReplayLedger& ledger, unsigned c, std::uint64_t from, std::uint64_t proven,
                     std::string_view why) {
    ReplayResult& result = ledger.result;
    std::size_t kept = 0;
    std::optional<Jiffies> earliest; // of the checks reclassed: the window opens there
    for (std::size_t i = 0; i < result.disagreements.size(); ++i) {
        ReplayDisagreement& d = result.disagreements[i];
        if (ledger.disagreement_cpus[i] != c || d.resynced || d.line <= from || d.line >= proven) {
            ledger.disagreement_cpus[kept] = ledger.disagreement_cpus[i];
            ledger.disagreement_at[kept] = ledger.disagreement_at[i];
            result.disagreements[kept++] = std::move(d);
            continue;
        }
        const LostHistoryClasses::Expiry& at = ledger.disagreement_at[i];
        if (!earliest || time_after(*earliest, at.now)) earliest = at.now;
        if (ledger.classes && d.check == ReplayCheck::expiry) ledger.classes->expiries.push_back(at);
        ReplayCheckCounts& counts = d.check == ReplayCheck::idx ? result.idx : result.expiry;
        --counts.disagree;
        ++counts.lost;
        auto cause = result.disagreements_by_cause.find(to_string(d.cause));
        if (--cause->second == 0) result.disagreements_by_cause.erase(cause);
        ++result.lost_by_reason[fmt::format("{} (proven later)", why)];
        if (result.lost.size() < ledger.max_notes_per_class)
            result.lost.push_back(ReplayLost{d.line, d.timer, d.function, d.check, c,
                                             fmt::format("{} (line {}), its events lost after line {}", why, proven,
                                                         from)});
    }
    result.disagreements.resize(kept);
    ledger.disagreement_cpus.resize(kept);
    ledger.disagreement_at.resize(kept);
    // The events lost reach back to the first check that followed from
    // them. Those checks were made while c's history was whole, before any
    // window of c: its first window starts there, or one opens there
    // (lose_history(), called next, opens none while one is open).
    if (LostHistoryClasses* classes = ledger.classes; classes && earliest) {
        CpuHistory& s = ledger.cpus.at(c);
        if (!s.first_window) {
            s.window = s.first_window = classes->windows.size();
            classes->windows.push_back(LostHistoryClasses::Window{c, earliest, std::nullopt});
        } else if (std::optional<Jiffies>& from = classes->windows[*s.first_window].from;
                   from && time_after(*from, *earliest)) {
            from = earliest;
        }
    }
}

void check_jiffies_jump(const ReplayLedger& ledger, const Event& e, Jiffies from, Jiffies to) {
    if (to - from <= kMaxJiffiesJump) return;
    throw TraceError(ledger.result.file, e.line, "jiffies",
                     fmt::format("jiffies jump from {} to {} since the previous event, more than 2^32: "
                                 "not one boot's trace",
                                 from, to));
}

std::optional<CancelMeaning> cancel_to_apply(ReplayLedger& ledger, const ReplayStream& stream, const Event& e,
                                             bool known) {
    // The stream holds the cancel until its timer's next event is read, or
    // until that is out of reach; it reads the cancel as the import does.
    const CancelMeaning meaning = stream.cancel_meaning(e);
    if (meaning == CancelMeaning::expiry_detach) return std::nullopt;
    if (!known) {
        note(ledger, e,
             "timer_cancel of a timer the trace never showed armed (the detach of a lost expiry, or a timer "
             "armed before tracing)",
             "unknown history: cancel of a timer the trace never showed armed");
        return std::nullopt;
    }
    return meaning;
}

void count_applied_cancel(ReplayLedger& ledger, CancelMeaning meaning) {
    ++(meaning == CancelMeaning::requeue ? ledger.result.kernel_requeues : ledger.result.kernel_deletes);
}

std::optional<Jiffies> next_expiry_jiffies_on_cpu(const ReplayStream& stream, const Event& e) {
    const Event* n = stream.next_same_cpu(e);
    if (n && n->type == FtraceEventType::timer_cancel) n = stream.next_same_cpu(*n);
    if (!n || n->type != FtraceEventType::timer_expire_entry) return std::nullopt;
    if (n->remote_cpu() != e.remote_cpu()) return std::nullopt; // another base's run (6.9+)
    if (n->timestamp_ns - e.timestamp_ns > kSameRunGapNs) return std::nullopt;
    return n->jiffies();
}

void sort_lost_by_line(ReplayResult& result) {
    std::stable_sort(result.lost.begin(), result.lost.end(),
                     [](const ReplayLost& a, const ReplayLost& b) { return a.line < b.line; });
}

} // namespace timersim::validate
