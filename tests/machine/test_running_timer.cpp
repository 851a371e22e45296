// The timer whose callback is about to run (6.1 base->running_timer): the
// softirq has taken it off its base and dropped the lock for the callback
// (expire_timers()); another CPU's mod_timer() in between queues it again on
// the same base, for its new expiry, and the callback that follows is the
// old arming's. Also the classic wheel's slack when another CPU moves a
// timer, and add_timer_on's lack of it.
#include "sim/machine/engine.hpp"
#include "tests/machine/multi_cpu_fixture.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <span>
#include <vector>

using namespace timersim;
using test::Call;
using test::call_on;
using test::kHz;
using test::make_queues;

TEST_CASE("the classic wheel moves a timer with its slack applied; add_timer_on has none") {
    std::vector<ClassicWheel> queues;
    for (int i = 0; i < 2; ++i) queues.push_back(ClassicWheel(ClassicWheel::Config{.hz = kHz}));
    Engine<ClassicWheel> engine(std::span<ClassicWheel>(queues), EngineConfig{.hz = kHz, .costs = CostModel::zero()});
    const TimerId t = engine.create_timer();
    const TimerId pinned = engine.create_timer();
    const Jiffies j0 = engine.jiffies();
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        if (tag == 1) sim.arm(t, j0 + 10000);
        if (tag == 2) sim.arm_on(pinned, j0 + 10000, 0);
    };
    engine.set_workload(&w);
    engine.arm(t, j0 + 5000);
    engine.schedule_action(1'000'000, call_on(1, 1));
    engine.schedule_action(1'000'000, call_on(1, 2));
    engine.run_until(1'000'000);
    CHECK(engine.timer_cpu(t) == 1);
    const Placement p = engine.placement(t);
    CHECK(p.pending);
    CHECK(p.expires == classic::apply_slack(j0 + 10000, engine.jiffies(), -1));
    CHECK(p.expires != j0 + 10000);
    CHECK(engine.timer_cpu(pinned) == 0);
    CHECK(engine.placement(pinned).expires == j0 + 10000);
}

TEST_CASE("a timer whose callback is about to run stays on its CPU when another CPU re-arms it") {
    // CPU 0 expires a burst at tick 10; each expiry costs 1 ms, so the
    // callback of the last timer runs well after the tick. CPU 1 re-arms that
    // timer after it was detached and before its callback ran.
    CostModel costs = CostModel::zero();
    costs.expiry_ns = 1'000'000;
    std::vector<HeapQueue> queues = make_queues<HeapQueue>(2);
    Engine<HeapQueue> engine(std::span<HeapQueue>(queues), EngineConfig{.hz = 1000, .costs = costs});
    const Jiffies j0 = engine.jiffies();
    std::vector<TimerId> ids;
    for (int i = 0; i < 3; ++i) {
        ids.push_back(engine.create_timer());
        engine.arm(ids.back(), j0 + 10);
    }
    const TimerId last = ids.back();
    Call w;
    w.action = [&](Sim& sim, std::uint64_t) { sim.arm(last, j0 + 20); };
    engine.set_workload(&w);
    // At 10 ms the softirq starts; the third expiry is detached at 12 ms
    // and its callback runs at 13 ms (the heap runs in arm order).
    engine.schedule_action(12'500'000, call_on(1));
    engine.run_ticks(30);
    CHECK(engine.timer_cpu(last) == 0);
    REQUIRE(w.fired.size() == 4);
    CHECK(w.fired[2].id == last);
    CHECK(w.fired[2].fire_ns == 13'000'000);
    // Re-armed before its callback ran: the callback is the old arming's,
    // on time for what that asked (not 10 jiffies early).
    CHECK(w.fired[2].requested == j0 + 10);
    CHECK(w.fired[3].id == last);
    CHECK(w.fired[3].cpu == 0);
    // Tick 20's softirq reaches it after its 1 ms expiry cost, with tick 21.
    CHECK(w.fired[3].fire_ns == 21'000'000);
    CHECK(w.fired[3].fired_jiffies == j0 + 21);
    CHECK(engine.metrics(1).actions_delayed == 0);
}

TEST_CASE("a timer armed again by another CPU between its detach and its callback fires for what it asked before") {
    // CPU 1's softirq takes the timer off at tick 10 and runs its callback
    // an expiry's cost later (6.1 expire_timers() detaches, then drops the
    // base lock for the callback). CPU 0 arms it again in between: it stays
    // on CPU 1's base (running_timer) for its new expiry, and the fire that
    // follows is the old arming's: on time, not 90 jiffies early.
    CostModel costs = CostModel::zero();
    costs.expiry_ns = 1'000'000;
    std::vector<ModernWheel> queues = make_queues<ModernWheel>(2);
    Engine<ModernWheel> engine(std::span<ModernWheel>(queues), EngineConfig{.hz = kHz, .costs = costs});
    const Jiffies j0 = engine.jiffies();
    const TimerId t = engine.create_timer();
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        if (tag == 1) sim.arm(t, j0 + 9); // on CPU 1: level 0, runs at tick 10
        if (tag == 2) sim.arm(t, j0 + 100);
    };
    engine.set_workload(&w);
    engine.schedule_action(tick_time_ns(1, kHz), call_on(1, 1));
    engine.schedule_action(tick_time_ns(10, kHz) + 500'000, call_on(0, 2)); // after the detach, before the callback
    engine.run_ticks(50);
    REQUIRE(w.fired.size() == 1);
    CHECK(w.fired[0].cpu == 1);
    CHECK(w.fired[0].fired_jiffies == j0 + 10);
    CHECK(w.fired[0].requested == j0 + 9);
    CHECK(w.fired[0].fire_ns > tick_time_ns(10, kHz) + 500'000);
    CHECK(engine.metrics(1).early == 0);
    CHECK(engine.placement(t).pending); // pending again, for its new expiry
    engine.run_ticks(120);
    REQUIRE(w.fired.size() == 2);
    CHECK(w.fired[1].requested == j0 + 100);
}
