// Engine: the simulated machine. A discrete-event engine over N CPUs, each
// with its own timer queue (classic wheel, modern wheel or heap: one
// instance per CPU, the kernel's per-CPU timer base), its own tick, softirq
// state, NOHZ state and metrics. It ticks, raises TIMER_SOFTIRQ, runs the
// softirq at interrupt exit or in ksoftirqd, and charges simulated time for
// the timer work, so a large burst of expiries delays the timers behind it
// and ticks keep arriving while a long softirq runs.
//
// Time is simulated nanoseconds from the start (uint64). What happens, per CPU:
//
//   tick n        at floor(n * 1e9 / HZ) ns (+ optional seeded jitter in
//                 [0, tick_jitter_ns], drawn per CPU; nominal times never
//                 accumulate error, so HZ=300 does not drift). Every CPU's
//                 tick n has the same nominal time. The hardirq: jiffies
//                 moves to start + n (see "jiffies" below), raise
//                 TIMER_SOFTIRQ if the CPU's queue.softirq_due() (6.1
//                 run_local_timers(): only when a bucket is due; 4.x: every
//                 tick), then irq_exit().
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
//                 at given ns, each on its Action::cpu. An action due while
//                 that CPU's softirq runs waits until it ends. Work done by
//                 actions (arm/cancel) is accounted as CPU time but does not
//                 delay ticks or softirqs: it belongs to task context, which
//                 this model does not schedule.
//
//   NOHZ idle     optional (nohz_idle), per CPU. After every event on a CPU,
//                 if it is idle (no softirq pending, ksoftirqd not
//                 runnable) it asks its queue for its next timer
//                 (next_timer_interrupt()). If that is more than one tick
//                 away, its tick stops and it sleeps until that jiffy's tick
//                 time (no timer: until an action). An action wakes it:
//                 jiffies catches up to the tick grid first (6.1
//                 tick_nohz_irq_enter() -> tick_nohz_update_jiffies()), then
//                 the action runs, then the idle decision is made again.
//                 Deferrable timers do not wake the CPU. Wakeup and restart
//                 always land on the tick grid, as 6.1's tick_nohz_restart()
//                 forwards the tick to the next period. A timer queued on a
//                 sleeping CPU from another CPU that is earlier than its
//                 wakeup kicks it (6.1 trigger_dyntick_cpu() ->
//                 wake_up_nohz_cpu()): it catches up jiffies and decides again.
//
// Several CPUs:
//
//   jiffies       global. The first tick of grid index n on any CPU moves it
//                 to start + n (the tick_do_timer_cpu's update, taken over by
//                 whichever CPU ticks when the duty holder sleeps, as 6.1
//                 tick_sched_do_timer() does); a CPU woken from NOHZ idle by
//                 an action or a kick catches it up to the grid. Each queue
//                 reads the global value whenever it is used.
//   timers        ids are global (create_timer()). Each timer has at most one
//                 node, in the queue of the CPU it was last queued on; it gets
//                 one when first armed (lazily: a timer that never visits a CPU
//                 costs that CPU nothing) and moves when armed on another CPU
//                 (the old node is freed to its pool, whose slots are reused).
//                 With one CPU the node is made at create_timer() and timer
//                 ids are the queue's own ids (queue().placement(id) works),
//                 which also spares arm and cancel a lookup.
//   arm()         6.1 __mod_timer() -> get_target_base() with the timer
//                 pinned or timer_migration off: the timer is queued on the
//                 current CPU. A pending timer on another CPU is first tried
//                 against its own base (classic slack and same-expiry
//                 shortcut, modern same-expiry and same-bucket shortcuts: it
//                 then stays there), otherwise dequeued there and enqueued
//                 here. A timer whose callback is running (fired, callback
//                 not finished) stays on its CPU (base->running_timer).
//   arm_on()      add_timer_on(): queued on the given CPU, no slack. On a
//                 pending timer (a BUG() in the kernel) it is del_timer()
//                 first (counted and logged as a cancel).
//   costs         remote work (an arm or cancel on another CPU's queue) is
//                 charged to the CPU that does it, like local work.
//
// Interleaving: a softirq advances one expiry at a time (the queue's
// budgeted pass, wheel/timer_queue.hpp), so the CPUs' events are processed
// in one global time order. A softirq step does the queue work up to the
// next expiry and stops at the time that work reached; the timer's callback
// runs when that time comes, followed at once by the queue work up to the
// next expiry. Events at the same ns: by kind, ticks first, then ksoftirqd,
// then softirq steps, then actions; within a kind by CPU number; the actions
// of one CPU in the order they were scheduled. Runs are deterministic.
//
// run_until(t) processes the events due at or before t (an action due by t
// that waits for its CPU's softirq included), and then goes on until every
// softirq that had started by t has ended (one CPU: the run in progress is
// finished, as it always was), processing the other CPUs' events that come
// meanwhile in time order.
#pragma once

#include "sim/machine/error_histogram.hpp"
#include "sim/machine/event_log.hpp"
#include "sim/machine/event_queue.hpp"
#include "sim/machine/log_histogram.hpp"
#include "workloads/workload.hpp"
#include "softirq/cost_model.hpp"
#include "softirq/softirq.hpp"
#include "wheel/timer_queue.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
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
    std::uint64_t seed = 1; // jitter draws (CPU 0 uses it as is, CPU k a value derived from it)
    // CONFIG_NO_HZ_IDLE: stop the tick while the CPU is idle and the next
    // timer is more than one tick away.
    bool nohz_idle = false;
    // At most this many expiries per handle_softirqs() run (all its passes
    // together); the rest stays collected and runs first in the next run,
    // and the tick raises TIMER_SOFTIRQ while any is left. 0: no bound, the
    // kernel.
    std::uint32_t max_expiries_per_softirq = 0;
    // Softirq cost over time: sums per window of this many ticks (0: none).
    std::uint64_t series_window_ticks = 0;
    // At most this many windows; work of later windows counts in the last
    // one (0: as many as the run needs).
    std::size_t series_max_windows = 0;
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

// Per-CPU results. Work is counted on the CPU that does it: arms, cancels
// and re-arm dequeues on the CPU whose action or callback asked for them,
// firings and softirq work on the CPU whose base ran them; `counters` and
// `pending` are the CPU's own queue's.
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
    std::uint64_t arms = 0;           // arm requests (arm() and arm_on())
    std::uint64_t rearm_dequeues = 0; // arms that dequeued a pending timer and enqueued it again (here or on another CPU)
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
    std::uint64_t wakeups_by_remote = 0;      // stopped tick kicked by a timer queued from another CPU
    std::uint64_t ticks_skipped = 0;          // jiffies that passed without a tick (of this CPU)
    std::uint64_t max_jiffies_jump = 0;       // most jiffies passed in one step (moved by this CPU)
    SoftirqCpu::Stats softirq;
    QueueCounters counters;

    // Adds another CPU's metrics: histograms add, maxima take the largest,
    // everything else sums (counters.peak_pending: the largest per-CPU peak).
    void merge(const CpuMetrics& other);
    bool operator==(const CpuMetrics& o) const;
};

// Timer work in one window of ticks, for "softirq cost over time" plots. A
// softirq run counts in the window of the tick (grid index n, at or before
// the run's start) that started it: window w holds ticks w*W+1 .. (w+1)*W.
struct SeriesPoint {
    std::uint64_t start_ns = 0;       // nominal time of the window's first tick
    std::uint64_t softirq_ns = 0;     // time in timer softirq passes, all CPUs
    std::uint64_t max_softirq_ns = 0; // the longest softirq run in the window
    std::uint64_t cascade_moves = 0;
    std::uint64_t expired = 0;
    friend bool operator==(const SeriesPoint&, const SeriesPoint&) = default;
};

template <TimerQueue Q>
class Engine final : public Sim {
    // Where a timer is (8 bytes); the expiry it asked for is in requested_
    // (8 bytes), apart, so that one CPU's arm and fire touch only that.
    struct TimerSlot {
        TimerId node = kNoTimer; // its node in cpus_[cpu]'s queue; kNoTimer: none yet
        std::uint16_t cpu = 0;
        bool deferrable = false;
        bool live = false;
    };

public:
    static constexpr std::size_t kMaxCpus = 65535;
    // Bytes the engine keeps per timer besides the queue's node: its slot,
    // its requested expiry, and (several CPUs) the node's entry in its
    // CPU's node-to-timer map: 20, or 16 with one CPU.
    std::size_t bytes_per_timer() const noexcept {
        return sizeof(TimerSlot) + sizeof(Jiffies) + (single_ ? 0 : sizeof(TimerId));
    }

    // One CPU on the caller's queue.
    Engine(Q& queue, const EngineConfig& config, Workload* workload = nullptr)
        : Engine(std::span<Q>(&queue, 1), config, workload) {}
    // One CPU per queue (all at the same jiffies, none with pending timers
    // the engine did not create). The queues must outlive the engine.
    Engine(std::span<Q> queues, const EngineConfig& config, Workload* workload = nullptr);

    // Processes every event at or before end_ns, then whatever it takes to
    // end the softirqs started by then; afterwards now_ns() >= end_ns.
    void run_until(std::uint64_t end_ns);
    // Runs up to and including tick n (n ticks after the start).
    void run_ticks(std::uint64_t n) { run_until(tick_time_ns(n, config_.hz) + config_.tick_jitter_ns); }

    // Metrics of one CPU, with its queue's counters and pending count as of
    // now (call it from outside the softirq, not from a workload's on_fire).
    CpuMetrics metrics(unsigned cpu) const;
    // All CPUs together (one CPU: exactly metrics(0)).
    CpuMetrics metrics() const {
        CpuMetrics m = metrics(0);
        for (unsigned c = 1; c < cpus_.size(); ++c) m.merge(metrics(c));
        return m;
    }
    // Softirq cost per window (EngineConfig::series_window_ticks); windows
    // after the last one with a run may be missing.
    const std::vector<SeriesPoint>& series() const noexcept { return series_; }

    // The workload whose hooks the engine calls (it may need the engine to
    // create its timers first, hence not only in the constructor).
    void set_workload(Workload* workload) noexcept { workload_ = workload; }
    // Every enqueue, fire and cancel from now on goes to `log` (not owned;
    // nullptr: none), with `design` in its first column. Rows come in
    // simulated-time order; sim/event_log.hpp has the format. The cpu column
    // is the CPU of the timer base the row is about (enqueue: the base it
    // went to, cancel: the base it left, fire: the base that ran it); the
    // time is that of the CPU doing it (inside a softirq: its clock).
    void set_event_log(EventLog* log, std::string_view design) {
        events_ = log;
        design_ = std::string(design);
        fast_ = single_ && !events_;
    }

    Q& queue(unsigned cpu = 0) noexcept { return *cpus_[cpu].queue; }
    const Q& queue(unsigned cpu = 0) const noexcept { return *cpus_[cpu].queue; }
    const SoftirqCpu& softirq(unsigned cpu = 0) const noexcept { return cpus_[cpu].softirq; }
    const EngineConfig& config() const noexcept { return config_; }
    std::uint64_t ticks(unsigned cpu = 0) const noexcept { return cpus_[cpu].ticks; }
    bool tick_stopped(unsigned cpu = 0) const noexcept { return cpus_[cpu].tick_stopped; }
    // When the CPU's last tick happened (0 before the first).
    std::uint64_t last_tick_ns(unsigned cpu = 0) const noexcept { return cpus_[cpu].last_tick_ns; }
    // The CPU whose base holds the timer's node (where it is or was last queued).
    unsigned timer_cpu(TimerId id) const { return slot(id).cpu; }
    // The timer's placement on that base (not pending if it has no node yet).
    Placement placement(TimerId id) const {
        const TimerSlot& t = slot(id);
        return t.node == kNoTimer ? Placement{} : cpus_[t.cpu].queue->placement(t.node);
    }
    // Nominal time at which jiffies reaches j.
    std::int64_t jiffy_time_ns(Jiffies j) const noexcept {
        const std::int64_t d = jiffies_diff(j, start_jiffies_);
        return d >= 0 ? static_cast<std::int64_t>(tick_time_ns(static_cast<std::uint64_t>(d), config_.hz))
                      : -static_cast<std::int64_t>(tick_time_ns(0 - static_cast<std::uint64_t>(d), config_.hz));
    }

    // Sim
    // Inside a callback: the time the softirq has reached; inside an action:
    // the time it runs at; outside both: how far the engine has got.
    std::uint64_t now_ns() const override {
        if (!in_event_) return time_ns_;
        const CpuState& c = cpus_[current_cpu_];
        return c.in_softirq ? c.clock_ns : c.now_ns;
    }
    Jiffies jiffies() const override { return jiffies_; }
    Jiffies start_jiffies() const override { return start_jiffies_; }
    unsigned hz() const override { return config_.hz; }
    unsigned cpus() const override { return static_cast<unsigned>(cpus_.size()); }
    unsigned current_cpu() const override { return current_cpu_; }
    std::uint64_t next_tick_ns() const override { return cpus_[current_cpu_].next_tick_ns; }
    TimerId create_timer(TimerFlags flags = {}) override;
    void reserve_timers(std::size_t n) override;
    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) override {
        if (fast_) [[likely]] {
            // One CPU and no event log: the id is the node's and the queue
            // checks it; no lookup on the way (every single-CPU run's hot path).
            if (id >= timers_.size()) [[unlikely]] no_such_timer(id);
            CpuState& c = cpus_[0];
            ++c.metrics.arms;
            const bool was_pending = c.queue->is_pending(id);
            const ArmOutcome outcome = c.queue->arm(id, expires, call);
            if (outcome != ArmOutcome::not_pending) requested_[id] = expires;
            if (was_pending && outcome == ArmOutcome::queued) {
                ++c.metrics.rearm_dequeues;
                c.extra_ns += config_.costs.dequeue_ns;
            }
            return outcome;
        }
        return arm_general(id, expires, call);
    }
    ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned cpu) override;
    bool cancel(TimerId id) override {
        if (fast_) [[likely]] {
            if (id >= timers_.size()) [[unlikely]] no_such_timer(id);
            CpuState& c = cpus_[0];
            const bool removed = c.queue->cancel(id);
            if (removed) ++c.metrics.cancelled;
            return removed;
        }
        return cancel_general(id);
    }
    void schedule_action(std::uint64_t time_ns, const Action& action) override {
        if (action.cpu >= cpus_.size())
            throw std::invalid_argument("action on CPU " + std::to_string(action.cpu) + " of a machine with " +
                                        std::to_string(cpus_.size()) + " CPUs");
        cpus_[action.cpu].actions.push(time_ns, action);
        update_key(action.cpu);
    }

private:
    // Same-ns order of event kinds (then CPU number).
    enum EventRank : std::uint32_t { rank_tick = 0, rank_ksoftirqd = 1, rank_softirq = 2, rank_action = 3, rank_none = 4 };
    // Where a running softirq stopped: before a callback, or at a pass end.
    enum class Phase : std::uint8_t { idle, fire, pass_end };

    struct Key {
        std::uint64_t time = UINT64_MAX; // when it happens
        std::uint64_t due = UINT64_MAX;  // when it was due (an action waits for its CPU's softirq)
        std::uint32_t rank = rank_none;
    };

    struct CpuState {
        CpuState(Q& q, SoftirqCpu::Config c, std::uint64_t seed) : queue(&q), softirq(c), rng(seed) {}
        Q* queue;
        SoftirqCpu softirq;
        CpuMetrics metrics;
        std::vector<TimerId> timer_of; // node id -> timer id
        std::mt19937_64 rng;           // tick jitter
        EventQueue<Action> actions;
        // tick
        std::uint64_t ticks = 0;
        std::uint64_t next_tick_index = 1; // tick-grid index of the next tick event
        std::uint64_t next_tick_ns = 0;    // its time (UINT64_MAX: none programmed)
        std::uint64_t last_tick_ns = 0;
        bool tick_stopped = false;
        // task context: how far this CPU has got
        std::uint64_t now_ns = 0;
        // charging: work_ns() of the queue's counters already charged, and
        // work to charge here that is not in them (re-arm dequeues, remote work)
        std::uint64_t work_mark = 0;
        std::uint64_t extra_ns = 0;
        std::uint64_t expired_mark = 0; // series: counters already attributed
        std::uint64_t moves_mark = 0;
        // the running softirq
        bool in_softirq = false;
        Phase phase = Phase::idle;
        bool ran_timers = false;
        bool started_by_end = false; // started at or before run_until's end
        bool has_fired = false;
        std::uint64_t clock_ns = 0;  // how far it has got
        std::uint64_t run_start_ns = 0;
        std::uint64_t run_expired_before = 0;
        std::uint64_t run_moves_before = 0;
        std::uint64_t run_expiries = 0;
        std::size_t run_window = 0;
        FiredTimer fired{};
        TimerId running_timer = kNoTimer; // fired, callback not finished (base->running_timer)
    };

    static constexpr bool kHasBuckets = Q::name != std::string_view("heap");

    [[noreturn, gnu::noinline, gnu::cold]] static void no_such_timer(TimerId id) {
        throw std::invalid_argument("no such timer: " + std::to_string(id));
    }
    const TimerSlot& slot(TimerId id) const {
        if (id >= timers_.size() || !timers_[id].live) [[unlikely]] no_such_timer(id);
        return timers_[id];
    }
    TimerSlot& slot(TimerId id) { return const_cast<TimerSlot&>(std::as_const(*this).slot(id)); }

    std::uint64_t tick_at(CpuState& c, std::uint64_t n) {
        std::uint64_t t = tick_time_ns(n, config_.hz);
        if (config_.tick_jitter_ns) {
            // Our own mapping from the 64-bit stream (std distributions differ
            // between standard libraries): the same seed is the same run everywhere.
            t += c.rng() % (config_.tick_jitter_ns + 1);
        }
        return t;
    }
    unsigned index_of(const CpuState& c) const noexcept { return static_cast<unsigned>(&c - cpus_.data()); }

    // The queue reads the global jiffies.
    void sync(CpuState& c) {
        if (c.queue->jiffies() != jiffies_) c.queue->set_jiffies(jiffies_);
    }
    // Moves jiffies to `target` if that is ahead; the jump counts on `by`.
    void advance_jiffies(CpuState& by, Jiffies target) {
        if (!time_after(target, jiffies_)) return;
        by.metrics.max_jiffies_jump = std::max<std::uint64_t>(by.metrics.max_jiffies_jump, target - jiffies_);
        jiffies_ = target;
    }

    // Gives timer `id` its node on CPU `cpu` (freeing a not pending one elsewhere).
    TimerId home_on(TimerId id, unsigned cpu);

    // The cost model applied to everything a queue has counted so far.
    std::uint64_t work_ns(const QueueCounters& k) const noexcept {
        const CostModel& c = config_.costs;
        return k.enqueues * c.enqueue_ns + k.cancels * c.dequeue_ns + k.cascade_moves * c.cascade_move_ns +
               k.buckets_scanned * c.bucket_scan_ns + k.expired * c.expiry_ns +
               k.next_expiry_search_steps * c.next_expiry_step_ns;
    }
    // Simulated ns of the work done by CPU c since its last charge.
    std::uint64_t uncharged_ns(const CpuState& c) const noexcept {
        return work_ns(c.queue->counters()) - c.work_mark + c.extra_ns;
    }
    // Turns that work into time: into the softirq's clock when inside it,
    // into task work otherwise.
    void charge_queue_work(CpuState& c);
    void charge(CpuState& c, std::uint64_t ns) {
        if (c.in_softirq) {
            c.clock_ns += ns;
            c.metrics.softirq_work_ns += ns;
            if (!series_.empty()) series_[c.run_window].softirq_ns += ns;
        } else {
            c.metrics.task_work_ns += ns;
        }
    }
    // An operation by the current CPU on another CPU's queue: its cost is
    // charged to the current CPU, not to the queue's owner.
    template <class Op>
    auto remote(CpuState& owner, Op&& op) {
        if (&owner == &cpus_[current_cpu_]) return op();
        const std::uint64_t before = work_ns(owner.queue->counters());
        auto result = op();
        const std::uint64_t done = work_ns(owner.queue->counters()) - before;
        owner.work_mark += done;
        cpus_[current_cpu_].extra_ns += done;
        return result;
    }

    // arm() and cancel() in general (several CPUs, or an event log).
    [[gnu::noinline]] ArmOutcome arm_general(TimerId id, Jiffies expires, ArmCall call);
    [[gnu::noinline]] bool cancel_general(TimerId id);
    // An arm that leaves the timer on its base `base` (its node there).
    ArmOutcome arm_in_place(unsigned base, TimerId id, TimerId node, Jiffies expires, ArmCall call);

    // The event loop.
    Key compute_key(const CpuState& c) const noexcept;
    void update_key(unsigned cpu);
    bool key_less(unsigned a, unsigned b) const noexcept {
        const Key& x = keys_[a];
        const Key& y = keys_[b];
        if (x.time != y.time) return x.time < y.time;
        if (x.rank != y.rank) return x.rank < y.rank;
        return a < b;
    }
    void process(unsigned cpu, EventRank rank);

    // The tick's hardirq part at its own time; then irq_exit() unless it
    // interrupted a running softirq.
    void tick(CpuState& c);
    // handle_softirqs(): starts at start_ns and runs to its first stop.
    void start_run(CpuState& c, SoftirqContext context, std::uint64_t start_ns);
    void start_pass(CpuState& c);
    // One expiry step of the queue's softirq pass (resume: of the paused one).
    void queue_step(CpuState& c, bool resume);
    // After the queue stopped (at an expiry or at the pass's end).
    void after_queue_step(CpuState& c);
    // The running softirq goes on from where it stopped (its clock has come).
    void softirq_step(CpuState& c);
    void run_callback(CpuState& c);
    void finish_run(CpuState& c);
    std::size_t window_of(std::uint64_t t);
    // NOHZ: the idle decision after an event (6.1 tick_nohz_idle_stop_tick()).
    void nohz_idle_enter(CpuState& c);
    // NOHZ: an interrupt other than the tick arrives while the tick is stopped.
    void nohz_wake(CpuState& c);
    // NOHZ: a timer was queued on CPU `cpu` by another CPU (6.1
    // enqueue_timer() -> trigger_dyntick_cpu()).
    void maybe_kick(unsigned cpu, TimerId id);
    void run_action(const Action& action);

    std::uint64_t time_of_current() const { return now_ns(); }
    void log_enqueue(unsigned cpu, TimerId id, TimerId node) {
        const Placement p = cpus_[cpu].queue->placement(node);
        events_->add(design_, cpu, time_of_current(), jiffies_, TimerEvent::enqueue, id, p.expires, &p, kHasBuckets);
    }
    void log_event(TimerEvent e, unsigned cpu, TimerId id, Jiffies expires) {
        events_->add(design_, cpu, time_of_current(), jiffies_, e, id, expires, nullptr, kHasBuckets);
    }

    EngineConfig config_;
    Workload* workload_;
    EventLog* events_ = nullptr;
    std::string design_;
    Jiffies start_jiffies_;
    Jiffies jiffies_;
    bool single_ = false; // one CPU: timer id == node id, always on CPU 0
    bool fast_ = false;   // single_ and no event log: arm() and cancel() take the short path
    std::vector<CpuState> cpus_;
    std::vector<TimerSlot> timers_;
    std::vector<Jiffies> requested_; // by timer: the expiry the workload asked for last
    std::vector<Key> keys_;            // by CPU, padded to a power of two
    std::vector<std::uint32_t> tree_;  // winner tree over keys_: tree_[1] is the next event's CPU
    std::vector<SeriesPoint> series_;
    std::uint64_t time_ns_ = 0;        // time of the latest event (or run_until's end)
    std::uint64_t end_ns_ = 0;         // run_until's end
    unsigned runs_started_by_end_ = 0; // softirqs in progress that started by end_ns_
    unsigned current_cpu_ = 0;
    bool in_event_ = false;
};

template <TimerQueue Q>
Engine<Q>::Engine(std::span<Q> queues, const EngineConfig& config, Workload* workload)
    : config_(config), workload_(workload) {
    if (config.hz == 0 || config.hz > 1'000'000) throw std::invalid_argument("hz must be 1..1000000");
    if (config.tick_jitter_ns >= 1'000'000'000ull / config.hz)
        throw std::invalid_argument("tick jitter must be below the tick period");
    if (queues.empty() || queues.size() > kMaxCpus) throw std::invalid_argument("the engine needs 1..65535 CPUs");
    start_jiffies_ = jiffies_ = queues[0].jiffies();
    single_ = queues.size() == 1;
    fast_ = single_;
    cpus_.reserve(queues.size());
    for (std::size_t i = 0; i < queues.size(); ++i) {
        if (queues[i].jiffies() != start_jiffies_)
            throw std::invalid_argument("every CPU's queue must start at the same jiffies");
        // CPU 0 draws its jitter from the seed itself (what one CPU always
        // did); the others from splitmix64 mixes of it.
        std::uint64_t seed = config.seed;
        if (i > 0) {
            std::uint64_t z = config.seed + i * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            seed = z ^ (z >> 31);
        }
        CpuState& c = cpus_.emplace_back(
            queues[i], SoftirqCpu::Config{.hz = config.hz, .ksoftirqd_delay_ns = config.ksoftirqd_delay_ns}, seed);
        c.next_tick_index = 1;
        c.next_tick_ns = tick_at(c, 1);
        const QueueCounters& k = c.queue->counters();
        c.work_mark = work_ns(k);
        c.expired_mark = k.expired;
        c.moves_mark = k.cascade_moves;
    }
    std::size_t p = 1;
    while (p < cpus_.size()) p *= 2;
    keys_.assign(p, Key{});
    tree_.assign(2 * p, 0);
    for (std::size_t i = 0; i < p; ++i) tree_[p + i] = static_cast<std::uint32_t>(i);
    for (std::size_t i = p; i-- > 1;)
        tree_[i] = key_less(tree_[2 * i], tree_[2 * i + 1]) ? tree_[2 * i] : tree_[2 * i + 1];
    for (unsigned c = 0; c < cpus_.size(); ++c) update_key(c);
}

template <TimerQueue Q>
TimerId Engine<Q>::create_timer(TimerFlags flags) {
    if (single_) {
        // One CPU: the node now, and its id is the timer's.
        const TimerId id = cpus_[0].queue->create(flags);
        if (id >= timers_.size()) {
            timers_.resize(std::size_t{id} + 1);
            requested_.resize(std::size_t{id} + 1, 0);
        }
        timers_[id] = TimerSlot{.node = id, .cpu = 0, .deferrable = flags.deferrable, .live = true};
        requested_[id] = 0;
        return id;
    }
    if (timers_.size() >= kNoTimer) throw std::length_error("too many timers");
    const auto id = static_cast<TimerId>(timers_.size());
    timers_.push_back(TimerSlot{.deferrable = flags.deferrable, .live = true});
    requested_.push_back(0);
    return id;
}

template <TimerQueue Q>
void Engine<Q>::reserve_timers(std::size_t n) {
    timers_.reserve(n);
    requested_.reserve(n);
    if (single_) cpus_[0].queue->reserve(n); // with one CPU every node lives there
}

template <TimerQueue Q>
TimerId Engine<Q>::home_on(TimerId id, unsigned cpu) {
    TimerSlot& t = timers_[id];
    if (t.node != kNoTimer) {
        if (t.cpu == cpu) return t.node;
        cpus_[t.cpu].queue->destroy(t.node); // not pending: only frees the slot
    }
    CpuState& c = cpus_[cpu];
    t.node = c.queue->create(TimerFlags{.deferrable = t.deferrable});
    t.cpu = static_cast<std::uint16_t>(cpu);
    if (t.node >= c.timer_of.size()) c.timer_of.resize(std::size_t{t.node} + 1, kNoTimer);
    c.timer_of[t.node] = id;
    return t.node;
}

template <TimerQueue Q>
void Engine<Q>::run_until(std::uint64_t end_ns) {
    end_ns_ = end_ns;
    runs_started_by_end_ = 0;
    for (CpuState& c : cpus_) {
        c.started_by_end = c.in_softirq && c.run_start_ns <= end_ns;
        if (c.started_by_end) ++runs_started_by_end_;
    }
    while (true) {
        const unsigned cpu = tree_[1];
        const Key k = keys_[cpu];
        if (k.rank == rank_none) break; // nothing will ever happen
        // An action due by end_ns that waited for a softirq still runs.
        if (k.due > end_ns && runs_started_by_end_ == 0) break;
        time_ns_ = std::max(time_ns_, k.time);
        process(cpu, static_cast<EventRank>(k.rank));
    }
    time_ns_ = std::max(time_ns_, end_ns);
}

template <TimerQueue Q>
typename Engine<Q>::Key Engine<Q>::compute_key(const CpuState& c) const noexcept {
    Key k;
    auto consider = [&k](std::uint64_t time, std::uint64_t due, EventRank rank) {
        if (time < k.time || (time == k.time && rank < k.rank)) k = Key{time, due, rank};
    };
    if (c.next_tick_ns != UINT64_MAX) consider(c.next_tick_ns, c.next_tick_ns, rank_tick);
    if (c.in_softirq) {
        consider(c.clock_ns, c.clock_ns, rank_softirq);
    } else {
        if (const auto at = c.softirq.ksoftirqd_run_at()) consider(*at, *at, rank_ksoftirqd);
        // An action waits for this CPU's softirq; it runs no earlier than the
        // CPU has got.
        if (!c.actions.empty()) {
            const std::uint64_t due = c.actions.next_time();
            consider(std::max(due, c.now_ns), due, rank_action);
        }
    }
    return k;
}

template <TimerQueue Q>
void Engine<Q>::update_key(unsigned cpu) {
    keys_[cpu] = compute_key(cpus_[cpu]);
    const std::size_t p = keys_.size();
    for (std::size_t i = (p + cpu) / 2; i >= 1; i /= 2)
        tree_[i] = key_less(tree_[2 * i], tree_[2 * i + 1]) ? tree_[2 * i] : tree_[2 * i + 1];
}

template <TimerQueue Q>
void Engine<Q>::process(unsigned cpu, EventRank rank) {
    CpuState& c = cpus_[cpu];
    current_cpu_ = cpu;
    in_event_ = true;
    switch (rank) {
    case rank_tick:
        c.now_ns = std::max(c.now_ns, time_ns_);
        tick(c);
        break;
    case rank_ksoftirqd:
        c.now_ns = std::max(c.now_ns, time_ns_);
        if (c.softirq.ksoftirqd_runs()) start_run(c, SoftirqContext::ksoftirqd, c.now_ns);
        break;
    case rank_softirq: softirq_step(c); break;
    case rank_action: {
        const auto event = c.actions.pop();
        if (event.time_ns < time_ns_) ++c.metrics.actions_delayed;
        c.now_ns = std::max(c.now_ns, time_ns_);
        if (c.tick_stopped) {
            ++c.metrics.wakeups_by_action;
            nohz_wake(c);
        }
        run_action(event.payload);
        break;
    }
    case rank_none: break;
    }
    // One CPU: while its softirq's next step comes before its next tick,
    // nothing else can happen in between (its actions and ksoftirqd wait for
    // the softirq), so the steps run here without a trip through the loop.
    if (single_) {
        while (c.in_softirq && c.clock_ns < c.next_tick_ns) {
            time_ns_ = std::max(time_ns_, c.clock_ns);
            softirq_step(c);
        }
    }
    if (config_.nohz_idle) nohz_idle_enter(c);
    in_event_ = false;
    current_cpu_ = 0;
    update_key(cpu);
}

template <TimerQueue Q>
void Engine<Q>::tick(CpuState& c) {
    const std::uint64_t n = c.next_tick_index;
    ++c.ticks;
    c.last_tick_ns = c.next_tick_ns;
    c.next_tick_index = n + 1;
    c.next_tick_ns = tick_at(c, n + 1);
    ++c.metrics.ticks;
    if (c.tick_stopped) {
        // The timer event programmed at idle entry: the tick runs again
        // (from here on every period, until the next idle decision).
        c.tick_stopped = false;
        ++c.metrics.wakeups_by_timer;
    }
    // tick_periodic()/tick_sched_do_timer(): jiffies moves to this tick (one
    // step while ticking, the whole stopped stretch after NOHZ idle), then
    // update_process_times() -> run_local_timers().
    advance_jiffies(c, start_jiffies_ + n);
    sync(c);
    // A bounded run's carry-over is due too (not the pass in progress: it
    // stops after every expiry only to let the other CPUs' events in).
    if (c.queue->softirq_due() || (!c.in_softirq && c.queue->carry_over())) {
        c.softirq.raise(timer_softirq);
        ++c.metrics.ticks_raised;
    } else {
        ++c.metrics.ticks_not_raised;
    }
    if (c.in_softirq) {
        ++c.metrics.ticks_in_softirq;
        return; // back into the interrupted softirq
    }
    if (c.softirq.irq_exit()) start_run(c, SoftirqContext::irq_exit, c.last_tick_ns);
}

template <TimerQueue Q>
std::size_t Engine<Q>::window_of(std::uint64_t t) {
    const std::uint64_t w = config_.series_window_ticks;
    const std::uint64_t n = tick_index_at(t, config_.hz);
    std::uint64_t index = n == 0 ? 0 : (n - 1) / w;
    if (config_.series_max_windows && index >= config_.series_max_windows) index = config_.series_max_windows - 1;
    while (series_.size() <= index)
        series_.push_back(SeriesPoint{.start_ns = tick_time_ns(series_.size() * w + 1, config_.hz)});
    return static_cast<std::size_t>(index);
}

template <TimerQueue Q>
void Engine<Q>::start_run(CpuState& c, SoftirqContext context, std::uint64_t start_ns) {
    charge_queue_work(c); // what task context did since the last softirq
    c.in_softirq = true;
    c.clock_ns = start_ns;
    c.run_start_ns = start_ns;
    c.started_by_end = start_ns <= end_ns_;
    if (c.started_by_end) ++runs_started_by_end_;
    c.ran_timers = false;
    c.run_expiries = 0;
    c.run_expired_before = c.queue->counters().expired;
    c.run_moves_before = c.queue->counters().cascade_moves;
    if (config_.series_window_ticks) c.run_window = window_of(start_ns);
    c.softirq.begin(jiffies_, context);
    start_pass(c);
}

template <TimerQueue Q>
void Engine<Q>::start_pass(CpuState& c) {
    const std::uint32_t mask = c.softirq.start_pass();
    if (mask & (1u << timer_softirq)) {
        c.ran_timers = true;
        // 6.1 run_timer_softirq() -> __run_timers() for each base, one
        // expiry at a time. With the bound spent the handler has nothing to do.
        charge(c, config_.costs.softirq_entry_ns);
        const std::uint32_t bound = config_.max_expiries_per_softirq;
        if (bound == 0 || c.run_expiries < bound) {
            queue_step(c, false);
            return;
        }
    }
    c.phase = Phase::pass_end;
}

template <TimerQueue Q>
void Engine<Q>::queue_step(CpuState& c, bool resume) {
    // One expiry of the queue's pass: start it, or go on with the paused one.
    sync(c);
    c.has_fired = false;
    const auto take = [&c](const FiredTimer& f) {
        c.fired = f;
        c.has_fired = true;
    };
    if (resume)
        c.queue->resume_softirq(take, 1);
    else
        c.queue->run_softirq(take, 1);
    after_queue_step(c);
}

template <TimerQueue Q>
void Engine<Q>::after_queue_step(CpuState& c) {
    // Everything the queue did to get here (scans, cascades, this expiry)
    // happened before the callback; ticks due by then interrupt first.
    charge_queue_work(c);
    if (c.has_fired) {
        c.phase = Phase::fire;
        c.running_timer = single_ ? c.fired.id : c.timer_of[c.fired.id];
        ++c.run_expiries;
    } else {
        c.phase = Phase::pass_end;
    }
}

template <TimerQueue Q>
void Engine<Q>::softirq_step(CpuState& c) {
    if (c.phase == Phase::fire) {
        run_callback(c);
        const std::uint32_t bound = config_.max_expiries_per_softirq;
        if (bound != 0 && c.run_expiries >= bound) {
            // The bound: the rest stays collected for the next run.
            charge_queue_work(c);
            c.phase = Phase::pass_end;
            return;
        }
        queue_step(c, true);
        return;
    }
    // The pass has ended and the ticks up to its end have come.
    const SoftirqCpu::PassEnd end = c.softirq.end_pass(jiffies_, c.clock_ns);
    if (end == SoftirqCpu::PassEnd::restart) {
        start_pass(c);
        return;
    }
    finish_run(c);
}

template <TimerQueue Q>
void Engine<Q>::run_callback(CpuState& c) {
    const TimerId id = c.running_timer;
    const Jiffies requested = requested_[id];
    const Jiffies now_j = jiffies_;
    const std::int64_t error_j = jiffies_diff(now_j, requested);
    const std::int64_t error_ns = static_cast<std::int64_t>(c.clock_ns) - jiffy_time_ns(requested);
    CpuMetrics& m = c.metrics;
    ++m.fired;
    m.error_jiffies.add(error_j);
    m.error_ns.add(error_ns);
    if (error_j < 0) ++m.early;
    if (events_) log_event(TimerEvent::fire, index_of(c), id, c.fired.expires);
    if (workload_) {
        const FireRecord record{id, requested, c.fired.expires, now_j, c.clock_ns, error_ns, index_of(c)};
        workload_->on_fire(*this, record);
    }
    c.running_timer = kNoTimer;
    charge(c, config_.costs.callback_ns);
}

template <TimerQueue Q>
void Engine<Q>::finish_run(CpuState& c) {
    c.in_softirq = false;
    c.phase = Phase::idle;
    c.now_ns = std::max(c.now_ns, c.clock_ns);
    if (c.started_by_end) {
        c.started_by_end = false;
        --runs_started_by_end_;
    }
    if (!c.ran_timers) return;
    const std::uint64_t duration = c.clock_ns - c.run_start_ns;
    CpuMetrics& m = c.metrics;
    m.softirq_ns.add(static_cast<std::int64_t>(duration));
    m.max_softirq_ns = std::max(m.max_softirq_ns, duration);
    m.max_expired_per_softirq =
        std::max(m.max_expired_per_softirq, c.queue->counters().expired - c.run_expired_before);
    m.max_cascade_moves_per_softirq =
        std::max(m.max_cascade_moves_per_softirq, c.queue->counters().cascade_moves - c.run_moves_before);
    if (config_.series_window_ticks)
        series_[c.run_window].max_softirq_ns = std::max(series_[c.run_window].max_softirq_ns, duration);
}

template <TimerQueue Q>
void Engine<Q>::charge_queue_work(CpuState& c) {
    const QueueCounters& k = c.queue->counters();
    const std::uint64_t work = work_ns(k);
    const std::uint64_t ns = work - c.work_mark + c.extra_ns;
    c.work_mark = work;
    c.extra_ns = 0;
    if (c.in_softirq && !series_.empty()) {
        SeriesPoint& p = series_[c.run_window];
        p.expired += k.expired - c.expired_mark;
        p.cascade_moves += k.cascade_moves - c.moves_mark;
    }
    c.expired_mark = k.expired;
    c.moves_mark = k.cascade_moves;
    charge(c, ns);
}

template <TimerQueue Q>
void Engine<Q>::nohz_idle_enter(CpuState& c) {
    // Not idle: softirq work pending (6.1 tick_nohz_next_event() keeps the
    // tick for local_timer_softirq_pending()) or ksoftirqd waiting to run.
    if (c.in_softirq || c.softirq.pending() != 0 || c.softirq.ksoftirqd_runnable()) return;
    // 6.1 tick_nohz_next_event() -> get_next_timer_interrupt(basej, basem).
    sync(c);
    const std::optional<Jiffies> next = c.queue->next_timer_interrupt();
    const Jiffies basej = jiffies_;
    const std::uint64_t base_index = basej - start_jiffies_;
    if (next && time_before_eq(*next, basej + 1)) {
        // The next event is at most one tick away: keep (or restart) the
        // tick, on the grid: 6.1 tick_nohz_restart() forwards it by whole
        // periods past now.
        if (c.tick_stopped) {
            c.tick_stopped = false;
            if constexpr (requires(Q& q) { q.clear_idle(); }) c.queue->clear_idle(); // timer_clear_idle()
            c.next_tick_index = std::max(base_index, tick_index_at(c.now_ns, config_.hz)) + 1;
            c.next_tick_ns = tick_at(c, c.next_tick_index);
        }
        return;
    }
    if (!c.tick_stopped) {
        c.tick_stopped = true;
        ++c.metrics.tick_stops;
    }
    // Sleep until the tick of the next timer's jiffy (deferrable timers do
    // not count), or until an action if there is none.
    if (next) {
        c.next_tick_index = *next - start_jiffies_;
        c.next_tick_ns = tick_at(c, c.next_tick_index);
    } else {
        c.next_tick_index = UINT64_MAX;
        c.next_tick_ns = UINT64_MAX;
    }
}

template <TimerQueue Q>
void Engine<Q>::nohz_wake(CpuState& c) {
    // 6.1 tick_nohz_irq_enter() -> tick_nohz_update_jiffies(): jiffies catches
    // up with the time that passed while the tick was stopped.
    advance_jiffies(c, start_jiffies_ + tick_index_at(c.now_ns, config_.hz));
    // Leaving idle: timer_clear_idle(). The tick stays stopped until
    // nohz_idle_enter() decides again.
    sync(c);
    if constexpr (requires(Q& q) { q.clear_idle(); }) c.queue->clear_idle();
}

template <TimerQueue Q>
void Engine<Q>::maybe_kick(unsigned cpu, TimerId id) {
    CpuState& d = cpus_[cpu];
    if (!config_.nohz_idle || !d.tick_stopped || d.in_softirq || timers_[id].deferrable) return;
    // 6.1 only kicks when the timer is the base's new first event; the
    // engine asks whether it comes before the sleeping CPU's wakeup.
    const Jiffies at = d.queue->placement(timers_[id].node).bucket_expiry;
    if (d.next_tick_ns != UINT64_MAX && !time_before(at, start_jiffies_ + d.next_tick_index)) return;
    ++d.metrics.wakeups_by_remote;
    d.now_ns = std::max(d.now_ns, time_of_current());
    nohz_wake(d);
    nohz_idle_enter(d);
    update_key(cpu);
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm_in_place(unsigned base, TimerId id, TimerId node, Jiffies expires, ArmCall call) {
    CpuState& home = cpus_[base];
    CpuState& me = cpus_[current_cpu_];
    const bool was_pending = home.queue->is_pending(node);
    const Jiffies old_expires = events_ && was_pending ? home.queue->placement(node).expires : 0;
    const ArmOutcome outcome = remote(home, [&] { return home.queue->arm(node, expires, call); });
    if (outcome != ArmOutcome::not_pending) requested_[id] = expires;
    if (was_pending && outcome == ArmOutcome::queued) {
        ++me.metrics.rearm_dequeues;
        me.extra_ns += config_.costs.dequeue_ns;
    }
    // Outside the softirq the work is charged lazily (to task work) when the
    // next softirq starts or the metrics are read.
    if (events_ && outcome == ArmOutcome::queued) {
        if (was_pending) log_event(TimerEvent::cancel, base, id, old_expires);
        log_enqueue(base, id, node);
    }
    return outcome;
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm_general(TimerId id, Jiffies expires, ArmCall call) {
    if (single_) {
        if (id >= timers_.size()) no_such_timer(id);
        ++cpus_[0].metrics.arms;
        return arm_in_place(0, id, id, expires, call);
    }
    TimerSlot& t = slot(id);
    const unsigned cpu = current_cpu_;
    CpuState& me = cpus_[cpu];
    ++me.metrics.arms;
    if (t.node == kNoTimer) home_on(id, cpu); // first arm: the node is made here
    CpuState& home = cpus_[t.cpu];
    sync(home);
    // Stays where it is: on this CPU already, or its callback is running there.
    if (t.cpu == cpu || home.running_timer == id) return arm_in_place(t.cpu, id, t.node, expires, call);
    // On another CPU: its own base decides whether it stays (shortcuts),
    // otherwise it leaves that base and is queued on this one.
    const TimerId node = t.node;
    const bool was_pending = home.queue->is_pending(node);
    const Jiffies old_expires = events_ && was_pending ? home.queue->placement(node).expires : 0;
    Jiffies e = expires;
    const ArmOutcome first = remote(home, [&] { return home.queue->arm_detach(node, e, call); });
    if (first != ArmOutcome::queued) {
        if (first != ArmOutcome::not_pending) requested_[id] = expires;
        return first;
    }
    if (was_pending) {
        ++me.metrics.rearm_dequeues;
        me.extra_ns += config_.costs.dequeue_ns;
        if (events_) log_event(TimerEvent::cancel, t.cpu, id, old_expires);
    }
    const TimerId here = home_on(id, cpu);
    sync(me);
    me.queue->arm(here, e, ArmCall::mod_timer_pinned); // slack already applied
    requested_[id] = expires;
    if (events_) log_enqueue(cpu, id, here);
    return ArmOutcome::queued;
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm_on(TimerId id, Jiffies expires, unsigned cpu) {
    if (cpu >= cpus_.size())
        throw std::invalid_argument("arm_on: no CPU " + std::to_string(cpu) + " on a machine with " +
                                    std::to_string(cpus_.size()) + " CPUs");
    TimerSlot& t = slot(id);
    ++cpus_[current_cpu_].metrics.arms;
    // add_timer_on() BUG()s on a pending timer; a caller would del_timer() first.
    if (t.node != kNoTimer && cpus_[t.cpu].queue->is_pending(t.node)) cancel(id);
    const TimerId node = home_on(id, cpu);
    CpuState& target = cpus_[cpu];
    sync(target);
    // 4.x and 6.1 add_timer_on(): internal_add_timer() on that base, no slack.
    const ArmOutcome outcome = remote(target, [&] { return target.queue->arm(node, expires, ArmCall::mod_timer_pinned); });
    requested_[id] = expires;
    if (events_) log_enqueue(cpu, id, node);
    if (cpu != current_cpu_) maybe_kick(cpu, id);
    return outcome;
}

template <TimerQueue Q>
bool Engine<Q>::cancel_general(TimerId id) {
    TimerId node = id;
    unsigned base = 0;
    if (!single_) {
        const TimerSlot& t = slot(id);
        if (t.node == kNoTimer) return false;
        node = t.node;
        base = t.cpu;
    } else if (id >= timers_.size()) [[unlikely]] {
        no_such_timer(id);
    }
    CpuState& home = cpus_[base];
    sync(home);
    const Jiffies old_expires = events_ && home.queue->is_pending(node) ? home.queue->placement(node).expires : 0;
    const bool removed = remote(home, [&] { return home.queue->cancel(node); });
    if (removed) {
        ++cpus_[current_cpu_].metrics.cancelled;
        if (events_) log_event(TimerEvent::cancel, base, id, old_expires);
    }
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

template <TimerQueue Q>
CpuMetrics Engine<Q>::metrics(unsigned cpu) const {
    const CpuState& c = cpus_.at(cpu);
    CpuMetrics m = c.metrics;
    m.task_work_ns += uncharged_ns(c); // task work not charged yet (no softirq since)
    m.counters = c.queue->counters();
    m.pending = c.queue->pending();
    m.softirq = c.softirq.stats();
    m.ticks_skipped = (jiffies_ - start_jiffies_) - m.ticks;
    return m;
}

} // namespace timersim
