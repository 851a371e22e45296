// Engine, the implementation: the per-CPU state, the event loop, the
// charging of work to simulated time and the metrics (timers and their
// nodes: engine_timers_impl.hpp; ticks, softirq runs and NOHZ:
// engine_ticks_impl.hpp). Included only by engine.cpp, which instantiates
// it for each queue.
//
// The simulated machine. A discrete-event engine over N CPUs, each
// with its own timer queue (any design of sim/machine/design.hpp: one
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
//                 pass (a callback that ran past a tick lets it in before
//                 the loop's next turn). irq_exit() does nothing there
//                 (in_interrupt()).
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
//                 6.9+ (a queue with RemoteExpiry): the pull model's
//                 stand-in, an idle CPU wakes for its local timers only
//                 unless it is the last to go idle (idle_next_event()).
//
//   recorded      optional (recorded: a kernel trace's machine, per CPU the
//                 jiffies it ran TIMER_SOFTIRQ at and when in the jiffy). A
//                 tick that would raise TIMER_SOFTIRQ does so only at a
//                 recorded run of its CPU, at the run's own time in the
//                 jiffy (after the actions traced before it), or where the
//                 design's own next_timer_interrupt() is due and no recorded
//                 run follows within the recording's wake window: the CPU
//                 then wakes for it after the recording's wake delay, at the
//                 end of that jiffy, which the recording shows it spent
//                 without a run (recorded_machine.hpp, docs/machine.md).
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
// budgeted pass, wheel/core/timer_queue.hpp), so the CPUs' events are processed
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
#pragma once

#include "sim/machine/engine.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace timersim {

// No CPU (CpuState::remote_cpu when no remote expiry runs).
inline constexpr std::uint32_t kNoRemoteCpu = 0xFFFFFFFFu;

template <TimerQueue Q>
struct Engine<Q>::CpuState {
    CpuState(Q& q, SoftirqCpu::Config c, std::uint64_t seed) : queue(&q), softirq(c), rng(seed) {}
    Q* queue;
    SoftirqCpu softirq;
    CpuMetrics metrics;
    HugePageVector<TimerId> timer_of; // node id -> timer id
    std::mt19937_64 rng;           // tick jitter
    EventQueue<QueuedAction> actions;
    // tick
    std::uint64_t ticks = 0;
    std::uint64_t next_tick_index = 1; // tick-grid index of the next tick event
    std::uint64_t next_tick_ns = 0;    // its time (UINT64_MAX: none programmed)
    std::uint64_t last_tick_ns = 0;
    bool tick_stopped = false;
    // --machine recorded: the first tick at which the design had a timer
    // due that should wake this CPU, while no softirq served it, and the
    // last tick that found it still due (a wait is one unbroken stretch).
    std::optional<Jiffies> wake_due_since;
    Jiffies wake_due_seen = 0;
    // --machine recorded: when this tick's TIMER_SOFTIRQ is raised, later
    // in the jiffy (UINT64_MAX: none waiting).
    std::uint64_t raise_at_ns = UINT64_MAX;
    std::optional<Placement> fired_placement; // with an event log: c.fired's bucket when taken off
    Jiffies fired_requested = 0;              // c.fired's requested expiry when taken off
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
    std::uint64_t step_start_ns = 0; // clock at the start of the queue step in progress (group softirq time)
    FiredTimer fired{};
    TimerId running_timer = kNoTimer; // fired, callback not finished (base->running_timer)
    // 6.9+ remote expiry (queues with RemoteExpiry): the idle CPUs whose
    // global base this pass runs after its own (tmigr_handle_remote()), the
    // next of them to run, and the one running now (kNoRemoteCpu: none).
    std::vector<std::uint32_t> remote_targets;
    // remote_work_due()'s list: a tick inside a run must not change the
    // list its walk is going through.
    std::vector<std::uint32_t> remote_due_targets;
    std::size_t remote_next = 0;
    std::uint32_t remote_cpu = kNoRemoteCpu;
    // A timer of this CPU's global base whose callback another CPU runs
    // (its base->running_timer while a remote expiry runs it).
    TimerId remote_running = kNoTimer;
};

// A queue whose idle CPU's global timers another CPU can expire (6.9+
// timer migration: Modern69Wheel).
template <class Q>
concept RemoteExpiry = requires(Q& q, const Q& cq, void (*f)(const FiredTimer&), std::uint64_t budget) {
    { cq.remote_due() } -> std::same_as<bool>;
    { q.run_remote_softirq(f, budget) } -> std::same_as<bool>;
    { q.resume_remote_softirq(f, budget) } -> std::same_as<bool>;
    q.next_timer_events();
    { cq.global_next_event() } -> std::same_as<std::optional<Jiffies>>;
    { cq.remote_counters() } -> std::same_as<const QueueCounters&>;
};

// ---------------------------------------------------------------------------
// Small accessors and helpers of the interface

template <TimerQueue Q>
Engine<Q>::Engine(Q& queue, const EngineConfig& config, Workload* workload)
    : Engine(std::span<Q>(&queue, 1), config, workload) {}

template <TimerQueue Q>
Engine<Q>::~Engine() = default;

template <TimerQueue Q>
void Engine<Q>::no_such_timer(TimerId id) {
    throw std::invalid_argument("no such timer: " + std::to_string(id));
}

template <TimerQueue Q>
typename Engine<Q>::TimerSlot& Engine<Q>::slot(TimerId id) {
    return const_cast<TimerSlot&>(std::as_const(*this).slot(id));
}


template <TimerQueue Q>
Q& Engine<Q>::queue(unsigned cpu) noexcept { return *cpus_[cpu].queue; }
template <TimerQueue Q>
const Q& Engine<Q>::queue(unsigned cpu) const noexcept { return *cpus_[cpu].queue; }
template <TimerQueue Q>
const SoftirqCpu& Engine<Q>::softirq(unsigned cpu) const noexcept { return cpus_[cpu].softirq; }
template <TimerQueue Q>
std::uint64_t Engine<Q>::ticks(unsigned cpu) const noexcept { return cpus_[cpu].ticks; }
template <TimerQueue Q>
bool Engine<Q>::tick_stopped(unsigned cpu) const noexcept { return cpus_[cpu].tick_stopped; }
template <TimerQueue Q>
std::uint64_t Engine<Q>::last_tick_ns(unsigned cpu) const noexcept { return cpus_[cpu].last_tick_ns; }
template <TimerQueue Q>
std::uint64_t Engine<Q>::next_tick_index(unsigned cpu) const noexcept { return cpus_[cpu].next_tick_index; }
template <TimerQueue Q>
unsigned Engine<Q>::cpus() const { return static_cast<unsigned>(cpus_.size()); }
template <TimerQueue Q>
std::uint64_t Engine<Q>::next_tick_ns() const { return cpus_[current_cpu_].next_tick_ns; }

template <TimerQueue Q>
Placement Engine<Q>::placement(TimerId id) const {
    const TimerSlot& t = slot(id);
    return t.node == kNoTimer ? Placement{} : cpus_[t.cpu].queue->placement(t.node);
}

template <TimerQueue Q>
std::int64_t Engine<Q>::jiffy_time_ns(Jiffies j) const noexcept {
    const std::int64_t d = jiffies_diff(j, start_jiffies_);
    return d >= 0 ? static_cast<std::int64_t>(tick_time_ns(static_cast<std::uint64_t>(d), config_.hz))
                  : -static_cast<std::int64_t>(tick_time_ns(0 - static_cast<std::uint64_t>(d), config_.hz));
}

template <TimerQueue Q>
std::uint64_t Engine<Q>::now_ns() const {
    if (!in_event_) return time_ns_;
    const CpuState& c = cpus_[current_cpu_];
    return c.in_softirq ? c.clock_ns : c.now_ns;
}

template <TimerQueue Q>
void Engine<Q>::schedule_action(std::uint64_t time_ns, const Action& action) {
    if (action.cpu >= cpus_.size())
        throw std::invalid_argument("action on CPU " + std::to_string(action.cpu) + " of a machine with " +
                                    std::to_string(cpus_.size()) + " CPUs");
    cpus_[action.cpu].actions.push(time_ns, QueuedAction::of(action));
    // Inside an event of the same CPU, process() updates its key when the
    // event ends, and nothing reads the key before that.
    if (!in_event_ || action.cpu != current_cpu_) update_key(action.cpu);
}

template <TimerQueue Q>
CpuMetrics Engine<Q>::metrics() const {
    CpuMetrics m = metrics(0);
    for (unsigned c = 1; c < cpus_.size(); ++c) m.merge(metrics(c));
    return m;
}

template <TimerQueue Q>
unsigned Engine<Q>::index_of(const CpuState& c) const noexcept {
    return static_cast<unsigned>(&c - cpus_.data());
}

template <TimerQueue Q>
bool Engine<Q>::key_less(unsigned a, unsigned b) const noexcept {
    const Key& x = keys_[a];
    const Key& y = keys_[b];
    if (x.time != y.time) return x.time < y.time;
    if (x.rank != y.rank) return x.rank < y.rank;
    return a < b;
}

// ---------------------------------------------------------------------------
// Charging work to simulated time (used by both implementation files)

template <TimerQueue Q>
std::uint64_t Engine<Q>::tick_at(CpuState& c, std::uint64_t n) {
    std::uint64_t t = tick_time_ns(n, config_.hz);
    if (config_.tick_jitter_ns) {
        // Our own mapping from the 64-bit stream (std distributions differ
        // between standard libraries): the same seed is the same run everywhere.
        t += c.rng() % (config_.tick_jitter_ns + 1);
    }
    return t;
}

// The queue reads the global jiffies.
template <TimerQueue Q>
void Engine<Q>::sync(CpuState& c) {
    if (c.queue->jiffies() != jiffies_) c.queue->set_jiffies(jiffies_);
}

// Moves jiffies to `target` if that is ahead; the jump counts on `by`.
template <TimerQueue Q>
void Engine<Q>::advance_jiffies(CpuState& by, Jiffies target) {
    if (!time_after(target, jiffies_)) return;
    by.metrics.max_jiffies_jump = std::max<std::uint64_t>(by.metrics.max_jiffies_jump, target - jiffies_);
    jiffies_ = target;
}

// The cost model applied to everything a queue has counted so far.
template <TimerQueue Q>
std::uint64_t Engine<Q>::work_ns(const QueueCounters& k) const noexcept {
    const CostModel& c = config_.costs;
    return k.enqueues * c.enqueue_ns + k.cancels * c.dequeue_ns + k.cascade_moves * c.cascade_move_ns +
           k.buckets_scanned * c.bucket_scan_ns + k.expired * c.expiry_ns +
           (k.next_expiry_search_steps + k.list_steps) * c.next_expiry_step_ns;
}

// Simulated ns of the work done by CPU c since its last charge.
template <TimerQueue Q>
std::uint64_t Engine<Q>::uncharged_ns(const CpuState& c) const noexcept {
    return work_ns(c.queue->counters()) - c.work_mark + c.extra_ns;
}

// Turns that work into time: into the softirq's clock when inside it, into
// task work otherwise.
template <TimerQueue Q>
void Engine<Q>::charge(CpuState& c, std::uint64_t ns) {
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
template <TimerQueue Q>
template <class Op>
auto Engine<Q>::remote(CpuState& owner, Op&& op) {
    if (&owner == &cpus_[current_cpu_]) return op();
    const std::uint64_t before = work_ns(owner.queue->counters());
    auto result = op();
    const std::uint64_t done = work_ns(owner.queue->counters()) - before;
    owner.work_mark += done;
    cpus_[current_cpu_].extra_ns += done;
    return result;
}

// ---------------------------------------------------------------------------
// Construction and the event loop

template <TimerQueue Q>
Engine<Q>::Engine(std::span<Q> queues, const EngineConfig& config, Workload* workload)
    : config_(config), workload_(workload) {
    if (!valid_hz(config.hz)) throw std::invalid_argument("hz must be 1.." + std::to_string(kMaxHz));
    if (config.tick_jitter_ns >= 1'000'000'000ull / config.hz)
        throw std::invalid_argument("tick jitter must be below the tick period");
    if (queues.empty() || queues.size() > kMaxCpus) throw std::invalid_argument("the engine needs 1..65535 CPUs");
    if (config.numa_nodes == 0 || config.numa_nodes > queues.size())
        throw std::invalid_argument("NUMA nodes must be 1.." + std::to_string(queues.size()) + " (the CPUs)");
    if constexpr (RemoteExpiry<Q>)
        hierarchy_ = build_migration_hierarchy(static_cast<unsigned>(queues.size()), config.numa_nodes);
    start_jiffies_ = jiffies_ = queues[0].jiffies();
    single_ = queues.size() == 1;
    // --by cpu or level moves a timer's group at every arm: the general path.
    fast_ = single_ && config.group_by == GroupBy::function;
    cpus_.reserve(queues.size());
    for (std::size_t i = 0; i < queues.size(); ++i) {
        if (queues[i].jiffies() != start_jiffies_)
            throw std::invalid_argument("every CPU's queue must start at the same jiffies");
        // CPU 0 draws its jitter from the seed itself (what one CPU always
        // did); the others from splitmix64 mixes of it.
        std::uint64_t seed = config.jitter_seed;
        if (i > 0) {
            std::uint64_t z = config.jitter_seed + i * 0x9E3779B97F4A7C15ull;
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
    // Every group index a timer can get exists from the start (none is
    // added on the hot path): the CPUs, the levels (no queue has 16), or
    // "no label" (labels add theirs in label_timer()).
    switch (config_.group_by) {
    case GroupBy::function: groups_.resize(1); label_names_.push_back("(no label)"); break;
    case GroupBy::cpu: groups_.resize(cpus_.size()); break;
    case GroupBy::level: groups_.resize(16); break;
    case GroupBy::base: groups_.resize(3); break;
    }
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
        // Field by field, not a copy of the Key: update_key() has just
        // stored it field by field, and a 16-byte load of two 8-byte stores
        // cannot be forwarded from the store buffer, so it waits for every
        // older store to reach the cache, the wheel's and calendar's store
        // misses included (perf put 12-19 % of a run's samples on that load).
        const Key& k = keys_[cpu];
        if (k.rank == rank_none) break; // nothing will ever happen
        // An action due by end_ns that waited for a softirq still runs.
        if (k.due > end_ns && runs_started_by_end_ == 0) break;
        time_ns_ = std::max(time_ns_, k.time);
        process(cpu, static_cast<EventRank>(k.rank));
    }
    time_ns_ = std::max(time_ns_, end_ns);
}

template <TimerQueue Q>
inline typename Engine<Q>::Key Engine<Q>::compute_key(const CpuState& c) const noexcept {
    Key k;
    auto consider = [&k](std::uint64_t time, std::uint64_t due, EventRank rank) {
        if (time < k.time || (time == k.time && rank < k.rank)) k = Key{time, due, rank};
    };
    if (c.next_tick_ns != UINT64_MAX) consider(c.next_tick_ns, c.next_tick_ns, rank_tick);
    if (c.in_softirq) {
        consider(c.clock_ns, c.clock_ns, rank_softirq);
    } else {
        if (const auto at = c.softirq.ksoftirqd_run_at()) consider(*at, *at, rank_ksoftirqd);
        if (c.raise_at_ns != UINT64_MAX) consider(std::max(c.raise_at_ns, c.now_ns), c.raise_at_ns, rank_raise);
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
    case rank_action:
        run_next_action(c);
        // One CPU without NOHZ: while the CPU's own key says its next event
        // is an action (not its tick, ksoftirqd or a softirq the action
        // started) and run_until() would still take it, that action is the
        // loop's next event anyway, so it runs here without storing the key
        // and climbing the winner tree for each (uniform at 100K
        // connections: about 80 of 900 instructions an operation). The
        // same events in the same order, at the same times.
        if (single_ && !config_.nohz_idle) {
            while (true) {
                const Key k = compute_key(c);
                if (k.rank != rank_action || (k.due > end_ns_ && runs_started_by_end_ == 0)) break;
                time_ns_ = std::max(time_ns_, k.time);
                run_next_action(c);
            }
        }
        break;
    case rank_raise:
        c.now_ns = std::max(c.now_ns, time_ns_);
        recorded_raise(c);
        break;
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

// The CPU's earliest action, at time_ns_ (the event loop's time).
template <TimerQueue Q>
inline void Engine<Q>::run_next_action(CpuState& c) {
    const auto event = c.actions.pop();
    // Look ahead in the calendar: the action kLookAhead places on gets
    // its nodes fetched, so the misses of the coming actions overlap (a
    // live kernel cannot know its next operations; a simulator does).
    // A node is all a wheel's arm or cancel may find cold (its bucket
    // arrays' tails are hot). Hints only: nothing they do changes the run.
    if (const auto* ahead = c.actions.peek(kLookAhead)) prefetch_action(ahead->payload);
    if (event.time_ns < time_ns_) ++c.metrics.actions_delayed;
    c.now_ns = std::max(c.now_ns, time_ns_);
    if (c.tick_stopped) {
        ++c.metrics.wakeups_by_action;
        nohz_wake(c);
    }
    run_action(event.payload);
}

template <TimerQueue Q>
void Engine<Q>::run_action(const QueuedAction& action) {
    switch (action.kind) {
    case Action::Kind::arm: arm(action.timer, action.expires(), action.call); break;
    case Action::Kind::cancel: cancel(action.timer); break;
    case Action::Kind::call:
        if (workload_) workload_->on_action(*this, action.tag());
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
