// The 6.9+ pull model on the simulated machine with NOHZ idle (sim/machine/
// engine_ticks_impl.hpp, docs/machine.md "Linux 6.9 and later"): an idle
// CPU hands its global timers to the migration hierarchy and wakes for its
// local ones only; a migrator expires them, above the first level of
// groups too; the last CPU to go idle wakes for the hierarchy's first event.
// modern (4.8-6.8, the push model) on the same runs: every CPU wakes for
// its own timers.
#include "sim/machine/engine.hpp"
#include "tests/machine/multi_cpu_fixture.hpp"
#include "wheel/kernel/modern69_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <vector>

using namespace timersim;

namespace {

using test::Call;
using test::call_on;
using test::kHz;
using test::make_queues;

constexpr std::uint64_t kSecond = 1'000'000'000;

// On `cpus` CPUs: from 0.5 s CPU 0 keeps its tick with a pinned timer
// re-armed at the current jiffy by its own callback (due at the next tick:
// 6.1 calc_index() puts expires E at level 0 in bucket E + 1) until
// `busy_for` jiffies after the start; at 1 s, CPU `arming` arms one plain
// mod_timer() timer 100 jiffies ahead, then idles. Returns that timer's
// fire and every CPU's metrics.
template <class Q>
struct Run {
    FireRecord fire{};
    std::vector<CpuMetrics> metrics;
};

template <class Q>
Run<Q> run(unsigned cpus, unsigned arming, Jiffies busy_for) {
    std::vector<Q> queues = make_queues<Q>(cpus);
    Engine<Q> engine(std::span<Q>(queues), EngineConfig{.hz = kHz, .costs = CostModel::zero(), .nohz_idle = true});
    const TimerId keep = engine.create_timer();
    const TimerId global = engine.create_timer();
    const Jiffies j0 = engine.jiffies();
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        if (tag == 0) sim.arm(keep, sim.jiffies(), ArmCall::mod_timer_pinned);
        if (tag == 1) sim.arm(global, sim.jiffies() + 100);
    };
    w.fire = [&](Sim& sim, const FireRecord& r) {
        if (r.id == keep && time_before(sim.jiffies(), j0 + busy_for))
            sim.arm(keep, sim.jiffies(), ArmCall::mod_timer_pinned);
    };
    engine.set_workload(&w);
    engine.schedule_action(kSecond / 2, call_on(0, 0));
    engine.schedule_action(kSecond, call_on(arming, 1));
    engine.run_until(3 * kSecond);
    Run<Q> r;
    const FireRecord* f = w.find(global);
    REQUIRE(f != nullptr);
    r.fire = *f;
    for (unsigned c = 0; c < cpus; ++c) r.metrics.push_back(engine.metrics(c));
    return r;
}

} // namespace

TEST_CASE("a busy CPU expires an idle CPU's global timer from the group above: the idle CPU does not wake") {
    // 16 CPUs: groups 0-7 and 8-15 at level 0, one group above. CPU 0's
    // tick runs throughout; CPUs 8-15 are all idle, so their group has no
    // migrator, and CPU 0 runs CPU 12's global base as the level-1 migrator.
    const Run<Modern69Wheel> pull = run<Modern69Wheel>(16, 12, 1000);
    CHECK(pull.fire.cpu == 0);
    CHECK(pull.metrics[12].wakeups_by_timer == 0);
    // The push model: CPU 12 wakes for its own timer, on the same jiffy
    // (the same wheel's bucket: the migrator's tick runs every jiffy).
    const Run<ModernWheel> push = run<ModernWheel>(16, 12, 1000);
    CHECK(push.fire.cpu == 12);
    CHECK(push.metrics[12].wakeups_by_timer == 1);
    CHECK(pull.fire.fired_jiffies == push.fire.fired_jiffies);
    CHECK(time_after(pull.fire.fired_jiffies, pull.fire.requested - 1));
}

TEST_CASE("the last CPU to go idle wakes for the hierarchy's first event and expires it remotely") {
    // 2 CPUs: CPU 1 arms at 1 s and idles while CPU 0's tick runs; CPU 0
    // stops re-arming 20 jiffies after that and goes idle last, taking
    // CPU 1's global event with it.
    const Jiffies busy_for = kHz + 20;
    const Run<Modern69Wheel> pull = run<Modern69Wheel>(2, 1, busy_for);
    CHECK(pull.fire.cpu == 0);
    CHECK(pull.metrics[1].wakeups_by_timer == 0);
    CHECK(pull.metrics[0].wakeups_by_timer == 1); // its tick stopped once: woken for CPU 1's event
    const Run<ModernWheel> push = run<ModernWheel>(2, 1, busy_for);
    CHECK(push.fire.cpu == 1);
    CHECK(push.metrics[1].wakeups_by_timer == 1);
    CHECK(push.metrics[0].wakeups_by_timer == 0);
    CHECK(pull.fire.fired_jiffies == push.fire.fired_jiffies);
}

TEST_CASE("an idle CPU that went idle last with its own global timer still wakes for it") {
    // Nothing else runs: CPU 3 is the last to go idle, so it keeps its
    // global event and wakes for it, as before 6.9.
    const Run<Modern69Wheel> pull = run<Modern69Wheel>(4, 3, 0);
    CHECK(pull.fire.cpu == 3);
    CHECK(pull.metrics[3].wakeups_by_timer == 1);
    CHECK(pull.fire.fired_jiffies == run<ModernWheel>(4, 3, 0).fire.fired_jiffies);
}
