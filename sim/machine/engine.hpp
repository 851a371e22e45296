// Engine: the simulated machine. A discrete-event engine over N CPUs, each
// with its own timer queue (any design of sim/machine/design.hpp: one
// instance per CPU, the kernel's per-CPU timer base), its own tick, softirq
// state, NOHZ state and metrics. It ticks, raises TIMER_SOFTIRQ, runs the
// softirq at interrupt exit or in ksoftirqd, and charges simulated time for
// the timer work, so a large burst of expiries delays the timers behind it
// and ticks keep arriving while a long softirq runs.
//
// Usage:
//
//     ModernWheel queue(ModernWheel::Config{.hz = 250});
//     Engine<ModernWheel> engine(queue, EngineConfig{.hz = 250}, &workload);
//     engine.run_ticks(30000);           // 2 minutes of simulated time
//     const CpuMetrics m = engine.metrics();
//
// The workload (workloads/workload.hpp) sees the engine as a Sim: it arms
// and cancels timers from actions it schedules and from its callbacks
// (on_fire), which run inside the softirq at the time the softirq has
// reached. Time is simulated ns from the start; tick n is at
// tick_time_ns(n, hz); runs are deterministic.
//
// This header is the engine's interface. The rules it follows, event by
// event and CPU by CPU (ticks, softirq runs, ksoftirqd, NOHZ idle, timers
// moving between CPUs), are written down where they are implemented:
// engine_impl.hpp (event loop), engine_timers_impl.hpp (timers) and
// engine_ticks_impl.hpp (tick, softirq and NOHZ), all compiled once, in
// engine.cpp, for each queue.
#pragma once

#include "sim/machine/event_log.hpp"
#include "sim/machine/event_queue.hpp"
#include "sim/machine/group_metrics.hpp"
#include "sim/machine/migration_hierarchy.hpp"
#include "sim/machine/metrics.hpp"
#include "sim/machine/queued_action.hpp"
#include "softirq/cost_model.hpp"
#include "softirq/softirq.hpp"
#include "wheel/core/clock.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"
#include "workloads/traces/kernel/recorded_machine.hpp"
#include "workloads/workload.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace timersim {

// ksoftirqd's default wakeup-to-run latency: a SCHED_NORMAL kthread woken on
// a lightly loaded CPU runs within tens of microseconds (cyclictest-class
// latencies, e.g. 14-25 us in Tosatti's 2019 isolated-CPU figures); a busy
// CPU can make it wait up to a CFS period (sched_latency_ns, 6 ms by default
// on one CPU). 50 us is the lightly loaded case; see --ksoftirqd-delay-ns.
inline constexpr std::uint64_t kDefaultKsoftirqdDelayNs = 50'000;

struct EngineConfig {
    unsigned hz = 0; // 1..kMaxHz: the run's clock, always given (0 is no HZ; none is assumed)
    CostModel costs{};
    std::uint64_t ksoftirqd_delay_ns = kDefaultKsoftirqdDelayNs;
    // Each tick is late by a uniform draw in [0, tick_jitter_ns]; must be
    // below the tick period so ticks stay in order. 0 = exact ticks.
    std::uint64_t tick_jitter_ns = 0;
    std::uint64_t jitter_seed = 1; // jitter draws (CPU 0 uses it as is, CPU k a value derived from it)
    // CONFIG_NO_HZ_IDLE: stop the tick while the CPU is idle and the next
    // timer is more than one tick away.
    bool nohz_idle = false;
    // NUMA nodes, 1..CPUs, CPUs in contiguous blocks: the 6.9+ timer
    // migration hierarchy's groups (migration_hierarchy.hpp). Only a queue
    // with remote expiry (modern-6.9) uses them.
    unsigned numa_nodes = 1;
    // The machine a kernel trace was recorded on (--machine recorded,
    // workloads/traces/kernel/recorded_machine.hpp): a CPU's tick raises
    // TIMER_SOFTIRQ only at the jiffies the recording ran it there, or where
    // the design's own due timer wakes the CPU. None: every tick may raise.
    std::shared_ptr<const RecordedMachine> recorded;
    // At most this many expiries per handle_softirqs() run (all its passes
    // together); the rest stays collected and runs first in the next run,
    // and the tick raises TIMER_SOFTIRQ while any is left. 0: no bound, the
    // kernel.
    std::uint32_t max_expiries_per_softirq = 0;
    // Per-group metrics (group_table()): timers grouped by this.
    GroupBy group_by = GroupBy::function;
    // Also CpuMetrics::error_us, an exact histogram of the error in us (a
    // map insertion per fire, so only when asked for: --hist-unit us).
    bool error_us_histogram = false;
    // Softirq cost over time: sums per window of this many ticks (0: none).
    std::uint64_t series_window_ticks = 0;
    // At most this many windows; work of later windows counts in the last
    // one (0: as many as the run needs).
    std::size_t series_max_windows = 0;
};

// The engine over queues of type Q. Instantiated for ClassicWheel,
// ModernWheel and HeapQueue in engine.cpp (the only file that sees the
// implementation); other queues need their own instantiation there.
template <TimerQueue Q>
class Engine final : public Sim {
public:
    static constexpr std::size_t kMaxCpus = 65535;

    // One CPU on the caller's queue.
    Engine(Q& queue, const EngineConfig& config, Workload* workload = nullptr);
    // One CPU per queue (all at the same jiffies, none with pending timers
    // the engine did not create). The queues must outlive the engine.
    Engine(std::span<Q> queues, const EngineConfig& config, Workload* workload = nullptr);
    ~Engine() override;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Processes every event at or before end_ns, then whatever it takes to
    // end the softirqs started by then; afterwards now_ns() >= end_ns.
    void run_until(std::uint64_t end_ns);
    // Runs up to and including tick n (n ticks after the start).
    void run_ticks(std::uint64_t n) { run_until(tick_time_ns(n, config_.hz) + config_.tick_jitter_ns); }

    // Metrics of one CPU, with its queue's counters and pending count as of
    // now (call it from outside the softirq, not from a workload's on_fire).
    CpuMetrics metrics(unsigned cpu) const;
    // All CPUs together (one CPU: exactly metrics(0)).
    CpuMetrics metrics() const;
    // Softirq cost per window (EngineConfig::series_window_ticks); windows
    // after the last one with a run may be missing.
    const std::vector<SeriesPoint>& series() const noexcept { return series_; }
    // Arms, fires, cancels, errors and softirq time per group of timers
    // (EngineConfig::group_by), non-empty groups only; call it from outside
    // the softirq, as metrics().
    GroupTable group_table() const;
    // Bytes the engine keeps per timer besides the queue's node: its slot,
    // its requested expiry, its group (group_metrics.hpp) and (several
    // CPUs) the node's entry in its CPU's node-to-timer map: 24, or 20 with
    // one CPU.
    std::size_t bytes_per_timer() const noexcept {
        return sizeof(TimerSlot) + sizeof(TimerBook) + (single_ ? 0 : sizeof(TimerId));
    }

    // The workload whose hooks the engine calls (it may need the engine to
    // create its timers first, hence not only in the constructor).
    void set_workload(Workload* workload) noexcept { workload_ = workload; }
    // Every enqueue, fire, cancel, cascade move and softirq run from now on
    // goes to `log` (not owned; nullptr: none), with `design` in its first
    // column. Rows come in
    // simulated-time order; sim/machine/event_log.hpp has the format. The cpu
    // column is the CPU of the timer base the row is about (enqueue: the base
    // it went to, cancel: the base it left, fire: the base that ran it); the
    // time is that of the CPU doing it (inside a softirq: its clock).
    void set_event_log(EventLog* log, std::string_view design);

    Q& queue(unsigned cpu = 0) noexcept;
    const Q& queue(unsigned cpu = 0) const noexcept;
    const SoftirqCpu& softirq(unsigned cpu = 0) const noexcept;
    const EngineConfig& config() const noexcept { return config_; }
    std::uint64_t ticks(unsigned cpu = 0) const noexcept;
    bool tick_stopped(unsigned cpu = 0) const noexcept;
    // When the CPU's last tick happened (0 before the first).
    std::uint64_t last_tick_ns(unsigned cpu = 0) const noexcept;
    // The tick-grid index of the CPU's next tick event (a stopped tick: the
    // wakeup it programmed; UINT64_MAX: none).
    std::uint64_t next_tick_index(unsigned cpu) const noexcept;
    // The CPU whose base holds the timer's node (where it is or was last queued).
    unsigned timer_cpu(TimerId id) const { return slot(id).cpu; }
    // The timer's placement on that base (not pending if it has no node yet).
    Placement placement(TimerId id) const;
    // Nominal time at which jiffies reaches j.
    std::int64_t jiffy_time_ns(Jiffies j) const noexcept;

    // Sim
    // Inside a callback: the time the softirq has reached; inside an action:
    // the time it runs at; outside both: how far the engine has got.
    std::uint64_t now_ns() const override;
    Jiffies jiffies() const override { return jiffies_; }
    Jiffies start_jiffies() const override { return start_jiffies_; }
    unsigned hz() const override { return config_.hz; }
    unsigned cpus() const override;
    unsigned current_cpu() const override { return current_cpu_; }
    std::uint64_t next_tick_ns() const override;
    TimerId create_timer(TimerFlags flags = {}) override;
    void label_timer(TimerId id, std::string_view label) override;
    void reserve_timers(std::size_t n) override;
    // flatten: the queue's own arm() inlined into the fast path, which GCC
    // stopped doing on its own as engine.cpp grew (callgrind: +7 M
    // instructions per 300k arms; arm_general() stays out, noinline).
    [[gnu::flatten]] ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) override;
    ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned cpu,
                      ArmCall call = ArmCall::mod_timer_pinned) override;
    bool cancel(TimerId id) override;
    void schedule_action(std::uint64_t time_ns, const Action& action) override;
    // Kept for the event log's name and label columns while one is set.
    void name_timer(TimerId id, std::string_view name, std::string_view label) override;
    void prefetch_timer(TimerId id) override;

private:
    // Where a timer is (8 bytes); the expiry it asked for and its group are
    // in books_ (TimerBook), apart, so that one CPU's arm and fire touch
    // only that.
    struct TimerSlot {
        TimerId node = kNoTimer; // its node in cpus_[cpu]'s queue; kNoTimer: none yet
        std::uint16_t cpu = 0;
        bool deferrable = false;
        bool live = false;
    };
    // Same-ns order of event kinds (then CPU number).
    // rank_raise: --machine recorded's TIMER_SOFTIRQ raised inside a jiffy,
    // after the CPU's actions traced before it.
    enum EventRank : std::uint32_t {
        rank_tick = 0,
        rank_ksoftirqd = 1,
        rank_softirq = 2,
        rank_action = 3,
        rank_raise = 4,
        rank_none = 5
    };
    // Where a running softirq stopped: before a callback, or at a pass end.
    enum class Phase : std::uint8_t { idle, fire, resume, pass_end };
    struct Key {
        std::uint64_t time = UINT64_MAX; // when it happens
        std::uint64_t due = UINT64_MAX;  // when it was due (an action waits for its CPU's softirq)
        std::uint32_t rank = rank_none;
    };
    struct CpuState; // one CPU: its queue, tick, softirq and metrics (engine_impl.hpp)

    static constexpr bool kHasBuckets = Q::name != std::string_view("heap");
    // How many actions ahead the event loop prefetches (engine_impl.hpp).
    static constexpr std::size_t kLookAhead = 16;

    [[noreturn, gnu::noinline, gnu::cold]] static void no_such_timer(TimerId id);
    const TimerSlot& slot(TimerId id) const {
        if (id >= timers_.size() || !timers_[id].live) [[unlikely]] no_such_timer(id);
        return timers_[id];
    }
    TimerSlot& slot(TimerId id);

    // Timers and their nodes (engine_timers_impl.hpp; run_action: engine_impl.hpp).
    TimerId home_on(TimerId id, unsigned cpu);
    [[gnu::noinline]] ArmOutcome arm_general(TimerId id, Jiffies expires, ArmCall call);
    [[gnu::noinline]] bool cancel_general(TimerId id);
    ArmOutcome arm_in_place(unsigned base, TimerId id, TimerId node, Jiffies expires, ArmCall call);
    void maybe_kick(unsigned cpu, TimerId id);
    void run_action(const QueuedAction& action);
    // The event log's rows (engine_log_impl.hpp), written only while one is set.
    EventRow timer_row(TimerEvent e, unsigned cpu, TimerId id) const;
    EventRow placed_row(TimerEvent e, unsigned cpu, TimerId id, const Placement& p) const;
    void prefetch_action(const QueuedAction& action);
    void prefetch_fire(TimerId id);
    void prefetch_records(TimerId id) const noexcept;
    void log_enqueue(unsigned cpu, TimerId id, TimerId node);
    void log_cancel(unsigned cpu, TimerId id, const Placement& was);
    void log_fire(const CpuState& c);
    void note_fired_placement(CpuState& c);
    void log_softirq(const CpuState& c, TimerEvent e);
    static void log_cascade(void* engine, TimerId node, unsigned from_array, unsigned from_slot);
    void count_arm(TimerId id, unsigned base, TimerId node);
    [[gnu::noinline, gnu::cold]] void regroup(TimerId id, unsigned base, TimerId node);

    // The event loop (engine_impl.hpp).
    [[gnu::always_inline]] Key compute_key(const CpuState& c) const noexcept;
    void update_key(unsigned cpu);
    bool key_less(unsigned a, unsigned b) const noexcept;
    void process(unsigned cpu, EventRank rank);
    void run_next_action(CpuState& c);
    unsigned index_of(const CpuState& c) const noexcept;

    // Ticks, softirq runs, charging and NOHZ (engine_ticks_impl.hpp).
    std::uint64_t tick_at(CpuState& c, std::uint64_t n);
    void sync(CpuState& c);
    void advance_jiffies(CpuState& by, Jiffies target);
    void set_tick_stopped(CpuState& c, bool stopped) noexcept;
    std::uint64_t work_ns(const QueueCounters& k) const noexcept;
    std::uint64_t uncharged_ns(const CpuState& c) const noexcept;
    void charge_queue_work(CpuState& c);
    void charge(CpuState& c, std::uint64_t ns);
    template <class Op>
    auto remote(CpuState& owner, Op&& op);
    void tick(CpuState& c);
    void start_run(CpuState& c, SoftirqContext context, std::uint64_t start_ns);
    void start_pass(CpuState& c);
    void queue_step(CpuState& c, bool resume);
    template <class Take>
    void remote_steps(CpuState& c, Take& take, bool resume);
    void find_remote_targets(CpuState& c, std::vector<std::uint32_t>& out);
    bool remote_work_due(CpuState& c);
    void after_queue_step(CpuState& c);
    void softirq_step(CpuState& c);
    void run_callback(CpuState& c);
    void finish_run(CpuState& c);
    std::size_t window_of(std::uint64_t t);
    void nohz_idle_enter(CpuState& c);
    std::optional<Jiffies> idle_next_event(CpuState& c);
    void nohz_wake(CpuState& c);
    std::optional<std::uint64_t> recorded_raise_time(CpuState& c);
    void recorded_raise(CpuState& c);

    EngineConfig config_;
    Workload* workload_;
    EventLog* events_ = nullptr;
    std::string design_;
    std::vector<std::string> names_, labels_; // by timer id: name_timer()'s, only while logging
    Jiffies start_jiffies_ = 0;
    Jiffies jiffies_ = 0;
    bool single_ = false; // one CPU: timer id == node id, always on CPU 0
    bool fast_ = false;   // single_, no event log, groups by function: arm() and cancel() take the short path
    std::vector<CpuState> cpus_;
    unsigned stopped_ticks_ = 0; // CPUs whose tick is stopped (NOHZ idle): set_tick_stopped()
    MigrationHierarchy hierarchy_; // 6.9+ pull model (queues with RemoteExpiry)
    HugePageVector<TimerSlot> timers_;
    // By timer: the expiry the workload asked for last and the timer's
    // group (group_metrics.hpp), read together by every arm, cancel and
    // fire. One 12-byte record rather than two arrays: one cache line to
    // fetch, not two (a record straddles two lines one time in eight).
    struct TimerBook {
        unsigned char requested_bytes[sizeof(Jiffies)] = {}; // a Jiffies, unaligned: 12 bytes, not 16
        std::uint32_t group = 0;
        Jiffies requested() const noexcept {
            Jiffies j;
            std::memcpy(&j, requested_bytes, sizeof j);
            return j;
        }
        void set_requested(Jiffies j) noexcept { std::memcpy(requested_bytes, &j, sizeof j); }
    };
    static_assert(sizeof(TimerBook) == sizeof(Jiffies) + sizeof(std::uint32_t));
    HugePageVector<TimerBook> books_;
    std::vector<Key> keys_;            // by CPU, padded to a power of two
    std::vector<std::uint32_t> tree_;  // winner tree over keys_: tree_[1] is the next event's CPU
    std::vector<SeriesPoint> series_;
    // Groups (group_metrics.hpp): the groups (each timer's index is in its
    // TimerBook) and for GroupBy::function the labels seen so far.
    std::vector<GroupAccumulator> groups_;
    std::vector<std::string> label_names_;
    std::unordered_map<std::string, std::uint32_t> label_groups_;
    std::uint64_t time_ns_ = 0;        // time of the latest event (or run_until's end)
    std::uint64_t end_ns_ = 0;         // run_until's end
    unsigned runs_started_by_end_ = 0; // softirqs in progress that started by end_ns_
    unsigned current_cpu_ = 0;
    bool in_event_ = false;
};

} // namespace timersim
