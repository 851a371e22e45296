// The discrete-event engine (sim/machine/engine.hpp): determinism, no error of its
// own under a zero cost model, a large same-deadline burst turning into one
// long softirq that makes the last timers late, and exact tick times. Runs
// under --max-expiries-per-softirq: test_bounded_softirq.cpp.
#include "sim/machine/engine.hpp"
#include "sim/machine/engine_run.hpp"
#include "tests/machine/burst_workload.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "workloads/generators/churn_workload.hpp"
#include "workloads/generators/generator_catalog.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

using namespace timersim;
using test::BurstWorkload;

namespace {

constexpr unsigned kHz = 250;

MachineConfig small_machine() {
    MachineConfig c;
    c.hz = kHz;
    c.ticks = 2500;
    return c;
}

WorkloadSpec small_churn(const MachineConfig& m, std::uint64_t seed = 7) {
    ConnectionChurnConfig w;
    w.hz = m.hz;
    w.connections = 1000;
    w.message_interval_ms = 500;
    w.seed = seed;
    return WorkloadSpec{.name = "connection-churn", .description = "churn",
                        .factory = churn_workload(w, m.ticks, m.tick_jitter_ns)};
}

// Arms timers at random times with random delays (re-arming some, cancelling
// some), plus a few periodic timers re-armed from their callbacks, and
// checks every firing against the queue's own prediction made when the timer
// was last armed.
struct PredictionShape {
    unsigned periodic = 10;                   // timers re-armed from their own callback
    std::uint64_t max_gap_ns = 3'000'000;     // between two workload steps
};

template <class Q>
class PredictionWorkload final : public Workload {
public:
    PredictionWorkload(Engine<Q>& engine, std::uint64_t seed, PredictionShape shape = {})
        : engine_(engine), rng_(seed), periodic_(shape.periodic) {
        for (unsigned i = 0; i < kTimers; ++i) ids_.push_back(engine.create_timer());
        predicted_.resize(ids_.size() + 1, 0);
        for (unsigned i = 0; i < periodic_; ++i) rearm(engine, ids_[i], 1 + i);
        // Workload steps at arbitrary ns (not only tick times).
        std::uint64_t t = 0;
        for (unsigned op = 0; op < kOps; ++op) {
            t += rng_() % shape.max_gap_ns;
            engine.schedule_action(t, Action{.kind = Action::Kind::call, .tag = op});
        }
    }

    void on_action(Sim& sim, std::uint64_t) override {
        const TimerId id = ids_[periodic_ + rng_() % (kTimers - periodic_)];
        if (rng_() % 8 == 0) {
            sim.cancel(id);
            return;
        }
        // Delays that reach several levels of both wheels.
        const unsigned level = static_cast<unsigned>(rng_() % 4);
        const Jiffies delay = 1 + rng_() % (Jiffies{64} << (3 * level));
        rearm(sim, id, delay);
    }

    void on_fire(Sim& sim, const FireRecord& r) override {
        ++fired_;
        if (r.fired_jiffies != predicted_[r.id]) ++wrong_jiffy_;
        // Zero cost: the softirq runs at its tick's exact time.
        if (static_cast<std::int64_t>(r.fire_ns) != engine_.jiffy_time_ns(r.fired_jiffies)) ++wrong_ns_;
        if (r.fired_jiffies < r.requested) ++early_;
        if (periodic_ > 0 && r.id < ids_[periodic_]) rearm(sim, r.id, 1 + r.id % 7);
    }

    std::uint64_t fired_ = 0, wrong_jiffy_ = 0, wrong_ns_ = 0, early_ = 0;

private:
    static constexpr unsigned kTimers = 2000;
    static constexpr unsigned kOps = 20000;

    void rearm(Sim& sim, TimerId id, Jiffies delay) {
        sim.arm(id, sim.jiffies() + delay, ArmCall::mod_timer);
        const Placement p = engine_.queue().placement(id);
        // The modern wheel runs a timer at its bucket's expiry; classic
        // without slack and the heap at exactly ->expires.
        if constexpr (std::is_same_v<Q, ModernWheel>)
            predicted_[id] = p.bucket_expiry;
        else
            predicted_[id] = p.expires;
    }

    Engine<Q>& engine_;
    std::mt19937_64 rng_;
    unsigned periodic_;
    std::vector<TimerId> ids_;
    std::vector<Jiffies> predicted_;
};

template <class Q>
CpuMetrics check_no_engine_error(Q queue, bool nohz = false, PredictionShape shape = {}, std::uint64_t ticks = 20000) {
    Engine<Q> engine(queue, EngineConfig{.hz = kHz, .costs = CostModel::zero(), .nohz_idle = nohz});
    PredictionWorkload<Q> workload(engine, 42, shape);
    engine.set_workload(&workload);
    engine.run_ticks(ticks);
    CHECK(workload.fired_ > 1000);
    CHECK(workload.wrong_jiffy_ == 0);
    CHECK(workload.wrong_ns_ == 0);
    const CpuMetrics m = engine.metrics();
    CHECK(m.fired == workload.fired_);
    CHECK(m.softirq.deferrals == 0);
    CHECK(m.ticks_in_softirq == 0);
    CHECK(m.max_softirq_ns == 0);
    CHECK(m.timer_work_ns() == 0);
    // Nothing runs before its requested jiffy, except what classic slack or
    // the wheel's rounding would do (neither applies here: slack is off and
    // the modern wheel only rounds up).
    CHECK(workload.early_ == 0);
    CHECK(m.early == 0);
    return m;
}

enum class BurstRaise {
    once,        // modern: next_expiry is recomputed before the timers run, so the ticks inside do not raise
    while_due,   // heap: the ticks inside see due timers still queued and raise; ksoftirqd finds nothing left
    every_tick,  // classic: every tick raises
};

template <class Q>
void check_burst(Q queue, std::uint32_t n, BurstRaise raise) {
    const CostModel costs{};
    Engine<Q> engine(queue, EngineConfig{.hz = kHz, .costs = costs});
    BurstWorkload workload;
    engine.set_workload(&workload);
    engine.reserve_timers(n);
    const Jiffies start = engine.jiffies();
    const Jiffies deadline = start + 100;
    TimerId first = kNoTimer;
    for (std::uint32_t i = 0; i < n; ++i) {
        const TimerId id = engine.create_timer();
        if (i == 0) first = id;
        engine.arm(id, deadline);
    }
    // The jiffy the queue runs them at (the modern wheel rounds up to its
    // bucket: 100 jiffies is level 1, granularity 8).
    const Jiffies due = engine.queue().placement(first).bucket_expiry;
    engine.run_ticks(400);

    const CpuMetrics m = engine.metrics();
    REQUIRE(workload.fired == n);
    const std::uint64_t tick_ns = static_cast<std::uint64_t>(engine.jiffy_time_ns(due));
    const std::uint64_t per_timer = costs.expiry_ns + costs.callback_ns;
    // One softirq that expires everything: N x (expiry + callback) plus a
    // little fixed work (entry, bucket scans, next-expiry search).
    const std::uint64_t body = n * per_timer;
    CHECK(m.max_expired_per_softirq == n);
    CHECK(m.max_softirq_ns >= body);
    CHECK(m.max_softirq_ns <= body + 20'000);
    // The first timer fires right after the tick, the last one N-1 timers later.
    CHECK(workload.first_fire_ns >= tick_ns);
    CHECK(workload.first_fire_ns <= tick_ns + 20'000);
    CHECK(workload.last_fire_ns - workload.first_fire_ns == (n - 1) * per_timer);
    // Error in ns is against the requested deadline's tick.
    CHECK(workload.last_error_ns ==
          static_cast<std::int64_t>(workload.last_fire_ns) - engine.jiffy_time_ns(deadline));
    // Ticks kept coming during the softirq: the last timers see a later jiffies.
    const std::uint64_t ticks_inside = (workload.last_fire_ns - tick_ns) / (1'000'000'000ull / kHz);
    CHECK(m.ticks_in_softirq >= ticks_inside);
    const std::int64_t rounding = jiffies_diff(due, deadline);
    CHECK(jiffies_diff(workload.last_fired_jiffies, due) == static_cast<std::int64_t>(ticks_inside));
    CHECK(m.error_jiffies.max() == rounding + static_cast<std::int64_t>(ticks_inside));
    CHECK(m.error_jiffies.min() == rounding);
    if (raise == BurstRaise::once) {
        // The modern wheel and the heap raise only when a timer is due, so
        // the ticks inside do not re-raise: one run, one pass, no ksoftirqd.
        CHECK(m.softirq.runs_irq_exit == 1);
        CHECK(m.softirq.passes == 1);
        CHECK(m.softirq.deferrals == 0);
        CHECK(m.softirq_ns.count() == 1);
    } else if (raise == BurstRaise::while_due) {
        // All expired in the first pass (the heap's loop reads jiffies live);
        // the raise by the ticks inside leaves an empty run to ksoftirqd.
        CHECK(m.softirq.runs_irq_exit == 1);
        CHECK(m.softirq.deferrals_by_time == 1);
        CHECK(m.softirq.runs_ksoftirqd == 1);
    } else {
        // The classic tick raises every jiffy: the run ends past MAX_SOFTIRQ_TIME
        // with TIMER_SOFTIRQ pending again, and ksoftirqd takes over.
        CHECK(m.softirq.deferrals_by_time >= 1);
        CHECK(m.softirq.runs_ksoftirqd >= 1);
        CHECK(m.softirq.irq_exit_skipped + m.softirq.runs_ksoftirqd >= 1);
    }
}

} // namespace

TEST_CASE("same inputs and seeds give identical metrics") {
    for (Design d : all_designs()) {
        CAPTURE(to_string(d));
        MachineConfig c = small_machine();
        const RunResult a = run_machine(d, c, small_churn(c));
        const RunResult b = run_machine(d, c, small_churn(c));
        CHECK(a.total.fired > 0);
        CHECK(a.total == b.total);
        // The reports of a and b: tests/report/test_run_report.cpp.

        c.tick_jitter_ns = 400'000;
        c.jitter_seed = 3;
        const RunResult j1 = run_machine(d, c, small_churn(c));
        const RunResult j2 = run_machine(d, c, small_churn(c));
        CHECK(j1.total == j2.total);
        CHECK_FALSE(j1.total.error_ns == a.total.error_ns); // the jitter shows in ns

        CHECK_FALSE(run_machine(d, c, small_churn(c, 8)).total == j1.total);
    }
}

TEST_CASE("with a zero cost model the engine adds no error: timers fire where the queue alone says") {
    SUBCASE("modern wheel: at placement().bucket_expiry") {
        check_no_engine_error(ModernWheel(ModernWheel::Config{.hz = kHz}));
    }
    SUBCASE("classic wheel without slack: at expires") {
        check_no_engine_error(ClassicWheel(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt}));
    }
    SUBCASE("heap: at expires") {
        check_no_engine_error(HeapQueue(HeapQueue::Config{.hz = kHz}));
    }
}

TEST_CASE("a same-deadline burst is one long softirq and its last timer is late by the burst's cost") {
    // 200k rather than 1M: the suite also runs under ASan+UBSan on 2 cores.
    constexpr std::uint32_t n = 200'000;
    SUBCASE("modern") { check_burst(ModernWheel(ModernWheel::Config{.hz = kHz}), n, BurstRaise::once); }
    SUBCASE("heap") { check_burst(HeapQueue(HeapQueue::Config{.hz = kHz}), n, BurstRaise::while_due); }
    SUBCASE("classic") {
        check_burst(ClassicWheel(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt}), n, BurstRaise::every_tick);
    }
}

TEST_CASE("HZ=300 ticks stay exact: tick n at floor(n * 1e9 / 300) ns, also after 3600 s") {
    for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 299ull, 300ull, 301ull, 1'079'999ull, 1'080'000ull,
                            123'456'789ull, 10'000'000'000ull}) {
        const unsigned __int128 exact = static_cast<unsigned __int128>(n) * 1'000'000'000u / 300u;
        CHECK(tick_time_ns(n, 300) == static_cast<std::uint64_t>(exact));
    }
    CHECK(tick_time_ns(1, 300) == 3'333'333);
    CHECK(tick_time_ns(2, 300) == 6'666'666);
    CHECK(tick_time_ns(3, 300) == 10'000'000);

    HeapQueue queue(HeapQueue::Config{.hz = 300});
    Engine<HeapQueue> engine(queue, EngineConfig{.hz = 300});
    const Jiffies start = engine.jiffies();
    engine.run_until(3600ull * 1'000'000'000ull);
    CHECK(engine.ticks() == 3600ull * 300);
    CHECK(engine.last_tick_ns() == 3600ull * 1'000'000'000ull);
    CHECK(engine.jiffies() == start + 3600ull * 300);
    CHECK(engine.next_tick_ns() == 3600ull * 1'000'000'000ull + 3'333'333);
}

TEST_CASE("tick jitter delays ticks within [0, jitter] and never reorders them") {
    HeapQueue queue(HeapQueue::Config{.hz = 1000});
    Engine<HeapQueue> engine(queue, EngineConfig{.hz = 1000, .tick_jitter_ns = 900'000, .jitter_seed = 5});
    bool late_seen = false;
    std::uint64_t previous = 0;
    for (std::uint64_t n = 1; n <= 2000; ++n) {
        engine.run_ticks(n);
        REQUIRE(engine.ticks() == n);
        const std::uint64_t t = engine.last_tick_ns();
        CHECK(t >= tick_time_ns(n, 1000));
        CHECK(t <= tick_time_ns(n, 1000) + 900'000);
        CHECK(t > previous);
        late_seen = late_seen || t != tick_time_ns(n, 1000);
        previous = t;
    }
    CHECK(late_seen);
    CHECK_THROWS_AS(Engine<HeapQueue>(queue, EngineConfig{.hz = 1000, .tick_jitter_ns = 1'000'000}),
                    std::invalid_argument);
}

TEST_CASE("actions run after a tick at the same ns, and wait for a running softirq") {
    ModernWheel queue(ModernWheel::Config{.hz = kHz});
    Engine<ModernWheel> engine(queue, EngineConfig{.hz = kHz});
    const Jiffies start = engine.jiffies();
    const TimerId a = engine.create_timer();
    const TimerId b = engine.create_timer();
    // At tick 1's ns: jiffies is already start + 1 when the arm runs.
    struct Recorder final : Workload {
        Jiffies seen = 0;
        void on_action(Sim& sim, std::uint64_t) override { seen = sim.jiffies(); }
    } recorder;
    engine.set_workload(&recorder);
    engine.schedule_action(tick_time_ns(1, kHz), Action{});
    engine.run_ticks(1);
    CHECK(recorder.seen == start + 1);
    // A burst at tick 10 that lasts a few ticks; an arm scheduled in the
    // middle of it waits until it ends.
    for (int i = 0; i < 100'000; ++i) engine.arm(engine.create_timer(), start + 10);
    engine.schedule_action(tick_time_ns(11, kHz), Action{.kind = Action::Kind::arm, .timer = a, .expires = start + 50});
    engine.schedule_action(tick_time_ns(11, kHz), Action{.kind = Action::Kind::cancel, .timer = b});
    engine.run_ticks(100);
    const CpuMetrics m = engine.metrics();
    CHECK(m.actions_delayed == 2);
    CHECK(m.fired == 100'001);
    CHECK(engine.queue().counters().expired == 100'001);
}

// Records what each action saw: the time it ran at, jiffies, its tag.
struct ActionLog final : Workload {
    struct Seen {
        std::uint64_t ns;
        Jiffies jiffies;
        std::uint64_t tag;
    };
    std::vector<Seen> seen;
    void on_action(Sim& sim, std::uint64_t tag) override { seen.push_back({sim.now_ns(), sim.jiffies(), tag}); }
};

// One CPU runs a run of actions back to back while nothing else can come
// between them (Engine::process); these are the events that can.
TEST_CASE("back-to-back actions: a tick at an action's ns comes first, and none runs past run_until's end") {
    ModernWheel queue(ModernWheel::Config{.hz = kHz});
    Engine<ModernWheel> engine(queue, EngineConfig{.hz = kHz});
    const Jiffies start = engine.jiffies();
    ActionLog log;
    engine.set_workload(&log);
    const std::uint64_t t1 = tick_time_ns(1, kHz), t2 = tick_time_ns(2, kHz);
    const std::uint64_t end = t2 + 1000;
    const std::uint64_t times[] = {t1 - 1, t1, t1 + 1, t2 - 1, t2, end, end + 1};
    for (std::uint64_t i = 0; i < std::size(times); ++i) engine.schedule_action(times[i], Action{.tag = i});
    engine.run_until(end);
    REQUIRE(log.seen.size() == 6); // not the one at end + 1
    const Jiffies expected[] = {start, start + 1, start + 1, start + 1, start + 2, start + 2};
    for (std::size_t i = 0; i < 6; ++i) {
        CAPTURE(i);
        CHECK(log.seen[i].tag == i);
        CHECK(log.seen[i].ns == times[i]);
        CHECK(log.seen[i].jiffies == expected[i]);
    }
    engine.run_until(end + 1);
    REQUIRE(log.seen.size() == 7);
    CHECK(log.seen[6].ns == end + 1);
}

TEST_CASE("back-to-back actions: ksoftirqd due at an action's ns runs first, and the action waits for it") {
    constexpr std::uint64_t delay = 10'000'000;
    CostModel costs{};
    costs.expiry_ns = 50;
    costs.callback_ns = 200;
    const EngineConfig config{.hz = kHz, .costs = costs, .ksoftirqd_delay_ns = delay};
    // The run at `deadline` outlasts MAX_SOFTIRQ_TIME (see the ksoftirqd
    // test below) and wakes ksoftirqd; the same machine twice, the second
    // with actions around the time ksoftirqd gets the CPU.
    const auto machine = [](Engine<ClassicWheel>& engine) {
        const Jiffies deadline = engine.jiffies() + 100;
        for (int i = 0; i < 100'000; ++i) engine.arm(engine.create_timer(), deadline);
        engine.arm(engine.create_timer(), deadline + 8);
    };
    ClassicWheel first_queue(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt});
    Engine<ClassicWheel> first(first_queue, config);
    machine(first);
    first.run_ticks(107);
    const auto ksoftirqd_at = first.softirq().ksoftirqd_run_at();
    REQUIRE(ksoftirqd_at.has_value());
    const std::uint64_t k = *ksoftirqd_at;

    ClassicWheel queue(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt});
    Engine<ClassicWheel> engine(queue, config);
    machine(engine);
    ActionLog log;
    engine.set_workload(&log);
    engine.run_ticks(107);
    for (std::uint64_t i = 0; i < 3; ++i) engine.schedule_action(k - 1 + i, Action{.tag = i});
    engine.run_ticks(200);
    REQUIRE(log.seen.size() == 3);
    CHECK(log.seen[0].ns == k - 1);
    // ksoftirqd's run (an entry, a walked jiffy, an expiry) came first.
    CHECK(log.seen[1].ns > k);
    CHECK(log.seen[2].ns == log.seen[1].ns);
    CHECK(engine.metrics().actions_delayed == 2);
    CHECK(engine.metrics().softirq.runs_ksoftirqd == 1);
}

TEST_CASE("the ns histogram keeps exact extremes and percentiles within 12.5 %") {
    Log2Histogram h;
    CHECK(h.percentile(50) == 0);
    for (std::int64_t v = 1; v <= 1000; ++v) h.add(v * 1000);
    h.add(-5);
    CHECK(h.count() == 1001);
    CHECK(h.min() == -5);
    CHECK(h.max() == 1'000'000);
    CHECK(h.negative() == 1);
    CHECK(h.percentile(0) == -5);
    CHECK(h.percentile(100) == 1'000'000);
    const std::int64_t p50 = h.percentile(50); // true value 500'000 (rank 501 of 1001, one negative)
    CHECK(p50 >= 500'000);
    CHECK(p50 <= 562'500);
    for (std::uint64_t m : std::initializer_list<std::uint64_t>{0, 1, 15, 16, 17, 31, 32, 1000, 123456789, UINT64_MAX}) {
        const unsigned b = Log2Histogram::bucket_of(m);
        CHECK(b < Log2Histogram::kBuckets);
        CHECK(Log2Histogram::bucket_low(b) <= m);
        CHECK(Log2Histogram::bucket_high(b) >= m);
    }
    Log2Histogram extremes;
    extremes.add(INT64_MIN);
    extremes.add(INT64_MAX);
    CHECK(extremes.percentile(1) == INT64_MIN);
    CHECK(extremes.percentile(100) == INT64_MAX);
}

TEST_CASE("a softirq deferred to ksoftirqd runs after the ksoftirqd delay; ticks meanwhile leave it to ksoftirqd") {
    constexpr std::uint64_t delay = 10'000'000; // 2.5 ticks at HZ=250
    ClassicWheel queue(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt});
    // 250 ns per timer whatever the defaults are.
    CostModel costs{};
    costs.expiry_ns = 50;
    costs.callback_ns = 200;
    Engine<ClassicWheel> engine(queue, EngineConfig{.hz = kHz, .costs = costs, .ksoftirqd_delay_ns = delay});
    struct Watch final : Workload {
        TimerId late = kNoTimer;
        FireRecord record{};
        void on_fire(Sim&, const FireRecord& r) override {
            if (r.id == late) record = r;
        }
    } watch;
    engine.set_workload(&watch);
    const Jiffies deadline = engine.jiffies() + 100;
    // 100k timers x 250 ns = 25 ms: the run at `deadline` spans 6 ticks, the
    // classic tick raises on each, so the run ends past MAX_SOFTIRQ_TIME
    // with TIMER_SOFTIRQ pending and wakes ksoftirqd.
    for (int i = 0; i < 100'000; ++i) engine.arm(engine.create_timer(), deadline);
    watch.late = engine.create_timer();
    engine.arm(watch.late, deadline + 8); // due after the run ends, before ksoftirqd runs
    engine.run_ticks(200);

    const CpuMetrics m = engine.metrics();
    const std::uint64_t run_end = tick_time_ns(100, kHz) + m.max_softirq_ns;
    CHECK(m.max_expired_per_softirq == 100'000);
    CHECK(run_end > tick_time_ns(106, kHz));
    CHECK(run_end < tick_time_ns(107, kHz));
    CHECK(m.softirq.deferrals_by_time == 1);
    // Ticks 107 and 108 came while ksoftirqd was runnable: irq_exit() left
    // TIMER_SOFTIRQ to it (6.1 ksoftirqd_running()).
    CHECK(m.softirq.irq_exit_skipped == 2);
    CHECK(m.softirq.runs_ksoftirqd == 1);
    REQUIRE(watch.record.id == watch.late);
    CHECK(watch.record.fired_jiffies == deadline + 8);
    // It ran in ksoftirqd, one delay after the wakeup: entry cost, one walked
    // jiffy per missed tick, its expiry.
    CHECK(watch.record.fire_ns >= run_end + delay);
    CHECK(watch.record.fire_ns <= run_end + delay + 10'000);
    CHECK(watch.record.error_ns == static_cast<std::int64_t>(watch.record.fire_ns - tick_time_ns(108, kHz)));
}

TEST_CASE("NOHZ idle: the tick stops while idle, wakes on the grid, and the engine still adds no error") {
    // Sparse steps (up to 200 ms apart) and no periodic timers: the CPU is idle most of the time.
    const PredictionShape sparse{.periodic = 0, .max_gap_ns = 200'000'000};
    const std::uint64_t ticks = 600'000; // 40 min: the 20000 steps take ~33 min, then the timers drain
    auto check_idle = [&](const CpuMetrics& m) {
        CHECK(m.tick_stops > 100);
        CHECK(m.wakeups_by_timer > 100);
        CHECK(m.wakeups_by_action > 100);
        CHECK(m.ticks_skipped > m.ticks); // mostly asleep
        CHECK(m.max_jiffies_jump > 1);
    };
    SUBCASE("modern wheel") {
        check_idle(check_no_engine_error(ModernWheel(ModernWheel::Config{.hz = kHz}), true, sparse, ticks));
    }
    SUBCASE("classic wheel: catching up walks every missed jiffy") {
        const CpuMetrics m =
            check_no_engine_error(ClassicWheel(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt}), true, sparse,
                                  ticks);
        check_idle(m);
        CHECK(m.counters.jiffies_walked > m.ticks);
    }
    SUBCASE("heap") { check_idle(check_no_engine_error(HeapQueue(HeapQueue::Config{.hz = kHz}), true, sparse, ticks)); }
    SUBCASE("busy periodic timers keep the tick running, as without NOHZ") {
        const CpuMetrics m = check_no_engine_error(ModernWheel(ModernWheel::Config{.hz = kHz}), true);
        CHECK(m.ticks_skipped < m.ticks / 10);
    }
}

TEST_CASE("NOHZ idle: with no timer pending the tick stops for good until an action") {
    HeapQueue queue(HeapQueue::Config{.hz = kHz});
    Engine<HeapQueue> engine(queue, EngineConfig{.hz = kHz, .nohz_idle = true});
    const TimerId t = engine.create_timer();
    engine.run_until(1'000'000'000);
    CHECK(engine.tick_stopped());
    CHECK(engine.next_tick_ns() == UINT64_MAX);
    CHECK(engine.ticks() == 1); // the first tick found nothing to do and stopped
    // An action at 10.5 s: jiffies catches up to the grid, arms, sleeps until the expiry.
    const Jiffies start = engine.start_jiffies();
    engine.schedule_action(10'500'000'000, Action{.kind = Action::Kind::call});
    struct ArmOnCall final : Workload {
        TimerId timer = kNoTimer;
        FireRecord fired{};
        void on_action(Sim& sim, std::uint64_t) override { sim.arm(timer, sim.jiffies() + 100); }
        void on_fire(Sim&, const FireRecord& r) override { fired = r; }
    } workload;
    workload.timer = t;
    engine.set_workload(&workload);
    engine.run_until(20'000'000'000);
    CHECK(workload.fired.id == t);
    CHECK(workload.fired.requested == start + 2625 + 100); // 10.5 s = 2625 jiffies at HZ=250
    CHECK(workload.fired.fired_jiffies == workload.fired.requested);
    CHECK(workload.fired.fire_ns == tick_time_ns(2725, kHz) + CostModel{}.softirq_entry_ns + CostModel{}.expiry_ns);
    const CpuMetrics m = engine.metrics();
    CHECK(m.wakeups_by_action == 1);
    CHECK(m.wakeups_by_timer == 1);
    CHECK(m.ticks == 2);
    CHECK(engine.tick_stopped());
}

TEST_CASE("the tick grid index inverts the tick times") {
    for (unsigned hz : {100u, 250u, 300u, 1000u, 1024u}) {
        for (std::uint64_t n : {0ull, 1ull, 2ull, 299ull, 300ull, 1'080'000ull, 987'654'321ull}) {
            const std::uint64_t t = tick_time_ns(n, hz);
            CHECK(tick_index_at(t, hz) == n);
            CHECK(tick_index_at(tick_time_ns(n + 1, hz) - 1, hz) == n);
        }
    }
}

TEST_CASE("histograms and metrics of several CPUs merge: counts add, extremes are the extremes of all") {
    Log2Histogram a, b, empty;
    for (std::int64_t v : {5, 100, 3000}) a.add(v);
    for (std::int64_t v : {-7, 100, 1'000'000}) b.add(v);
    Log2Histogram both = a;
    both.merge(b);
    CHECK(both.count() == 6);
    CHECK(both.min() == -7);
    CHECK(both.max() == 1'000'000);
    CHECK(both.mean() == doctest::Approx((5 + 100 + 3000 - 7 + 100 + 1'000'000) / 6.0));
    CHECK(both.negative() == 1);
    Log2Histogram all;
    for (std::int64_t v : {5, 100, 3000, -7, 100, 1'000'000}) all.add(v);
    CHECK(both == all);
    Log2Histogram same = a;
    same.merge(empty);
    CHECK(same == a);
    empty.merge(a);
    CHECK(empty == a);

    ErrorHistogram x, y;
    x.add(0, 3);
    x.add(2);
    y.add(2, 4);
    y.add(-1);
    x.merge(y);
    CHECK(x.total() == 9);
    CHECK(x.counts().at(2) == 5);
    CHECK(x.min() == -1);

    CpuMetrics m, n;
    m.fired = 3;
    m.max_softirq_ns = 10;
    m.counters.peak_pending = 4;
    m.counters.expired = 3;
    m.softirq.max_passes_per_run = 1;
    n.fired = 2;
    n.max_softirq_ns = 7;
    n.counters.peak_pending = 9;
    n.counters.expired = 2;
    n.softirq.max_passes_per_run = 3;
    n.wakeups_by_remote = 1;
    m.merge(n);
    CHECK(m.fired == 5);
    CHECK(m.max_softirq_ns == 10);
    CHECK(m.counters.peak_pending == 9);
    CHECK(m.counters.expired == 5);
    CHECK(m.softirq.max_passes_per_run == 3);
    CHECK(m.wakeups_by_remote == 1);
}

TEST_CASE("series windows: run percentiles are nearest-rank over log2 buckets, capped at the window's max") {
    SeriesPoint p;
    CHECK(p.run_percentile(50) == 0); // no runs
    // 90 runs of 6 ns (exact below 16), 9 of 1000 ns, 1 of 40000 ns.
    for (int i = 0; i < 90; ++i) p.add_run(6);
    for (int i = 0; i < 9; ++i) p.add_run(1000);
    p.add_run(40000);
    p.max_softirq_ns = 40000;
    CHECK(p.runs() == 100);
    CHECK(p.run_buckets.size() == 3);
    CHECK(p.run_percentile(50) == 6);
    CHECK(p.run_percentile(90) == 6);
    // Rank 91..99: the 1000 ns bucket's upper bound, within 12.5 % above.
    const std::uint64_t p99 = p.run_percentile(99);
    CHECK(p99 >= 1000);
    CHECK(p99 <= 1125);
    CHECK(p.run_percentile(100) == 40000); // the bucket's bound is capped at max
}

TEST_CASE("series windows hold every softirq run, and their buckets add up to the run count") {
    for (const Design design : {Design::classic, Design::modern, Design::heap}) {
        MachineConfig m;
        m.hz = 250;
        m.ticks = 3000;
        m.cpus = 2;
        const WorkloadSpec spec{.name = "t", .description = "",
                                .factory = workload_list_factory("tcp-retransmit,socket-timeouts", GeneratorParams{},
                                                                 m.ticks, m.hz)};
        const RunResult r = run_machine(design, m, spec);
        REQUIRE(r.series.size() > 1);
        std::uint64_t runs = 0, max_ns = 0;
        for (const SeriesPoint& p : r.series) {
            runs += p.runs();
            max_ns = std::max(max_ns, p.max_softirq_ns);
            if (p.runs()) CHECK(p.run_percentile(50) <= p.run_percentile(99));
            if (p.runs()) CHECK(p.run_percentile(99) <= p.max_softirq_ns);
        }
        CHECK(runs == r.total.softirq_ns.count());
        CHECK(max_ns == r.total.max_softirq_ns);
    }
}
