#include "sim/validate/classic_replay.hpp"

#include "sim/validate/replay_ledger.hpp"

#include "wheel/kernel/classic_wheel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace timersim::validate {

namespace {

// A wheel with timers walks every jiffy (3.6 __run_timers()), some 100 ns
// a step: more than 2^20 jiffies behind the trace's jiffies (17 minutes at
// HZ=1000; a long idle gap, a broken or hostile trace, or one that never
// shows a due timer's run), it re-places its timers instead.
inline constexpr Jiffies kMaxWalk = Jiffies{1} << 20;

// A timer object of the trace (one timer= between two timer_inits; its
// names: ReplayLedger::names).
struct ClassicTimer {
    bool started = false;             // its first timer_start was replayed
    bool deferrable = false;          // from its first timer_start (4.2-4.7 show it)
    bool known = false;               // seen armed since its timer_init
    bool requeued = false;            // its last timer_cancel was a requeue's detach (cancel_meaning.hpp)
    bool cascaded = false;            // a cascade moved it since its last timer_start
    bool cpu_shown = false;           // its last timer_start named the target CPU (4.2-4.7)
    std::optional<unsigned> cpu;      // the wheel our model last queued it on
    Jiffies expires = 0;              // as queued
    std::uint64_t start_line = 0;
    // Our run fired it and the kernel has not shown that expiry (yet).
    struct EarlyFire {
        std::uint64_t line = 0; // the kernel expiry our run was matching then
        Jiffies step = 0;       // the __run_timers() step that fired it
        Jiffies now = 0;        // the now= of the kernel's run it was fired in
        unsigned cpu = 0;
        std::string before;     // the timer the kernel expired instead
    };
    std::optional<EarlyFire> model_fired;
};

struct ClassicCpu {
    std::unique_ptr<ClassicWheel> wheel;
    // Its pending timers by expires, then by when the trace first showed
    // them (IncarnationSlots::birth()): how far an empty catch-up may go,
    // and the order replace_far_behind() queues them again in.
    std::set<std::tuple<Jiffies, std::uint64_t, TimerId>> pending;
    bool in_run = false;                 // our softirq run is in progress
    std::optional<FiredTimer> parked;    // fired after the last callback returned, not yet matched
    Jiffies parked_now = 0;              // the now= of the kernel run it was fired in
    std::optional<std::size_t> callback; // the timer object whose kernel callback runs
    Jiffies run_now = 0;                 // now= of the kernel expiry our run is matching
    std::uint64_t run_line = 0;
};

// 4.2-4.7 print the whole flags word (flags=0x%08x), whose bits differ from
// 4.8's: 4.2 include/linux/timer.h has TIMER_DEFERRABLE at 0x00100000,
// which the reader decodes with 4.8's bits as TIMER_PINNED. TIMER_PINNED
// itself is 4.8's (before, pinning was an argument of __mod_timer(), seen
// here only as the target CPU the word holds).
bool deferrable_of(const Event& e) { return e.pinned; }

class ClassicReplay {
public:
    ClassicReplay(ReplayStream& stream, IncarnationSlots& slots, ReplayResult& result, const ReplayOptions& options)
        : stream_(stream), slots_(slots), result_(result), options_(options),
          ledger_(make_ledger(stream, result, options)) {
        const Jiffies start = first_jiffies(options, result_.hz);
        jiffies_ = start;
        cpus_.resize(result_.cpus);
        for (ClassicCpu& s : cpus_) {
            // No slack: the trace's expires already has it (apply_slack()
            // runs before the tracepoint, 2.6.38-4.7).
            s.wheel = std::make_unique<ClassicWheel>(
                ClassicWheel::Config{.hz = result_.hz, .start_jiffies = start, .slack = std::nullopt});
            s.wheel->set_slot_order(result_.classic_oldest_first ? ClassicWheel::SlotOrder::oldest_first
                                                                 : ClassicWheel::SlotOrder::newest_first);
            s.wheel->observe_cascades(&ClassicReplay::on_cascade, this);
        }
    }

    void run() { replay_events(ledger_, stream_, slots_, *this); }

private:
    // It calls advance_jiffies(), the on_*() of each event, grow(),
    // holds(), forget() and end_trace().
    template <class Checker>
    friend void validate::replay_events(ReplayLedger&, ReplayStream&, IncarnationSlots&, Checker&);

    // Timer objects 0..n-1: each has a timer on every CPU's wheel, with the
    // same number (its flags are set when it is queued: set_flags()).
    void grow(std::size_t n) {
        for (std::size_t i = timers_.size(); i < n; ++i)
            for (ClassicCpu& s : cpus_)
                if (s.wheel->create() != static_cast<TimerId>(i))
                    throw std::logic_error("timer ids differ between wheels");
        timers_.resize(n);
    }
    void prepare_holds() { validate::collect_held_by_cpus(cpus_, held_by_cpus_); }
    // Does our model still hold timer object i (pending, fired and not yet
    // matched, or its callback running)?
    bool holds(IncarnationIndex i) const {
        return model_pending(i) || std::binary_search(held_by_cpus_.begin(), held_by_cpus_.end(), i);
    }
    void forget(IncarnationIndex i) { timers_[i] = ClassicTimer{}; }

    static void on_cascade(void* self, TimerId id, unsigned, unsigned) {
        static_cast<ClassicReplay*>(self)->timers_[id].cascaded = true;
    }

    ClassicWheel& wheel(unsigned c) { return *cpus_.at(c).wheel; }

    bool model_pending(std::size_t i) const {
        const ClassicTimer& t = timers_[i];
        return t.cpu && cpus_[*t.cpu].wheel->is_pending(static_cast<TimerId>(i));
    }
    void cancel_in_model(std::size_t i) {
        ClassicTimer& t = timers_[i];
        if (!model_pending(i)) return;
        cpus_[*t.cpu].wheel->cancel(static_cast<TimerId>(i));
        cpus_[*t.cpu].pending.erase({t.expires, slots_.birth(static_cast<IncarnationIndex>(i)), static_cast<TimerId>(i)});
    }

    // Jiffies only move forward. A wheel not in a run catches up as a
    // ticking CPU's does (3.6 run_local_timers() raises TIMER_SOFTIRQ every
    // tick): up to the jiffy before its earliest expiry, so that nothing
    // fires unseen; its due timer waits for the trace to show the expiry.
    void advance_jiffies(Jiffies target) {
        if (!time_after(target, jiffies_)) return;
        check_jiffies_jump(ledger_, stream_.current(), jiffies_, target);
        jiffies_ = target;
        ++result_.catch_up_steps;
        for (unsigned c = 0; c < cpus_.size(); ++c) {
            ClassicCpu& s = cpus_[c];
            ClassicWheel& w = *s.wheel;
            if (time_after(target, w.timer_jiffies() + kMaxWalk)) {
                replace_far_behind(c, target);
                continue;
            }
            if (options_.catch_up_runs && !s.in_run && !s.parked) {
                Jiffies stop = target;
                if (!s.pending.empty() && time_before_eq(std::get<0>(*s.pending.begin()), target))
                    stop = std::get<0>(*s.pending.begin()) - 1;
                if (time_after_eq(stop, w.jiffies()) && time_after_eq(stop, w.timer_jiffies())) {
                    w.set_jiffies(stop);
                    ++result_.empty_softirq_runs;
                    w.run_softirq([&](const FiredTimer& f) {
                        // Cannot happen: nothing was due.
                        fired_in_model(f, c);
                        model_only_fire(f, c, s.run_now, "an empty catch-up run fired it");
                    });
                }
            }
            w.set_jiffies(target);
        }
    }

    // CPU c's wheel is more than kMaxWalk behind `target`: its run ends, its
    // timers are queued again from `target` (their order within a slot is
    // no longer the kernel's), and its history is lost.
    void replace_far_behind(unsigned c, Jiffies target) {
        ClassicCpu& s = cpus_[c];
        if (s.parked) model_only_fire(*s.parked, c, s.parked_now, "its run ended at a jump of jiffies");
        s.parked.reset();
        s.in_run = false;
        const std::vector<std::tuple<Jiffies, std::uint64_t, TimerId>> queued(s.pending.begin(), s.pending.end());
        for (const auto& [expires, birth, id] : queued) s.wheel->cancel(id);
        s.wheel->set_jiffies(target);
        s.wheel->run_softirq([](const FiredTimer&) {}); // empty: its clock moves to jiffies at once
        for (const auto& [expires, birth, id] : queued) s.wheel->arm(id, expires);
        lose_history(ledger_, c, "our wheel more than 2^20 jiffies behind the trace: its timers re-placed",
                     stream_.current().line, validate::LossEvidence::reset);
    }

    void unknown(std::string_view reason) { validate::unknown(ledger_, result_.expiry, reason); }
    // Expiries are checked on the CPU that printed them.
    void agree(const Event& e) {
        if (validate::agree(ledger_, result_.expiry, e, ReplayCheck::expiry, e.line_cpu) &&
            timers_[e.incarnation].cascaded)
            ++result_.cascaded_agree;
    }
    void disagree(const Event& e, std::string ours, Jiffies now, ReplayCause cause) {
        validate::disagree(ledger_, result_.expiry, e, ReplayCheck::expiry, e.line_cpu, std::move(ours),
                           fmt::format("now {}", now), cause);
    }

    void on_init(const Event& e) {
        if (const std::size_t i = e.previous_incarnation; i != kNoIncarnation && model_pending(i)) {
            note_init_of_pending(ledger_, e);
            cancel_in_model(i);
        }
        ClassicTimer& t = timers_[e.incarnation];
        t.known = true;
        t.requeued = false;
    }

    void on_start(const Event& e) {
        // Counted, not checked: these kernels print no idx.
        count_event(ledger_, result_.idx, e);
        ClassicTimer& t = timers_[e.incarnation];
        if (!t.started) {
            t.started = true;
            t.deferrable = deferrable_of(e);
        }
        const unsigned k = e.cpu().value_or(e.line_cpu);
        if (model_pending(e.incarnation)) {
            // 3.6 __mod_timer() -> detach_if_pending() traces the detach
            // (timer_cancel) of a pending timer: it was lost.
            note_start_of_pending(ledger_, e);
            lose_history(ledger_, k, "start of a pending timer without its timer_cancel", e.line);
            if (*t.cpu != k) lose_history(ledger_, *t.cpu, "start of a pending timer without its timer_cancel", e.line);
            cancel_in_model(e.incarnation);
        }
        if (t.model_fired) note_restart_after_model_fire(ledger_, e, "step", t.model_fired->step, t.model_fired->line);
        if (t.cpu && *t.cpu != k && t.requeued) ++result_.migrations;
        t.model_fired.reset();
        t.requeued = false;
        t.known = true;
        t.cascaded = false;
        t.cpu = k;
        t.cpu_shown = e.cpu().has_value();
        t.expires = e.expires;
        t.start_line = e.line;
        const auto id = static_cast<TimerId>(e.incarnation);
        wheel(k).set_flags(id, TimerFlags{.deferrable = t.deferrable});
        wheel(k).arm(id, e.expires);
        cpus_[k].pending.insert({e.expires, slots_.birth(e.incarnation), id});
    }

    void on_cancel(const Event& e) {
        ClassicTimer& t = timers_[e.incarnation];
        // Not the detach in __run_timers() (3.6 detach_expired_timer()).
        const std::optional<CancelMeaning> meaning = cancel_to_apply(ledger_, stream_, e, t.known);
        if (!meaning) return;
        if (model_pending(e.incarnation)) {
            cancel_in_model(e.incarnation);
            t.requeued = *meaning == CancelMeaning::requeue;
            count_applied_cancel(ledger_, *meaning);
            return;
        }
        if (t.model_fired)
            note_cancel_after_model_fire(ledger_, e, "step", t.model_fired->step, t.model_fired->line);
        else
            note_cancel_not_pending(ledger_, e);
        t.model_fired.reset();
        t.requeued = *meaning == CancelMeaning::requeue;
    }

    // A fire of our run: the timer leaves the CPU's pending set.
    void fired_in_model(const FiredTimer& f, unsigned c) {
        cpus_[c].pending.erase({f.expires, slots_.birth(static_cast<IncarnationIndex>(f.id)), f.id});
    }

    // The next timer our softirq on CPU c fires: the parked one, else the
    // run's next, else (if may_start) the first of a new run.
    std::optional<FiredTimer> next_model_fire(unsigned c, bool& may_start, Jiffies& fired_now) {
        ClassicCpu& s = cpus_[c];
        if (s.parked) {
            auto f = s.parked;
            fired_now = s.parked_now;
            s.parked.reset();
            return f;
        }
        fired_now = s.run_now;
        if (!s.in_run) {
            if (!may_start) return std::nullopt;
            may_start = false;
            s.in_run = true;
            ++result_.model_softirq_runs;
            return step_run(c, true);
        }
        return step_run(c, false);
    }
    // One expiry of our run on CPU c (run_softirq() with a budget of one).
    std::optional<FiredTimer> step_run(unsigned c, bool start) {
        ClassicCpu& s = cpus_[c];
        std::optional<FiredTimer> fired;
        const auto take = [&fired](const FiredTimer& f) { fired = f; };
        if (start)
            s.wheel->run_softirq(take, 1);
        else
            s.wheel->resume_softirq(take, 1);
        if (!fired) {
            s.in_run = false;
            return std::nullopt;
        }
        fired_in_model(*fired, c);
        return fired;
    }

    void end_trace(unsigned c) {
        cpus_[c].callback.reset();
        end_run(c, kFiredAfterTrace);
    }

    void end_run(unsigned c, std::string_view why) {
        bool may_start = false;
        Jiffies now = 0;
        while (auto f = next_model_fire(c, may_start, now)) model_only_fire(*f, c, now, why);
        cpus_[c].in_run = false;
    }

    void model_only_fire(const FiredTimer& f, unsigned c, Jiffies now, std::string_view why) {
        ++result_.model_fires;
        timers_[f.id].model_fired = ClassicTimer::EarlyFire{cpus_[c].run_line, f.base_clk, now, c, std::string(why)};
        note_model_fire(ledger_, stream_.current(), f.id, c, "at step", f.base_clk, why);
    }

    // "pending in tv2 slot 5, runs at step N"
    std::string where(unsigned c, TimerId id) {
        const Placement p = wheel(c).placement(id);
        return fmt::format("pending in tv{} slot {}, runs at step {}", p.level, p.slot, p.bucket_expiry);
    }

    void on_expire_entry(const Event& e) {
        const unsigned c = e.line_cpu;
        ClassicCpu& s = cpus_.at(c);
        enter_expiry(ledger_, e, s.callback);
        ClassicTimer& t = timers_[e.incarnation];
        const auto id = static_cast<TimerId>(e.incarnation);
        if (!e.jiffies()) {
            unknown("timer_expire_entry without now=");
            return;
        }
        const Jiffies now = *e.jiffies();
        if (!t.known) {
            unknown("expiry of a timer the trace never showed armed");
            return;
        }
        s.callback = e.incarnation;
        if (s.parked && s.parked->id == id) {
            // Our run already fired it after the previous callback returned.
            const FiredTimer fired = *s.parked;
            s.parked.reset();
            check_fired(e, fired, now);
            return;
        }
        if (!model_pending(e.incarnation)) {
            if (const auto& early = t.model_fired) {
                // Fired in the kernel's own run (same CPU, same now): the
                // order of that run's timers differs; else an earlier run.
                const bool same_run = early->cpu == c && early->now == now;
                disagree(e,
                         fmt::format("fired at step {} in the run at now {} on CPU {} ({})", early->step, early->now,
                                     early->cpu, early->before),
                         now, same_run ? ReplayCause::order_differs : ReplayCause::fired_earlier);
            } else {
                // Never pending in our model, nor fired by it: the start
                // that armed it is missing from the trace.
                lose_history(ledger_, c, "expiry of a timer our model never had pending", e.line);
                disagree(e, "not pending", now, ReplayCause::not_pending);
            }
            t.model_fired.reset();
            return;
        }
        if (*t.cpu != c) {
            if (t.cpu_shown) {
                disagree(e, fmt::format("on CPU {}: {}", *t.cpu, where(*t.cpu, id)), now, ReplayCause::other_cpu);
            } else {
                // Before 4.2 the trace does not show where __mod_timer()
                // queued it (3.6: on an idle CPU, get_nohz_timer_target()'s).
                unknown("expiry on another CPU than the one that armed it (the trace does not show the target "
                        "CPU before 4.2)");
            }
            cancel_in_model(e.incarnation);
            return;
        }
        const Placement p = wheel(c).placement(id);
        if (time_after(p.bucket_expiry, now)) {
            disagree(e, where(c, id), now, ReplayCause::not_due);
            cancel_in_model(e.incarnation);
            return;
        }
        // Due in our model: our run must fire it now. What it fires before
        // it, the kernel's run has not shown.
        s.run_now = now;
        s.run_line = e.line;
        bool may_start = true;
        std::optional<FiredTimer> fired;
        Jiffies fired_now = now;
        while (auto f = next_model_fire(c, may_start, fired_now)) {
            if (f->id == id) {
                fired = f;
                break;
            }
            model_only_fire(*f, c, fired_now,
                            fmt::format("the kernel expired timer={:016x} {} first", e.timer,
                                        ledger_.names[e.incarnation].function));
        }
        if (!fired) {
            disagree(e, fmt::format("{} but not fired", where(c, id)), now, ReplayCause::not_collected);
            cancel_in_model(e.incarnation);
            return;
        }
        check_fired(e, *fired, now);
    }

    void check_fired(const Event& e, const FiredTimer& fired, Jiffies now) {
        if (time_after(fired.base_clk, now))
            disagree(e, fmt::format("fired at step {}", fired.base_clk), now, ReplayCause::fired_late);
        else
            agree(e);
    }

    void on_expire_exit(const Event& e) {
        const unsigned c = e.line_cpu;
        ClassicCpu& s = cpus_.at(c);
        if (!exits_callback(ledger_, e, s.callback)) return;
        // Our callback returns: what does our run fire next? 3.6
        // __run_timers() reads jiffies for every step: when the CPU's next
        // expiry of this run shows jiffies moved on meanwhile (a tick during
        // the callback), the run goes on to those steps.
        if (s.in_run && !s.parked) {
            if (const auto next = next_expiry_jiffies_on_cpu(stream_, e)) advance_jiffies(*next);
            if (s.in_run) {
                s.parked = step_run(c, false);
                s.parked_now = s.run_now;
            }
        }
    }

    ReplayStream& stream_;
    IncarnationSlots& slots_;
    std::vector<ClassicTimer> timers_;
    std::vector<IncarnationIndex> held_by_cpus_; // prepare_holds()
    ReplayResult& result_;
    const ReplayOptions& options_;
    ReplayLedger ledger_;
    std::vector<ClassicCpu> cpus_;
    Jiffies jiffies_ = 0;
};

} // namespace

void replay_classic_trace(ReplayStream& stream, IncarnationSlots& slots, ReplayResult& result,
                          const ReplayOptions& options) {
    ClassicReplay replay(stream, slots, result, options);
    replay.run();
}

} // namespace timersim::validate
