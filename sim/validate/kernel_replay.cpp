#include "sim/validate/kernel_replay.hpp"

#include "sim/validate/classic_replay.hpp"
#include "sim/validate/replay_input.hpp"
#include "sim/validate/replay_ledger.hpp"
#include "sim/validate/replay_state.hpp"
#include "sim/validate/timer_bases.hpp"

#include "wheel/kernel/modern_levels.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/kernel/remote_inference.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <sstream>
#include <unordered_map>

namespace timersim {

namespace {

using validate::Event;
using validate::IncarnationIndex;
using validate::IncarnationSlots;
using validate::ReplayStream;

using validate::CpuState;
using validate::ReplayLedger;
using validate::Incarnation;
using validate::SteppedRun;

using validate::BaseLayout;
using validate::kNoCpu;
using validate::RunWheels;

// Jiffies are stepped one by one (for the catch-up runs) up to this jump: a
// day at HZ=1000.
inline constexpr Jiffies kMaxCatchUpStep = 86'400'000;

class Replay {
public:
    // The stream primed; it must outlive the replay.
    Replay(ReplayStream& stream, IncarnationSlots& slots, ReplayResult& result, const ReplayOptions& options)
        : stream_(stream), slots_(slots), result_(result), options_(options),
          ledger_(validate::make_ledger(stream, result, options)), layout_(result.kernel_6_9, result.cpus) {
        const Jiffies start = validate::first_jiffies(options, result_.hz);
        jiffies_ = start;
        for (unsigned w = 0; w < layout_.wheels(); ++w)
            wheels_.push_back(std::make_unique<ModernWheel>(ModernWheel::Config{
                .hz = result_.hz, .start_jiffies = start, .deferrable_base = layout_.wheel_deferrable_base()}));
        owners_.resize(wheels_.size());
        cpus_.resize(result_.cpus);
    }

    void run() { validate::replay_events(ledger_, stream_, slots_, *this); }

private:
    // It calls advance_jiffies(), the on_*() of each event, grow(),
    // holds(), forget() and end_trace().
    template <class Checker>
    friend void validate::replay_events(ReplayLedger&, ReplayStream&, IncarnationSlots&, Checker&);

    // Timer objects 0..n-1 (each gets a timer on a wheel when first queued
    // there: timer_on()).
    void grow(std::size_t n) { incs_.resize(n); }
    void prepare_holds() { validate::collect_held_by_cpus(cpus_, held_by_cpus_); }
    // Does our model still hold timer object i (pending, fired and not yet
    // matched, or its callback running)?
    bool holds(IncarnationIndex i) const {
        return model_pending(i) || std::binary_search(held_by_cpus_.begin(), held_by_cpus_.end(), i);
    }
    void forget(IncarnationIndex i) {
        drop_timer(incs_[i]);
        incs_[i] = Incarnation{};
    }

    // The timer of object i on wheel w, made there (and the one on its
    // previous wheel freed) if it has none: a wheel holds timers for the
    // objects queued on it, not for every object of the trace (a CPU's
    // wheels cost nothing until it queues a timer). Not pending elsewhere.
    TimerId timer_on(IncarnationIndex i, unsigned w) {
        Incarnation& inc = incs_[i];
        if (inc.wheel == w && inc.timer != kNoTimer) return inc.timer;
        drop_timer(inc);
        inc.wheel = w;
        inc.timer = wheels_[w]->create();
        std::vector<IncarnationIndex>& owners = owners_[w];
        if (owners.size() <= inc.timer) owners.resize(inc.timer + 1, validate::kNoIncarnation);
        owners[inc.timer] = i;
        return inc.timer;
    }
    void drop_timer(Incarnation& inc) {
        if (inc.timer == kNoTimer) return;
        wheels_[*inc.wheel]->destroy(inc.timer);
        owners_[*inc.wheel][inc.timer] = validate::kNoIncarnation;
        inc.timer = kNoTimer;
    }
    // A fire of wheel w, its id the timer object's (FiredTimer::id is the
    // wheel's timer; the replay speaks of objects).
    std::optional<FiredTimer> of_object(std::optional<FiredTimer> f, unsigned w) const {
        if (f) f->id = owners_[w][f->id];
        return f;
    }

    // Jiffies only move forward (equal-timestamp reorderings across CPUs may
    // show one going back: keep the max). The kernel's tick raises
    // TIMER_SOFTIRQ whenever a base's next_expiry is due, also when that
    // next_expiry is stale (its bucket was emptied by a delete): such a run
    // expires nothing, so the trace cannot show it, yet it moves clk and
    // recomputes next_expiry, which decides how far forward_timer_base() may
    // move clk later. So at each jiffy, a wheel whose softirq is due but that
    // has no timer due runs its (empty) softirq. A wheel with a due timer
    // waits for the trace to show its expiry.
    void advance_jiffies(Jiffies target) {
        if (!time_after(target, jiffies_)) return;
        validate::check_jiffies_jump(ledger_, stream_.current(), jiffies_, target);
        if (target - jiffies_ > kMaxCatchUpStep) {
            // An implausible jump (a broken trace): no catch-up runs.
            jiffies_ = target;
            for (auto& w : wheels_) w->set_jiffies(jiffies_);
            return;
        }
        while (time_before(jiffies_, target)) {
            // Nothing changes until a wheel that may run an empty softirq
            // has its softirq due: jump there (or to the target), not one
            // jiffy at a time (a jump of a day would be 86M steps).
            jiffies_ = next_catch_up_jiffy(target);
            ++result_.catch_up_steps;
            for (auto& w : wheels_) w->set_jiffies(jiffies_);
            for (unsigned w = 0; w < wheels_.size(); ++w) {
                // The cheap test first: most wheels have no softirq due, and
                // may_catch_up() searches the wheel's buckets (and, with
                // three bases, every CPU's run).
                if (!wheel(w).softirq_due() || !may_catch_up(w)) continue;
                ++result_.empty_softirq_runs;
                wheel(w).run_softirq([&](const FiredTimer& f) {
                    // Cannot happen: nothing was due.
                    model_only_fire(*of_object(f, w), layout_.cpu_of(w), "an empty catch-up run fired it");
                });
            }
        }
    }

    // May wheel w run an empty softirq the trace does not show? Not while a
    // run of ours is in progress there, and not when a timer is due: then
    // it waits for the trace to show that expiry.
    bool may_catch_up(unsigned w) const { return options_.catch_up_runs && !wheel_in_run(w) && !any_due(w); }

    // Is a run of ours in progress on wheel w (a CPU's own run, or, 6.9+,
    // another CPU's remote expiry of w's global base)?
    bool wheel_in_run(unsigned w) const {
        if (!layout_.three_bases()) return cpus_[w].run || cpus_[w].parked;
        for (unsigned c = 0; c < cpus_.size(); ++c)
            if ((cpus_[c].run || cpus_[c].parked) && layout_.run_of(c, cpus_[c].run_remote).contains(w)) return true;
        return false;
    }

    // The first jiffy after jiffies_, at most `target`, at which a wheel that
    // may catch up has its softirq due (a base's next_expiry is reached).
    Jiffies next_catch_up_jiffy(Jiffies target) const {
        Jiffies next = target;
        const unsigned bases = layout_.wheel_deferrable_base() ? 2 : 1;
        for (unsigned w = 0; w < wheels_.size(); ++w) {
            Jiffies earliest = next;
            for (unsigned i = 0; i < bases; ++i) {
                const auto b = i == 0 ? ModernWheel::base_std : ModernWheel::base_def;
                const Jiffies due = wheels_[w]->base(b).next_expiry;
                const Jiffies at = time_after(due, jiffies_) ? due : jiffies_ + 1;
                if (time_before(at, earliest)) earliest = at;
            }
            // Asked only of a wheel that would move `next`: may_catch_up()
            // searches the wheel's buckets.
            if (time_before(earliest, next) && may_catch_up(w)) next = earliest;
        }
        return next;
    }

    // Does wheel w hold a timer whose bucket is due at the current jiffies?
    bool any_due(unsigned w) const { return wheels_[w]->bucket_due(); }

    ModernWheel& wheel(unsigned w) { return *wheels_.at(w); }

    bool model_pending(std::size_t i) const {
        const Incarnation& inc = incs_[i];
        return inc.timer != kNoTimer && wheels_[*inc.wheel]->is_pending(inc.timer);
    }

    // The CPU whose wheel a check is about: the target CPU of a timer_start,
    // the CPU that printed an expiry, or the idle CPU whose timers it
    // expired remotely (6.9+).
    static unsigned check_cpu(const Event& e, ReplayCheck check) {
        if (check == ReplayCheck::idx) return e.cpu().value_or(e.line_cpu);
        return e.remote_cpu() != kNoCpu ? e.remote_cpu() : e.line_cpu;
    }

    void agree(ReplayCheckCounts& counts, const Event& e, ReplayCheck check) {
        validate::agree(ledger_, counts, e, check, check_cpu(e, check));
    }
    void disagree(ReplayCheckCounts& counts, const Event& e, ReplayCheck check, std::string ours,
                  std::string kernel, ReplayCause cause) {
        validate::disagree(ledger_, counts, e, check, check_cpu(e, check), std::move(ours), std::move(kernel),
                           cause);
    }

    void on_init(const Event& e) {
        // A new timer object; the previous one at this address must be idle.
        if (const std::size_t i = e.previous_incarnation; i != validate::kNoIncarnation && model_pending(i)) {
            note_init_of_pending(ledger_, e);
            wheel(*incs_[i].wheel).cancel(incs_[i].timer);
        }
        Incarnation& inc = incs_[e.incarnation];
        inc.known = true;
        inc.requeued = false;
    }

    void on_start(const Event& e) {
        count_event(ledger_, result_.idx, e);
        Incarnation& inc = incs_[e.incarnation];
        // The flags of a timer object come from its first timer_start.
        if (!inc.started) {
            inc.started = true;
            inc.deferrable = e.deferrable;
        }
        const std::optional<std::uint32_t> cpu = e.cpu(), idx = e.idx();
        const std::optional<Jiffies> jiffies = e.jiffies();
        if (!cpu || !idx || !jiffies) {
            unknown(ledger_, result_.idx, "timer_start without cpu= or idx=");
            return;
        }
        const unsigned k = *cpu;
        if (model_pending(e.incarnation)) {
            // The kernel prints a cancel before requeueing a pending timer.
            // Another CPU's cancel with the same timestamp, printed after
            // this start, came first (trace_clock=global ties across CPUs
            // are not ordered).
            if (Event* const tied = tied_cancel_after(e)) {
                tied->consumed = true;
                note(ledger_, e,
                     fmt::format("the timer_cancel at line {} (same timestamp, another CPU) came first", tied->line),
                     "equal-timestamp reordering");
                inc.requeued = false;
                // Another CPU's: a del_timer (a requeue's two lines come
                // from one CPU).
                count_applied_cancel(ledger_, CancelMeaning::del_timer);
            } else {
                // 6.1 __mod_timer() -> detach_if_pending() always traces the
                // detach: its timer_cancel was lost, and with it whatever
                // else that CPU did meanwhile.
                note_start_of_pending(ledger_, e);
                // The lost events came after the start that queued it: what
                // its wheel disagreed on since then followed from them.
                const unsigned old_cpu = layout_.cpu_of(*inc.wheel);
                reclass_as_lost(ledger_, old_cpu, inc.start_line, e.line, "start of a pending timer without its timer_cancel");
                lose_history(ledger_, k, "start of a pending timer without its timer_cancel", e.line);
                if (old_cpu != k)
                    lose_history(ledger_, old_cpu, "start of a pending timer without its timer_cancel", e.line);
            }
            wheel(*inc.wheel).cancel(inc.timer);
        }
        if (inc.model_fired)
            note_restart_after_model_fire(ledger_, e, "jiffies", inc.model_fired->jiffies, inc.model_fired->line);
        if (inc.wheel && layout_.cpu_of(*inc.wheel) != k && inc.requeued) ++result_.migrations;
        inc.model_fired.reset();
        inc.requeued = false;
        inc.known = true;
        const unsigned to = layout_.start_wheel(k, inc.deferrable, e.pinned);
        const TimerId id = timer_on(e.incarnation, to);
        inc.start_line = e.line;
        ModernWheel& w = wheel(to);
        w.set_flags(id, TimerFlags{.deferrable = inc.deferrable});
        w.arm(id, e.expires);
        const Placement p = w.placement(id);
        const unsigned ours = p.slot;
        if (e.deferrable != inc.deferrable) {
            disagree(result_.idx, e, ReplayCheck::idx, fmt::format("idx {} (deferrable={})", ours, inc.deferrable),
                     fmt::format("idx {} (flags {})", *idx, e.deferrable ? "D" : "not D"),
                     ReplayCause::flags_changed);
            return;
        }
        if (ours == *idx) {
            agree(result_.idx, e, ReplayCheck::idx);
            return;
        }
        const auto b = p.deferrable_base ? ModernWheel::base_def : ModernWheel::base_std;
        const Jiffies clk = w.base(b).clk;
        const unsigned ref = modern::calc_wheel_index(e.expires, *jiffies, w.depth()).idx;
        const ReplayCause cause = *idx == ref ? ReplayCause::our_clock_differs
                                  : ours == ref ? ReplayCause::kernel_clock_differs
                                                : ReplayCause::index_differs;
        disagree(result_.idx, e, ReplayCheck::idx,
                 fmt::format("idx {} (base clk {}, bucket expiry {})", ours, clk, p.bucket_expiry),
                 fmt::format("idx {} (jiffies {}, expires {})", *idx, *jiffies, e.expires), cause);
    }

    void on_cancel(const Event& e) {
        Incarnation& inc = incs_[e.incarnation];
        // Not the detach in expire_timers() (6.1).
        const std::optional<CancelMeaning> meaning = cancel_to_apply(ledger_, stream_, e, inc.known);
        if (!meaning) return;
        if (model_pending(e.incarnation)) {
            wheel(*inc.wheel).cancel(inc.timer);
            inc.requeued = *meaning == CancelMeaning::requeue;
            count_applied_cancel(ledger_, *meaning);
            return;
        }
        if (inc.model_fired)
            note_cancel_after_model_fire(ledger_, e, "jiffies", inc.model_fired->jiffies, inc.model_fired->line);
        else
            note_cancel_not_pending(ledger_, e);
        inc.model_fired.reset();
        inc.requeued = *meaning == CancelMeaning::requeue;
    }

    // A timer_cancel of e's timer printed after e by another CPU with the
    // same timestamp (e is the current event: the window holds every event
    // with its timestamp).
    Event* tied_cancel_after(const Event& e) const {
        for (std::size_t i = 1; Event* n = stream_.ahead(i); ++i) {
            if (n->timestamp_ns != e.timestamp_ns) break;
            if (n->timer != e.timer) continue;
            if (n->type == FtraceEventType::timer_cancel && n->line_cpu != e.line_cpu && !n->consumed) return n;
            return nullptr;
        }
        return nullptr;
    }

    void end_trace(unsigned c) {
        cpus_[c].callback.reset();
        end_run(c, validate::kFiredAfterTrace);
    }

    // Ends CPU c's run: what it still fires, the kernel never showed.
    void end_run(unsigned c, std::string_view why) {
        bool may_start = false;
        while (auto f = next_model_fire(c, may_start)) model_only_fire(*f, c, why);
        cpus_[c].run.reset();
    }

    // The next timer our softirq on CPU c fires: a parked one, else the
    // current run's next, else (if allowed) the first of a new run: on the
    // CPU's own bases, or (6.9+) the global base of the idle CPU it expires
    // remotely (CpuState::run_remote).
    std::optional<FiredTimer> next_model_fire(unsigned c, bool& may_start) {
        CpuState& s = cpus_[c];
        if (s.parked) {
            auto f = s.parked;
            s.parked.reset();
            return f;
        }
        if (s.run) {
            if (auto f = s.run->resume()) return of_object(f, s.run->current_wheel());
            s.run.reset();
        }
        if (!may_start) return std::nullopt;
        may_start = false;
        const RunWheels run = layout_.run_of(c, s.run_remote);
        std::array<ModernWheel*, 3> ws{};
        for (unsigned i = 0; i < run.count; ++i) ws[i] = &wheel(run.wheel[i]);
        s.run = std::make_unique<SteppedRun>(ws, run.wheel, run.count);
        s.run_jiffies = jiffies_;
        s.run_line = stream_.current().line;
        ++result_.model_softirq_runs;
        if (auto f = s.run->start()) return of_object(f, s.run->current_wheel());
        s.run.reset();
        return std::nullopt;
    }

    void model_only_fire(const FiredTimer& f, unsigned c, std::string_view why) {
        ++result_.model_fires;
        incs_[f.id].model_fired = Incarnation::EarlyFire{cpus_[c].run_line, cpus_[c].run_jiffies, f.base_clk};
        note_model_fire(ledger_, stream_.current(), f.id, c, "from bucket clock", f.base_clk, why);
    }

    void on_expire_entry(const Event& e) {
        const unsigned c = e.line_cpu;
        CpuState& s = cpus_.at(c);
        enter_expiry(ledger_, e, s.callback);
        Incarnation& inc = incs_[e.incarnation];
        const auto object = static_cast<TimerId>(e.incarnation); // as FiredTimer::id gives it (of_object())
        if (e.remote_cpu() != s.run_remote) {
            // 6.9 run_timer_softirq(): the CPU's own bases are done before
            // tmigr_handle_remote() expires an idle CPU's global base, and a
            // remote expiry is over when its softirq ends.
            end_run(c, "the kernel's run went on to other bases");
            s.run_remote = e.remote_cpu();
        }
        if (!e.baseclk() || !e.jiffies()) {
            unknown(ledger_, result_.expiry, "timer_expire_entry without now= or baseclk=");
            return;
        }
        const Jiffies now = *e.jiffies();
        const Jiffies kernel_clk = *e.baseclk();
        if (!inc.known) {
            unknown(ledger_, result_.expiry, "expiry of a timer the trace never showed armed");
            return;
        }
        if (s.parked && s.parked->id == object) {
            // Our run already fired it after the previous callback returned
            // (since queued on another wheel, if at all: not pending there).
            const FiredTimer fired = *s.parked;
            s.parked.reset();
            s.callback = e.incarnation;
            check_fired(e, fired, kernel_clk, now,
                        inc.wheel == s.parked_wheel ? wheel(s.parked_wheel).placement(inc.timer) : Placement{});
            return;
        }
        if (!model_pending(e.incarnation)) {
            if (inc.model_fired) {
                disagree(result_.expiry, e, ReplayCheck::expiry,
                         fmt::format("fired at jiffies {} from bucket clock {} (run at line {})",
                                     inc.model_fired->jiffies, inc.model_fired->base_clk, inc.model_fired->line),
                         kernel_view(kernel_clk, now), ReplayCause::fired_earlier);
            } else {
                // Never pending in our model, nor fired by it: the start that
                // armed it is missing from the trace. The wheel out of step
                // is the one checked: a 6.9+ remote expiry's idle CPU's.
                lose_history(ledger_, check_cpu(e, ReplayCheck::expiry), "expiry of a timer our model never had pending",
                             e.line);
                disagree(result_.expiry, e, ReplayCheck::expiry, "not pending", kernel_view(kernel_clk, now),
                         ReplayCause::not_pending);
            }
            inc.model_fired.reset();
            s.callback = e.incarnation;
            return;
        }
        if (!layout_.run_of(c, s.run_remote).contains(*inc.wheel)) {
            const Placement p = wheel(*inc.wheel).placement(inc.timer);
            disagree(result_.expiry, e, ReplayCheck::expiry,
                     fmt::format("pending on {} in bucket {} (clock {})", layout_.describe(*inc.wheel), p.slot,
                                 p.bucket_expiry),
                     kernel_view(kernel_clk, now), ReplayCause::other_cpu);
            wheel(*inc.wheel).cancel(inc.timer);
            s.callback = e.incarnation;
            return;
        }
        ModernWheel& w = wheel(*inc.wheel);
        const TimerId id = inc.timer;
        const Placement p = w.placement(id);
        if (time_after(p.bucket_expiry, now)) {
            disagree(result_.expiry, e, ReplayCheck::expiry,
                     fmt::format("pending in bucket {} (clock {})", p.slot, p.bucket_expiry),
                     kernel_view(kernel_clk, now),
                     ReplayCause::not_due);
            w.cancel(id);
            s.callback = e.incarnation;
            return;
        }
        // Due in our model: our softirq must fire it now. What it fires
        // before it, the kernel has not shown (yet).
        bool may_start = true;
        std::optional<FiredTimer> fired;
        while (auto f = next_model_fire(c, may_start)) {
            if (f->id == object) {
                fired = f;
                break;
            }
            model_only_fire(*f, c, fmt::format("the kernel expired {} first", ledger_.names[e.incarnation].function));
        }
        s.callback = e.incarnation;
        if (!fired) {
            disagree(result_.expiry, e, ReplayCheck::expiry,
                     fmt::format("pending in bucket {} (clock {}) but not fired", p.slot, p.bucket_expiry),
                     kernel_view(kernel_clk, now),
                     ReplayCause::not_collected);
            if (model_pending(e.incarnation)) w.cancel(id);
            return;
        }
        check_fired(e, *fired, kernel_clk, now, p);
    }

    // What the kernel's timer_expire_entry said, for a disagreement (made
    // only then: most expiries agree).
    static std::string kernel_view(Jiffies kernel_clk, Jiffies now) {
        return fmt::format("baseclk {} now {}", kernel_clk, now);
    }

    // Our run fired the timer the kernel expired: same bucket clock, not late?
    void check_fired(const Event& e, const FiredTimer& fired, Jiffies kernel_clk, Jiffies now, const Placement& p) {
        if (fired.base_clk != kernel_clk) {
            disagree(result_.expiry, e, ReplayCheck::expiry,
                     p.pending ? fmt::format("bucket clock {} (bucket {}, queued for {})", fired.base_clk, p.slot,
                                             p.bucket_expiry)
                               : fmt::format("bucket clock {}", fired.base_clk),
                     kernel_view(kernel_clk, now), ReplayCause::baseclk_differs);
        } else if (time_after(fired.base_clk, now)) {
            disagree(result_.expiry, e, ReplayCheck::expiry, fmt::format("bucket clock {}", fired.base_clk),
                     kernel_view(kernel_clk, now),
                     ReplayCause::fired_late);
        } else {
            agree(result_.expiry, e, ReplayCheck::expiry);
        }
    }

    void on_expire_exit(const Event& e) {
        const unsigned c = e.line_cpu;
        CpuState& s = cpus_.at(c);
        if (!exits_callback(ledger_, e, s.callback)) return;
        // Our callback returns: what does our run fire next? 6.1
        // __run_timers() reads jiffies for every bucket: when this CPU's next
        // expiry (after its detach) shows jiffies moved on meanwhile (a tick
        // on another CPU during the callback), the run goes on at those.
        if (s.run && !s.parked) {
            if (const auto next = next_expiry_jiffies_on_cpu(stream_, e)) advance_jiffies(*next);
            std::optional<FiredTimer> fired = s.run->resume(); // before current_wheel(): it moves the run on
            if (auto f = of_object(fired, s.run->current_wheel())) {
                s.parked = f;
                s.parked_wheel = s.run->current_wheel();
            } else
                s.run.reset();
        }
    }

    ReplayStream& stream_;
    IncarnationSlots& slots_;
    std::vector<Incarnation> incs_;
    ReplayResult& result_;
    const ReplayOptions& options_;
    ReplayLedger ledger_;
    BaseLayout layout_;
    std::vector<std::unique_ptr<ModernWheel>> wheels_; // layout_.wheels(): by CPU, or by CPU and base
    std::vector<std::vector<IncarnationIndex>> owners_; // by wheel, by its timer: the timer object it stands for
    std::vector<IncarnationIndex> held_by_cpus_;        // prepare_holds()
    std::vector<CpuState> cpus_;
    Jiffies jiffies_ = 0;
};

ReplayResult replay_kernel_trace(FtraceReader& reader, const ReplayOptions& options) {
    ReplayResult result;
    IncarnationSlots slots;
    ReplayStream stream(reader, options, result, slots);
    if (!stream.primed()) return result;
    if (result.kernel_classic) {
        validate::replay_classic_trace(stream, slots, result, options);
        return result;
    }
    Replay replay(stream, slots, result, options);
    replay.run();
    return result;
}

// A survey of the events `reader` keeps (options' filter), from a pass of
// its own; `also` observes the same pass (every line, the filter's drops
// included).
ReplaySurvey survey_pass(FtraceReader& reader, const ReplayOptions& options, FtraceObserver* also = nullptr) {
    reader.allow_unknown_hz(); // the survey needs no HZ: the replay's pass checks it
    if (options.force_hz) reader.force_hz();
    reader.set_filter(options.filter);
    ReplaySurveyor surveyor(false);
    FtraceObserverTee observers{&surveyor, also};
    reader.set_observer(&observers);
    FtraceEvent e;
    while (reader.next(e)) surveyor.event(e);
    reader.set_observer(nullptr);
    return surveyor.survey();
}

// Text in memory: one pass of its own for what is not given (the kernel's
// version from every event, the survey from the kept ones).
ReplayOptions resolved_for_text(std::string_view text, const std::string& file_name, const ReplayOptions& options) {
    if (options.kernel && options.survey) return options;
    ReplayOptions resolved = options;
    KernelVersionEvidence evidence;
    FtraceReader reader(text, file_name, options.hz);
    const ReplaySurvey survey = survey_pass(reader, options, options.kernel ? nullptr : &evidence);
    if (!resolved.kernel) {
        evidence.finish(reader.stats());
        resolved.kernel = resolve_kernel_version(evidence, std::nullopt, file_name);
    }
    if (!resolved.survey) resolved.survey = survey;
    return resolved;
}

} // namespace

ReplayResult replay_kernel_trace(std::string_view text, std::string file_name, const ReplayOptions& options) {
    const ReplayOptions resolved = resolved_for_text(text, file_name, options);
    FtraceReader reader(text, std::move(file_name), options.hz);
    return replay_kernel_trace(reader, resolved);
}

ReplayResult replay_kernel_trace(InputFile& in, const ReplayOptions& options) {
    FtraceReader reader(in, options.hz);
    return replay_kernel_trace(reader, options);
}

void ReplaySurveyor::other_line(std::uint64_t line, std::string_view text) {
    if (!survey_.timer_migration && is_timer_migration_line(text)) survey_.timer_migration = true;
    if (!survey_.workload_start && text.find("timersim: workload start") != std::string_view::npos &&
        text.find("tracing_mark_write:") != std::string_view::npos)
        survey_.workload_start = line;
}

void ReplaySurveyor::event(const FtraceEvent& e) {
    // A CPU no kernel can have is refused by the replay, at its line.
    survey_.cpus = trace_cpus_with(e, survey_.cpus);
    if (const auto j = e.jiffies(); j && (!survey_.first_jiffies || time_before(*j, *survey_.first_jiffies)))
        survey_.first_jiffies = *j;
}

ReplaySurvey survey_kernel_trace(InputFile& in, const ReplayOptions& options) {
    FtraceReader reader(in, options.hz);
    return survey_pass(reader, options);
}

} // namespace timersim
