// Engine: the simulated machine. A discrete-event engine over one timer queue
// (classic wheel, modern wheel or heap) that ticks, raises TIMER_SOFTIRQ,
// runs the softirq at interrupt exit or in ksoftirqd, and charges simulated
// time for the timer work, so a large burst of expiries delays the timers
// behind it and ticks keep arriving while a long softirq runs.
//
// Time is simulated nanoseconds from the start (uint64). What happens:
//
//   tick n        at floor(n * 1e9 / HZ) ns (+ optional seeded jitter in
//                 [0, tick_jitter_ns]; nominal times never accumulate error,
//                 so HZ=300 does not drift). The hardirq: jiffies++
//                 (queue.set_jiffies), raise TIMER_SOFTIRQ if
//                 queue.softirq_due() (6.1 run_local_timers(): only when a
//                 bucket is due; 4.x: every tick), then irq_exit().
//   softirq       6.1 irq_exit_rcu() -> invoke_softirq() -> handle_softirqs()
//                 (SoftirqCpu decides whether it runs, restarts or defers).
//                 It starts at the tick's time; each TIMER_SOFTIRQ pass costs
//                 softirq_entry_ns plus the queue's work as it happens
//                 (buckets scanned, cascade moves, next-expiry search steps,
//                 expiries, callbacks, re-arms), read from the queue's
//                 counters at every expiry. A timer "fires" at the time the
//                 softirq has reached when it gets to that timer.
//   ticks inside  a tick due while a softirq runs interrupts it (hardirqs
//   a softirq     are enabled in handle_softirqs()): jiffies moves on at the
//                 tick's own time, TIMER_SOFTIRQ is raised if due, and the
//                 queue's run loop, which reads jiffies live like 6.1
//                 __run_timers(), may then run newly due buckets in the same
//                 pass. irq_exit() does nothing there (in_interrupt()).
//   ksoftirqd     runs ksoftirqd_delay_ns after it was woken.
//   actions       workload steps (arm, cancel, or a call into the workload)
//                 at given ns. Events at the same ns: the tick first, then
//                 ksoftirqd, then actions in the order they were scheduled.
//                 An action due while a softirq runs waits until it ends (one
//                 CPU). Work done by actions (arm/cancel) is accounted as CPU
//                 time but does not delay ticks or softirqs: it belongs to
//                 task context, which this model does not schedule.
//
//   NOHZ idle     optional (nohz_idle). After every event, an idle CPU (no
//                 softirq pending, ksoftirqd not runnable) asks the queue
//                 for its next timer (next_timer_interrupt()). If it is more
//                 than one tick away, the tick stops and the CPU sleeps until
//                 that jiffy's tick time (no timer: until an action). An
//                 action wakes it: jiffies catches up to the tick grid first
//                 (6.1 tick_nohz_irq_enter() -> tick_nohz_update_jiffies()),
//                 then the action runs, then the idle decision is made
//                 again. Deferrable timers do not wake the CPU. Wakeup and
//                 restart always land on the tick grid, as 6.1's
//                 tick_nohz_restart() forwards the tick to the next period.
//
// State is per CPU (CpuState) so several CPUs can follow; today there is one.
#pragma once

#include "sim/error_histogram.hpp"
#include "sim/event_queue.hpp"
#include "sim/workload.hpp"
#include "sim/log_histogram.hpp"
#include "softirq/cost_model.hpp"
#include "softirq/softirq.hpp"
#include "wheel/timer_queue.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

namespace timersim {

// ksoftirqd's default wakeup-to-run latency: a SCHED_NORMAL kthread woken on
// a lightly loaded CPU runs within tens of microseconds (cyclictest-class
// latencies, e.g. 14-25 us in Tosatti's 2019 isolated-CPU figures); a busy
// CPU can make it wait up to a CFS period (sched_latency_ns, 6 ms by default
// on one CPU). 50 us is the lightly loaded case; see --ksoftirqd-delay-ns.
inline constexpr std::uint64_t kDefaultKsoftirqdDelayNs = 50'000;

struct EngineConfig {
    unsigned hz = 250;
    CostModel costs{};
    std::uint64_t ksoftirqd_delay_ns = kDefaultKsoftirqdDelayNs;
    // Each tick is late by a uniform draw in [0, tick_jitter_ns]; must be
    // below the tick period so ticks stay in order. 0 = exact ticks.
    std::uint64_t tick_jitter_ns = 0;
    std::uint64_t seed = 1; // jitter draws
    // CONFIG_NO_HZ_IDLE: stop the tick while the CPU is idle and the next
    // timer is more than one tick away.
    bool nohz_idle = false;
};

// The tick-grid index of time t: the largest n with tick_time_ns(n, hz) <= t.
constexpr std::uint64_t tick_index_at(std::uint64_t t, unsigned hz) noexcept {
    const std::uint64_t r = t % 1'000'000'000ull;
    return t / 1'000'000'000ull * hz + ((r + 1) * hz - 1) / 1'000'000'000ull;
}

// Nominal time of tick n (n ticks after the start): floor(n * 1e9 / hz),
// computed without overflow and without accumulating rounding.
constexpr std::uint64_t tick_time_ns(std::uint64_t n, unsigned hz) noexcept {
    return n / hz * 1'000'000'000ull + n % hz * 1'000'000'000ull / hz;
}

// Per-CPU results.
struct CpuMetrics {
    ErrorHistogram error_jiffies;   // fired jiffy - requested expiry (exact)
    Log2Histogram error_ns;         // fire time - nominal time of the requested expiry tick
    std::uint64_t early = 0;        // fired before the requested jiffy
    Log2Histogram softirq_ns;       // duration of each handle_softirqs() run that ran TIMER_SOFTIRQ
    std::uint64_t max_softirq_ns = 0;
    std::uint64_t max_expired_per_softirq = 0;
    std::uint64_t max_cascade_moves_per_softirq = 0;
    std::uint64_t softirq_work_ns = 0; // simulated time spent in timer softirq passes
    std::uint64_t task_work_ns = 0;    // arm/cancel work outside the softirq (accounted, not scheduled)
    std::uint64_t timer_work_ns() const noexcept { return softirq_work_ns + task_work_ns; }
    std::uint64_t arms = 0;           // arm requests
    std::uint64_t rearm_dequeues = 0; // arms that moved a pending timer (dequeue + enqueue)
    std::uint64_t fired = 0;
    std::uint64_t cancelled = 0;      // cancels that removed a pending timer
    std::uint64_t pending = 0;        // pending when the metrics were taken
    std::uint64_t ticks = 0;
    std::uint64_t ticks_raised = 0;   // ticks that raised TIMER_SOFTIRQ
    std::uint64_t ticks_not_raised = 0;
    std::uint64_t ticks_in_softirq = 0; // ticks that arrived while a softirq ran
    std::uint64_t actions_delayed = 0;  // actions that waited for a softirq to end
    // NOHZ idle (all 0 with the tick always running)
    std::uint64_t tick_stops = 0;             // idle entries that stopped the tick
    std::uint64_t wakeups_by_timer = 0;       // stopped tick woken by its programmed timer event
    std::uint64_t wakeups_by_action = 0;      // stopped tick woken by a workload action
    std::uint64_t ticks_skipped = 0;          // jiffies that passed without a tick
    std::uint64_t max_jiffies_jump = 0;       // most jiffies passed in one step
    SoftirqCpu::Stats softirq;
    QueueCounters counters;

    bool operator==(const CpuMetrics& o) const;
};

template <TimerQueue Q>
class Engine final : public Sim {
public:
    Engine(Q& queue, const EngineConfig& config, Workload* workload = nullptr)
        : config_(config), workload_(workload), start_jiffies_(queue.jiffies()), jitter_rng_(config.seed),
          cpu_(queue, SoftirqCpu::Config{.hz = config.hz, .ksoftirqd_delay_ns = config.ksoftirqd_delay_ns}) {
        if (config.hz == 0 || config.hz > 1'000'000) throw std::invalid_argument("hz must be 1..1000000");
        if (config.tick_jitter_ns >= 1'000'000'000ull / config.hz)
            throw std::invalid_argument("tick jitter must be below the tick period");
        next_tick_index_ = 1;
        next_tick_ns_ = tick_at(1);
        cpu_.charged = queue.counters();
    }

    // Processes every event at or before end_ns; afterwards now_ns() >= end_ns.
    void run_until(std::uint64_t end_ns);
    // Runs up to and including tick n (n ticks after the start).
    void run_ticks(std::uint64_t n) { run_until(tick_time_ns(n, config_.hz) + config_.tick_jitter_ns); }

    // Metrics with the queue's counters and pending count as of now (call it
    // from outside the softirq, not from a workload's on_fire).
    CpuMetrics metrics() const {
        CpuMetrics m = cpu_.metrics;
        m.task_work_ns += uncharged_ns(); // task work not charged yet (no softirq since)
        m.counters = cpu_.queue.counters();
        m.pending = cpu_.queue.pending();
        m.softirq = cpu_.softirq.stats();
        m.ticks_skipped = (cpu_.queue.jiffies() - start_jiffies_) - m.ticks;
        return m;
    }
    // The workload whose hooks the engine calls (it may need the engine to
    // create its timers first, hence not only in the constructor).
    void set_workload(Workload* workload) noexcept { workload_ = workload; }
    Q& queue() noexcept { return cpu_.queue; }
    const SoftirqCpu& softirq() const noexcept { return cpu_.softirq; }
    const EngineConfig& config() const noexcept { return config_; }
    std::uint64_t ticks() const noexcept { return ticks_; }
    bool tick_stopped() const noexcept { return tick_stopped_; }
    // When the last tick happened (0 before the first).
    std::uint64_t last_tick_ns() const noexcept { return last_tick_ns_; }
    // Nominal time at which jiffies reaches j.
    std::int64_t jiffy_time_ns(Jiffies j) const noexcept {
        const std::int64_t d = jiffies_diff(j, start_jiffies_);
        return d >= 0 ? static_cast<std::int64_t>(tick_time_ns(static_cast<std::uint64_t>(d), config_.hz))
                      : -static_cast<std::int64_t>(tick_time_ns(0 - static_cast<std::uint64_t>(d), config_.hz));
    }

    // Sim
    // Inside a callback: the time the softirq has reached.
    std::uint64_t now_ns() const override { return cpu_.in_softirq ? cpu_.softirq_clock_ns : now_ns_; }
    Jiffies jiffies() const override { return cpu_.queue.jiffies(); }
    Jiffies start_jiffies() const override { return start_jiffies_; }
    unsigned hz() const override { return config_.hz; }
    unsigned cpus() const override { return 1; }
    unsigned current_cpu() const override { return 0; }
    std::uint64_t next_tick_ns() const override { return next_tick_ns_; }
    TimerId create_timer(TimerFlags flags = {}) override {
        const TimerId id = cpu_.queue.create(flags);
        if (id >= cpu_.requested.size()) cpu_.requested.resize(std::size_t{id} + 1, 0);
        return id;
    }
    void reserve_timers(std::size_t n) override {
        cpu_.queue.reserve(n);
        cpu_.requested.reserve(n);
    }
    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) override;
    ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned /*cpu*/) override {
        return arm(id, expires, ArmCall::mod_timer_pinned); // one CPU for now; add_timer_on() has no slack
    }
    bool cancel(TimerId id) override;
    void schedule_action(std::uint64_t time_ns, const Action& action) override {
        actions_.push(time_ns, action);
    }

private:
    struct CpuState {
        CpuState(Q& q, SoftirqCpu::Config c) : queue(q), softirq(c) {}
        Q& queue;
        SoftirqCpu softirq;
        CpuMetrics metrics;
        std::vector<Jiffies> requested;  // by TimerId: the expiry the workload asked for
        QueueCounters charged;           // counters already turned into simulated time
        std::uint64_t rearm_dequeues_charged = 0;
        bool in_softirq = false;
        std::uint64_t softirq_clock_ns = 0; // how far the running softirq has got
    };

    std::uint64_t tick_at(std::uint64_t n) {
        std::uint64_t t = tick_time_ns(n, config_.hz);
        if (config_.tick_jitter_ns) {
            // Our own mapping from the 64-bit stream (std distributions differ
            // between standard libraries): the same seed is the same run everywhere.
            t += jitter_rng_() % (config_.tick_jitter_ns + 1);
        }
        return t;
    }

    // Simulated ns of the queue work done since the last charge.
    std::uint64_t uncharged_ns() const noexcept;
    // Turns that work into time: into the softirq's clock when inside it,
    // into task work otherwise.
    void charge_queue_work();
    void charge(std::uint64_t ns) {
        if (cpu_.in_softirq) {
            cpu_.softirq_clock_ns += ns;
            cpu_.metrics.softirq_work_ns += ns;
        } else {
            cpu_.metrics.task_work_ns += ns;
        }
    }
    // The tick's hardirq part at its own time; then irq_exit() unless it
    // interrupted a running softirq.
    void tick();
    void deliver_ticks_during_softirq() {
        while (next_tick_ns_ <= cpu_.softirq_clock_ns) {
            ++cpu_.metrics.ticks_in_softirq;
            tick();
        }
    }
    void run_softirqs(SoftirqContext context, std::uint64_t start_ns);
    // Moves jiffies to `target` if that is ahead; records the jump.
    void advance_jiffies(Jiffies target);
    // NOHZ: the idle decision after an event (6.1 tick_nohz_idle_stop_tick()).
    void nohz_idle_enter();
    // NOHZ: an interrupt other than the tick arrives while the tick is stopped.
    void nohz_irq_enter();
    void on_fire(const FiredTimer& fired);
    void run_action(const Action& action);

    EngineConfig config_;
    Workload* workload_;
    Jiffies start_jiffies_;
    std::mt19937_64 jitter_rng_;
    CpuState cpu_;
    EventQueue<Action> actions_;
    std::uint64_t now_ns_ = 0;
    std::uint64_t ticks_ = 0;
    std::uint64_t next_tick_index_ = 0; // tick-grid index of the next tick event
    std::uint64_t next_tick_ns_ = 0;    // its time (UINT64_MAX: none programmed)
    std::uint64_t last_tick_ns_ = 0;
    bool tick_stopped_ = false;
};

template <TimerQueue Q>
void Engine<Q>::run_until(std::uint64_t end_ns) {
    while (true) {
        const std::uint64_t ksoftirqd_at = cpu_.softirq.ksoftirqd_run_at().value_or(UINT64_MAX);
        const std::uint64_t action_at = actions_.next_time();
        const std::uint64_t next = std::min({next_tick_ns_, ksoftirqd_at, action_at});
        if (next > end_ns || next == UINT64_MAX) break; // UINT64_MAX: nothing will ever happen
        // Ties: the tick first, then ksoftirqd, then actions.
        if (next_tick_ns_ == next) {
            now_ns_ = std::max(now_ns_, next_tick_ns_);
            tick();
        } else if (ksoftirqd_at == next) {
            now_ns_ = std::max(now_ns_, ksoftirqd_at);
            if (cpu_.softirq.ksoftirqd_runs()) run_softirqs(SoftirqContext::ksoftirqd, now_ns_);
        } else {
            const auto event = actions_.pop();
            if (event.time_ns < now_ns_) ++cpu_.metrics.actions_delayed;
            now_ns_ = std::max(now_ns_, event.time_ns);
            if (tick_stopped_) nohz_irq_enter();
            run_action(event.payload);
        }
        if (config_.nohz_idle) nohz_idle_enter();
    }
    now_ns_ = std::max(now_ns_, end_ns);
}

template <TimerQueue Q>
void Engine<Q>::tick() {
    const std::uint64_t n = next_tick_index_;
    ++ticks_;
    last_tick_ns_ = next_tick_ns_;
    next_tick_index_ = n + 1;
    next_tick_ns_ = tick_at(n + 1);
    CpuState& cpu = cpu_;
    ++cpu.metrics.ticks;
    if (tick_stopped_) {
        // The timer event programmed at idle entry: the tick runs again
        // (from here on every period, until the next idle decision).
        tick_stopped_ = false;
        ++cpu.metrics.wakeups_by_timer;
    }
    // tick_periodic()/tick_sched_do_timer(): jiffies moves to this tick (one
    // step while ticking, the whole stopped stretch after NOHZ idle), then
    // update_process_times() -> run_local_timers().
    advance_jiffies(start_jiffies_ + n);
    if (cpu.queue.softirq_due()) {
        cpu.softirq.raise(timer_softirq);
        ++cpu.metrics.ticks_raised;
    } else {
        ++cpu.metrics.ticks_not_raised;
    }
    if (cpu.in_softirq) return; // back into the interrupted softirq
    if (cpu.softirq.irq_exit()) run_softirqs(SoftirqContext::irq_exit, last_tick_ns_);
}

template <TimerQueue Q>
void Engine<Q>::advance_jiffies(Jiffies target) {
    CpuState& cpu = cpu_;
    const Jiffies now = cpu.queue.jiffies();
    if (!time_after(target, now)) return;
    cpu.metrics.max_jiffies_jump = std::max<std::uint64_t>(cpu.metrics.max_jiffies_jump, target - now);
    cpu.queue.set_jiffies(target);
}

template <TimerQueue Q>
void Engine<Q>::nohz_idle_enter() {
    CpuState& cpu = cpu_;
    // Not idle: softirq work pending (6.1 tick_nohz_next_event() keeps the
    // tick for local_timer_softirq_pending()) or ksoftirqd waiting to run.
    if (cpu.in_softirq || cpu.softirq.pending() != 0 || cpu.softirq.ksoftirqd_runnable()) return;
    // 6.1 tick_nohz_next_event() -> get_next_timer_interrupt(basej, basem).
    const std::optional<Jiffies> next = cpu.queue.next_timer_interrupt();
    const Jiffies basej = cpu.queue.jiffies();
    const std::uint64_t base_index = basej - start_jiffies_;
    if (next && time_before_eq(*next, basej + 1)) {
        // The next event is at most one tick away: keep (or restart) the
        // tick, on the grid: 6.1 tick_nohz_restart() forwards it by whole
        // periods past now.
        if (tick_stopped_) {
            tick_stopped_ = false;
            if constexpr (requires(Q& q) { q.clear_idle(); }) cpu.queue.clear_idle(); // timer_clear_idle()
            next_tick_index_ = std::max(base_index, tick_index_at(now_ns_, config_.hz)) + 1;
            next_tick_ns_ = tick_at(next_tick_index_);
        }
        return;
    }
    if (!tick_stopped_) {
        tick_stopped_ = true;
        ++cpu.metrics.tick_stops;
    }
    // Sleep until the tick of the next timer's jiffy (deferrable timers do
    // not count), or until an action if there is none.
    if (next) {
        next_tick_index_ = *next - start_jiffies_;
        next_tick_ns_ = tick_at(next_tick_index_);
    } else {
        next_tick_index_ = UINT64_MAX;
        next_tick_ns_ = UINT64_MAX;
    }
}

template <TimerQueue Q>
void Engine<Q>::nohz_irq_enter() {
    ++cpu_.metrics.wakeups_by_action;
    // 6.1 tick_nohz_irq_enter() -> tick_nohz_update_jiffies(): jiffies catches
    // up with the time that passed while the tick was stopped.
    advance_jiffies(start_jiffies_ + tick_index_at(now_ns_, config_.hz));
    // Leaving idle to run the action: timer_clear_idle(). The tick stays
    // stopped until nohz_idle_enter() decides again after the action.
    if constexpr (requires(Q& q) { q.clear_idle(); }) cpu_.queue.clear_idle();
}

template <TimerQueue Q>
void Engine<Q>::run_softirqs(SoftirqContext context, std::uint64_t start_ns) {
    CpuState& cpu = cpu_;
    charge_queue_work(); // what task context did since the last softirq
    cpu.in_softirq = true;
    cpu.softirq_clock_ns = start_ns;
    const std::uint64_t expired_before = cpu.queue.counters().expired;
    const std::uint64_t moves_before = cpu.queue.counters().cascade_moves;
    bool ran_timers = false;
    cpu.softirq.begin(cpu.queue.jiffies(), context);
    SoftirqCpu::PassEnd end;
    do {
        const std::uint32_t mask = cpu.softirq.start_pass();
        if (mask & (1u << timer_softirq)) {
            ran_timers = true;
            // 6.1 run_timer_softirq() -> __run_timers() for each base.
            charge(config_.costs.softirq_entry_ns);
            cpu.queue.run_softirq([this](const FiredTimer& fired) { on_fire(fired); });
            charge_queue_work();
        }
        deliver_ticks_during_softirq();
        end = cpu.softirq.end_pass(cpu.queue.jiffies(), cpu.softirq_clock_ns);
    } while (end == SoftirqCpu::PassEnd::restart);
    cpu.in_softirq = false;
    now_ns_ = std::max(now_ns_, cpu.softirq_clock_ns);
    if (ran_timers) {
        const std::uint64_t duration = cpu.softirq_clock_ns - start_ns;
        cpu.metrics.softirq_ns.add(static_cast<std::int64_t>(duration));
        cpu.metrics.max_softirq_ns = std::max(cpu.metrics.max_softirq_ns, duration);
        cpu.metrics.max_expired_per_softirq =
            std::max(cpu.metrics.max_expired_per_softirq, cpu.queue.counters().expired - expired_before);
        cpu.metrics.max_cascade_moves_per_softirq =
            std::max(cpu.metrics.max_cascade_moves_per_softirq, cpu.queue.counters().cascade_moves - moves_before);
    }
}

template <TimerQueue Q>
std::uint64_t Engine<Q>::uncharged_ns() const noexcept {
    const CpuState& cpu = cpu_;
    const QueueCounters& now = cpu.queue.counters();
    const QueueCounters& was = cpu.charged;
    const CostModel& c = config_.costs;
    const std::uint64_t rearm_dequeues = cpu.metrics.rearm_dequeues - cpu.rearm_dequeues_charged;
    return (now.enqueues - was.enqueues) * c.enqueue_ns +
           (now.cancels - was.cancels + rearm_dequeues) * c.dequeue_ns +
           (now.cascade_moves - was.cascade_moves) * c.cascade_move_ns +
           (now.buckets_scanned - was.buckets_scanned) * c.bucket_scan_ns +
           (now.expired - was.expired) * c.expiry_ns +
           (now.next_expiry_search_steps - was.next_expiry_search_steps) * c.next_expiry_step_ns;
}

template <TimerQueue Q>
void Engine<Q>::charge_queue_work() {
    const std::uint64_t ns = uncharged_ns();
    cpu_.charged = cpu_.queue.counters();
    cpu_.rearm_dequeues_charged = cpu_.metrics.rearm_dequeues;
    charge(ns);
}

template <TimerQueue Q>
void Engine<Q>::on_fire(const FiredTimer& fired) {
    CpuState& cpu = cpu_;
    // Everything the queue did to get here (scans, cascades, this expiry)
    // happened before the callback; ticks due by then have interrupted us.
    charge_queue_work();
    deliver_ticks_during_softirq();
    const Jiffies requested = cpu.requested[fired.id];
    const Jiffies now_j = cpu.queue.jiffies();
    const std::int64_t error_j = jiffies_diff(now_j, requested);
    const std::int64_t error_ns = static_cast<std::int64_t>(cpu.softirq_clock_ns) - jiffy_time_ns(requested);
    CpuMetrics& m = cpu.metrics;
    ++m.fired;
    m.error_jiffies.add(error_j);
    m.error_ns.add(error_ns);
    if (error_j < 0) ++m.early;
    if (workload_) {
        const FireRecord record{fired.id, requested, fired.expires, now_j, cpu.softirq_clock_ns, error_ns};
        workload_->on_fire(*this, record);
    }
    charge(config_.costs.callback_ns);
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm(TimerId id, Jiffies expires, ArmCall call) {
    CpuState& cpu = cpu_;
    const bool was_pending = cpu.queue.is_pending(id);
    const ArmOutcome outcome = cpu.queue.arm(id, expires, call);
    ++cpu.metrics.arms;
    if (outcome != ArmOutcome::not_pending) cpu.requested[id] = expires;
    if (was_pending && outcome == ArmOutcome::queued) ++cpu.metrics.rearm_dequeues;
    // Outside the softirq the work is charged lazily (to task work) when the
    // next softirq starts or the metrics are read.
    return outcome;
}

template <TimerQueue Q>
bool Engine<Q>::cancel(TimerId id) {
    CpuState& cpu = cpu_;
    const bool removed = cpu.queue.cancel(id);
    if (removed) ++cpu.metrics.cancelled;
    return removed;
}

template <TimerQueue Q>
void Engine<Q>::run_action(const Action& action) {
    switch (action.kind) {
    case Action::Kind::arm: arm(action.timer, action.expires, action.call); break;
    case Action::Kind::cancel: cancel(action.timer); break;
    case Action::Kind::call:
        if (workload_) workload_->on_action(*this, action.tag);
        break;
    }
}

} // namespace timersim
