// The model behind `timersim step`: one wheel driven tick by tick, as a
// ticking CPU without costs, and what each tick did (TickReport). Tick j sets
// jiffies, runs the softirq if the tick raised it, then applies the
// workload's operations of jiffy j. The workload is a list of timeouts armed
// at tick 0, connection churn, or a trace (TraceFeed). Each wheel gets its
// own churn generator with the same seed: the schedule does not depend on
// which timers fire, so every wheel sees the same operations; a trace is read
// once, and the feed hands the same batch to every wheel. Rendering is in
// sim/report/step_report.hpp.
#pragma once

#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "workloads/generators/connection_churn.hpp"
#include "workloads/traces/replay/trace_feed.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace timersim {

// At most this many timers (keeps the drawn per-row totals within 7 digits).
inline constexpr std::size_t kMaxStepTimers = 1000000;

// Where a --timeouts timer is armed: the CPU whose task arms it (TIMEOUT@CPU)
// and how (TIMEOUT@CPU:pinned: mod_timer_pinned(), else mod_timer()).
struct TimeoutPlace {
    unsigned cpu = 0;
    bool pinned = false;
    ArmCall call() const noexcept { return pinned ? ArmCall::mod_timer_pinned : ArmCall::mod_timer; }
};

// What step runs: the timers of --timeouts, all armed before the first tick,
// connection churn, or a trace (--trace).
struct StepWorkload {
    std::vector<Jiffies> timeouts;   // --timeouts, in jiffies
    std::vector<TimeoutPlace> places; // --timeouts: each one's CPU and call (one per timeout)
    std::vector<std::string> texts;  // --timeouts as typed, for labels
    std::optional<ConnectionChurnConfig> churn;
    std::optional<std::string> trace; // --trace or --ftrace FILE
    TraceKind trace_kind = TraceKind::timersim;

    std::size_t timers() const { return churn ? churn->connections : timeouts.size(); }
};


// Short names for timers in the text view: what the user typed for
// --timeouts, the timer kind for churn. Long texts are cut so lines stay short.
std::vector<std::string> timer_labels(const StepWorkload& w);

// What happened in one tick of one wheel.

struct Fired {
    std::uint32_t timer;
    Jiffies requested; // what the workload asked for (before classic slack)
    Jiffies expires;   // timer->expires when it ran
    // Several CPUs (6.9+ pull model): the idle CPU whose global base the
    // timer was on when this CPU, its migrator, expired it; none: its own.
    std::optional<unsigned> remote_for = std::nullopt;
};

// An arm, or (trace workloads) a cancel, in the order they happened.
struct Armed {
    std::uint32_t timer;
    Jiffies requested;
    ArmOutcome outcome;
    Placement at; // after the arm (expires includes classic slack); for a cancel, before it
    bool cancel = false; // del_timer(): at.pending tells whether it removed anything
};

struct Moved {
    std::uint32_t timer;
    Placement from;
    Placement to;
};

// Counter deltas over one softirq run.
struct SoftirqCost {
    std::uint64_t buckets_scanned = 0;
    std::uint64_t expired = 0;
    std::uint64_t cascades = 0;
    std::uint64_t cascade_moves = 0;
    std::array<std::uint64_t, kMaxLevels> cascade_moves_from_level{};
    std::uint64_t jiffies_walked = 0;
    std::uint64_t empty_runs = 0;
    std::uint64_t next_expiry_searches = 0;
};

// The counters' growth from `before` to `after`.
SoftirqCost cost_between(const QueueCounters& before, const QueueCounters& after);

struct TickReport {
    bool start = false; // the frame before the first shown tick: state and tick-0 arms only
    Jiffies tick = 0;
    Jiffies jiffies = 0;
    bool softirq = false; // did the tick raise TIMER_SOFTIRQ
    SoftirqCost cost;
    std::vector<Fired> fired;
    std::vector<Moved> cascaded;
    std::vector<Armed> armed;
};

// ---------------------------------------------------------------------------
// One wheel driven tick by tick (a ticking CPU without costs): tick j sets
// jiffies, runs the softirq if the tick raised it, then applies the
// workload's operations of jiffy j.

template <class Q>
class Stepper {
public:
    Stepper(const typename Q::Config& config, const StepWorkload& w, TraceFeed* feed)
        : Stepper(Q(config), w, feed) {}
    // A queue made beforehand (make_queue(): what its Config does not hold).
    Stepper(Q queue, const StepWorkload& w, TraceFeed* feed)
        : queue_(std::move(queue)), start_(queue_.jiffies()), feed_(feed) {
        const std::size_t n = w.timers();
        queue_.reserve(n);
        ids_.reserve(n);
        requested_.reserve(n);
        for (std::size_t t = 0; t < n; ++t) add_timer();
        if (w.churn) churn_.emplace(*w.churn, start_);
        for (std::size_t t = 0; t < w.timeouts.size(); ++t)
            arm(static_cast<std::uint32_t>(t), start_ + w.timeouts[t], &start_arms_,
                t < w.places.size() ? w.places[t].call() : ArmCall::mod_timer);
        if (feed_) apply(feed_->at(start_), &start_arms_);
    }

    const Q& queue() const noexcept { return queue_; }

    // The frame shown before the first shown tick.
    TickReport start_frame() const {
        TickReport r;
        r.start = true;
        r.tick = tick_;
        r.jiffies = queue_.jiffies();
        if (tick_ == 0) r.armed = start_arms_;
        return r;
    }

    // One tick. With `detail` off (the silent --from ticks) nothing is recorded.
    TickReport step(bool detail) {
        TickReport r;
        ++tick_;
        queue_.set_jiffies(start_ + tick_);
        r.tick = tick_;
        r.jiffies = queue_.jiffies();
        r.softirq = queue_.softirq_due();
        if (r.softirq) {
            // Cascades move timers without any call of ours; comparing
            // placements before and after is the only way to name them.
            const bool watch = detail && may_cascade();
            std::vector<Placement> before;
            if (watch) before = placements();
            const QueueCounters counters = queue_.counters();
            queue_.run_softirq([&](const FiredTimer& f) {
                if (!detail) return;
                const std::uint32_t t = timer_of_[f.id];
                r.fired.push_back({t, requested_[t], f.expires});
            });
            r.cost = cost_between(counters, queue_.counters());
            if (watch) record_moves(before, r.cascaded);
        }
        if (churn_) {
            while (const auto conn = churn_->pop_message(queue_.jiffies()))
                arm(*conn, queue_.jiffies() + churn_->draw_timeout(*conn), detail ? &r.armed : nullptr);
        }
        if (feed_) apply(feed_->at(queue_.jiffies()), detail ? &r.armed : nullptr);
        return r;
    }

    // Interactive use (the browser playground, web/): between two ticks, a
    // new timer (timer_setup()), and mod_timer() or del_timer() at the
    // current jiffy, as a trace's operations after that jiffy's tick.
    std::uint32_t add_timer(TimerFlags flags = {}) {
        ids_.push_back(queue_.create(flags));
        if (timer_of_.size() <= ids_.back()) timer_of_.resize(ids_.back() + 1);
        timer_of_[ids_.back()] = static_cast<std::uint32_t>(ids_.size() - 1);
        requested_.push_back(0);
        return static_cast<std::uint32_t>(ids_.size() - 1);
    }
    Armed arm_now(std::uint32_t t, Jiffies expires) {
        std::vector<Armed> log;
        arm(t, expires, &log);
        return log.front();
    }
    Armed cancel_now(std::uint32_t t) {
        const Placement before = queue_.placement(ids_.at(t));
        queue_.cancel(ids_[t]);
        return {t, 0, ArmOutcome::not_pending, before, true};
    }
    std::size_t timers() const noexcept { return ids_.size(); }
    Placement placement(std::uint32_t t) const { return queue_.placement(ids_.at(t)); }
    TimerId queue_id(std::uint32_t t) const { return ids_.at(t); } // the queue's id of timer t
    Jiffies requested(std::uint32_t t) const { return requested_.at(t); }
    Jiffies tick() const noexcept { return tick_; }

private:
    void arm(std::uint32_t t, Jiffies expires, std::vector<Armed>* log, ArmCall call = ArmCall::mod_timer) {
        requested_[t] = expires;
        const ArmOutcome outcome = queue_.arm(ids_[t], expires, call);
        if (log) log->push_back({t, expires, outcome, queue_.placement(ids_[t])});
    }

    // A trace's operations of this jiffy, in file order. A timer is created
    // (timer_setup()) at its first event, with that event's flags.
    void apply(const std::vector<TraceOp>& ops, std::vector<Armed>* log) {
        for (const TraceOp& op : ops) {
            while (ids_.size() <= op.timer) add_timer(feed_->first_flags()[ids_.size()]);
            if (op.cancel) {
                const Placement before = queue_.placement(ids_[op.timer]);
                queue_.cancel(ids_[op.timer]);
                if (log) log->push_back({op.timer, 0, ArmOutcome::not_pending, before, true});
            } else {
                arm(op.timer, op.expires, log, op.pinned ? ArmCall::mod_timer_pinned : ArmCall::mod_timer);
            }
        }
    }

    // Does this softirq run a classic loop step whose tv1 index is 0 (the
    // same for a cascading wheel:SPEC, or a cog tick that is a multiple of
    // 64), i.e. cascade? The modern wheel, an in-place wheel:SPEC and the
    // other seeds' designs never move a queued timer on their own (scheme
    // 4's overflow walk and netty's transfer show in the cost line).
    bool may_cascade() const {
        if constexpr (std::is_same_v<Q, ClassicWheel> || std::is_same_v<Q, CascadingWheel>) {
            Jiffies mask;
            if constexpr (std::is_same_v<Q, ClassicWheel>)
                mask = queue_.geometry().tvr_size() - 1;
            else
                mask = queue_.geometry().slots(0) - 1;
            const Jiffies first = queue_.timer_jiffies();
            if (time_after(first, queue_.jiffies())) return false;
            return time_before_eq((first + mask) & ~mask, queue_.jiffies());
        } else if constexpr (std::is_same_v<Q, CogWheel>) {
            // cog cascades when it processes a tick that is a multiple of 64.
            const Jiffies first = queue_.clk();
            if (time_after(first, queue_.jiffies())) return false;
            return time_before_eq((first + 63) & ~Jiffies{63}, queue_.jiffies());
        } else {
            return false;
        }
    }

    std::vector<Placement> placements() const {
        std::vector<Placement> p;
        p.reserve(ids_.size());
        for (TimerId id : ids_) p.push_back(queue_.placement(id));
        return p;
    }

    void record_moves(const std::vector<Placement>& before, std::vector<Moved>& moves) const {
        for (std::size_t t = 0; t < ids_.size(); ++t) {
            if (!before[t].pending) continue;
            const Placement now = queue_.placement(ids_[t]);
            if (now.pending && (now.level != before[t].level || now.slot != before[t].slot))
                moves.push_back({static_cast<std::uint32_t>(t), before[t], now});
        }
    }

    Q queue_;
    Jiffies start_;
    Jiffies tick_ = 0;
    std::vector<TimerId> ids_;
    std::vector<std::uint32_t> timer_of_; // TimerId -> workload timer number
    std::vector<Jiffies> requested_;
    std::optional<ConnectionChurn> churn_;
    TraceFeed* feed_;
    std::vector<Armed> start_arms_;
};

} // namespace timersim
