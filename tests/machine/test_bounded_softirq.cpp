// The engine under --max-expiries-per-softirq (EngineConfig::
// max_expiries_per_softirq): a bounded softirq run leaves the rest of a burst
// for the next runs in the same order, turns one long run into many short
// ones, carries over in the queues' budgeted passes, and fires nothing early.
// The engine's unbounded runs: test_engine.cpp.
#include "sim/machine/engine.hpp"
#include "sim/machine/engine_run.hpp"
#include "tests/machine/burst_workload.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "workloads/generators/generator_catalog.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

using namespace timersim;
using test::BurstWorkload;

namespace {

constexpr unsigned kHz = 250;

// Arms `n` timers on one jiffy (100 ahead) and runs; records the fire order.
struct BurstRun {
    std::vector<FireRecord> fired;
    CpuMetrics metrics;
    Jiffies due = 0;
    std::vector<TimerId> ids;
};

template <class Q>
BurstRun bounded_burst(Q queue, std::uint32_t n, std::uint32_t bound,
                       const std::function<void(Engine<Q>&, BurstRun&)>& after_first_run = {}) {
    Engine<Q> engine(queue, EngineConfig{.hz = kHz, .costs = CostModel::zero(), .max_expiries_per_softirq = bound});
    struct Recorder final : Workload {
        BurstRun* run = nullptr;
        void on_fire(Sim&, const FireRecord& r) override { run->fired.push_back(r); }
    } recorder;
    BurstRun run;
    recorder.run = &run;
    engine.set_workload(&recorder);
    for (std::uint32_t i = 0; i < n; ++i) {
        run.ids.push_back(engine.create_timer());
        engine.arm(run.ids.back(), engine.jiffies() + 100);
    }
    run.due = engine.queue().placement(run.ids.front()).bucket_expiry;
    engine.run_ticks(run.due - engine.start_jiffies());
    if (after_first_run) after_first_run(engine, run);
    engine.run_ticks(400);
    run.metrics = engine.metrics();
    return run;
}

template <class Q>
void check_bounded_burst(const std::function<Q()>& make, bool raises_only_when_due) {
    constexpr std::uint32_t n = 1000, bound = 64, runs = (n + bound - 1) / bound;
    const BurstRun free = bounded_burst(make(), n, 0);
    const BurstRun bounded = bounded_burst(make(), n, bound);
    REQUIRE(free.fired.size() == n);
    REQUIRE(bounded.fired.size() == n); // nothing lost
    CHECK(free.metrics.max_expired_per_softirq == n);
    CHECK(bounded.metrics.max_expired_per_softirq == bound);
    CHECK(bounded.metrics.pending == 0);
    std::set<Jiffies> jiffies_seen;
    for (std::uint32_t k = 0; k < n; ++k) {
        // The same order as without the bound, B per run, one run per tick.
        CHECK(bounded.fired[k].id == free.fired[k].id);
        CHECK(bounded.fired[k].fired_jiffies == bounded.due + k / bound);
        jiffies_seen.insert(bounded.fired[k].fired_jiffies);
    }
    CHECK(jiffies_seen.size() == runs);
    if (raises_only_when_due) {
        // The tick raised TIMER_SOFTIRQ for the carry-over and nothing else.
        CHECK(bounded.metrics.softirq.runs_irq_exit == runs);
        CHECK(bounded.metrics.ticks_raised == runs);
    }

    // Cancel one carried-over timer and re-arm another after the first run.
    const TimerId cancelled = free.fired[bound + 3].id;
    const TimerId moved = free.fired[bound + 7].id;
    Jiffies moved_to = 0;
    const BurstRun changed = bounded_burst<Q>(make(), n, bound, [&](Engine<Q>& engine, BurstRun& run) {
        REQUIRE(run.fired.size() == bound);
        const std::size_t pending = engine.queue().pending();
        CHECK(pending == n - bound);
        CHECK(engine.cancel(cancelled));
        CHECK_FALSE(engine.cancel(cancelled));
        CHECK(engine.queue().pending() == pending - 1);
        CHECK(engine.arm(moved, engine.jiffies() + 200) == ArmOutcome::queued);
        moved_to = engine.queue().placement(moved).bucket_expiry;
    });
    REQUIRE(changed.fired.size() == n - 1);
    std::vector<TimerId> expected;
    for (const FireRecord& r : free.fired)
        if (r.id != cancelled && r.id != moved) expected.push_back(r.id);
    expected.push_back(moved);
    for (std::size_t k = 0; k < expected.size(); ++k) CHECK(changed.fired[k].id == expected[k]);
    CHECK(changed.fired.back().fired_jiffies == moved_to);
    CHECK(changed.metrics.pending == 0);
}

} // namespace

TEST_CASE("a bounded softirq leaves the rest of a burst for the next runs, in order") {
    SUBCASE("modern") {
        check_bounded_burst<ModernWheel>([] { return ModernWheel(ModernWheel::Config{.hz = kHz}); }, true);
    }
    SUBCASE("heap") { check_bounded_burst<HeapQueue>([] { return HeapQueue(HeapQueue::Config{.hz = kHz}); }, true); }
    SUBCASE("classic (raises every tick anyway)") {
        check_bounded_burst<ClassicWheel>(
            [] { return ClassicWheel(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt}); }, false);
    }
}

TEST_CASE("with costs, a bounded burst is many short softirq runs instead of one long one") {
    constexpr std::uint32_t n = 50'000, bound = 1'000;
    const CostModel costs{};
    auto run = [&](std::uint32_t b) {
        ModernWheel queue(ModernWheel::Config{.hz = kHz});
        Engine<ModernWheel> engine(queue, EngineConfig{.hz = kHz, .costs = costs, .max_expiries_per_softirq = b});
        BurstWorkload workload;
        engine.set_workload(&workload);
        for (std::uint32_t i = 0; i < n; ++i) engine.arm(engine.create_timer(), engine.jiffies() + 100);
        engine.run_ticks(400);
        CHECK(workload.fired == n);
        return engine.metrics();
    };
    const CpuMetrics one = run(0);
    const CpuMetrics bounded = run(bound);
    CHECK(one.max_expired_per_softirq == n);
    CHECK(bounded.max_expired_per_softirq == bound);
    CHECK(bounded.max_softirq_ns * 20 < one.max_softirq_ns);
    CHECK(bounded.softirq.runs_irq_exit + bounded.softirq.runs_ksoftirqd >= n / bound);
    // The same work, spread out: the last timer fires later than in one run.
    CHECK(bounded.error_ns.max() > one.error_ns.max());
}

TEST_CASE("queues: a budgeted pass stops after its budget, carries the rest over, and the next pass runs it first") {
    ModernWheel q(ModernWheel::Config{.hz = kHz});
    std::vector<TimerId> ids;
    for (int i = 0; i < 10; ++i) {
        ids.push_back(q.create());
        q.arm(ids.back(), q.jiffies() + 3);
    }
    q.set_jiffies(q.jiffies() + 10);
    std::vector<TimerId> order;
    auto rec = [&](const FiredTimer& f) { order.push_back(f.id); };
    REQUIRE(q.softirq_due());
    CHECK(q.run_softirq(rec, 4));
    CHECK(order.size() == 4);
    CHECK(q.carry_over());
    CHECK_FALSE(q.softirq_due()); // the kernel's meaning: next_expiry was recomputed
    CHECK(q.next_timer_interrupt() == q.jiffies()); // but it is due now
    CHECK(q.pending() == 6);
    // The carried-over timers are still pending: cancel works on them.
    const TimerId gone = ids[2]; // LIFO: the 8th to run
    CHECK(q.is_pending(gone));
    CHECK(q.cancel(gone));
    CHECK(q.pending() == 5);
    CHECK(q.run_softirq(rec, 3));
    CHECK(order.size() == 7);
    CHECK_FALSE(q.resume_softirq(rec, 3)); // two left, then nothing due
    CHECK(order.size() == 9);
    CHECK_FALSE(q.carry_over());
    CHECK(q.pending() == 0);
    CHECK(q.counters().softirq_runs == 2);
    for (std::size_t k = 0; k < order.size(); ++k) CHECK(order[k] != gone);
}

TEST_CASE("no design fires a timer early under any --max-expiries-per-softirq bound") {
    // The default comparison workload for a simulated minute: thousands of
    // expiries per burst, so small bounds leave carry-over for many ticks and
    // the generators re-arm carried-over timers meanwhile. The kernel's own
    // early firing (the clamp beyond the wheel's cutoff) needs delays of
    // days; none occur here.
    for (std::uint32_t bound : {1u, 20u, 100u}) {
        for (Design d : all_designs()) {
            CAPTURE(bound);
            CAPTURE(to_string(d));
            MachineConfig m;
            m.hz = kHz;
            m.ticks = 60 * kHz;
            m.max_expiries_per_softirq = bound;
            const WorkloadSpec spec{.name = "default", .description = "",
                                    .factory = workload_list_factory("tcp-retransmit,socket-timeouts",
                                                                     GeneratorParams{}, m.ticks, m.hz)};
            const RunResult r = run_machine(d, m, spec);
            CHECK(r.total.fired > 10000);
            CHECK(r.total.early == 0);
            CHECK(r.total.error_jiffies.min() >= 0);
        }
    }
}
