// MachineStepper (step --cpus N): the engine's machine one tick at a time.
// Hand-computed cases of the 6.9+ pull model on 2 CPUs at HZ=1000: a
// global timer armed on CPU 1 for 20 jiffies, due at tick 21 (level 0; 6.1
// calc_index() rounds an expiry up by its level's granularity, so that no
// timer fires early). With NOHZ idle CPU 1 goes idle at tick 0 with no
// local timer (no wakeup); CPU 0, the last to go idle (at tick 1), wakes at
// tick 21 for the hierarchy's first event and expires it remotely. Without NOHZ CPU 1 fires it itself; pinned (its
// local base) CPU 1 wakes for it itself.
#include "sim/machine/machine_stepper.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

using namespace timersim;

namespace {

constexpr Jiffies kStart = 1000;

StepWorkload timers(std::vector<Jiffies> timeouts, std::vector<TimeoutPlace> places) {
    StepWorkload w;
    w.timeouts = std::move(timeouts);
    w.places = std::move(places);
    for (std::size_t i = 0; i < w.timeouts.size(); ++i) w.texts.push_back("t");
    return w;
}

MachineStepConfig two_cpus(bool nohz) {
    return {.hz = 1000, .start_jiffies = kStart, .cpus = 2, .numa_nodes = 1, .nohz_idle = nohz};
}

struct Fire {
    std::uint64_t tick;
    unsigned cpu;
    std::optional<unsigned> remote_for;
    bool operator==(const Fire&) const = default;
};

std::vector<Fire> fires(MachineStepper& m, std::uint64_t ticks) {
    std::vector<Fire> out;
    for (std::uint64_t t = 0; t < ticks; ++t) {
        const std::vector<CpuTick> frame = m.step();
        for (unsigned c = 0; c < frame.size(); ++c)
            for (const Fired& f : frame[c].report.fired) out.push_back({frame[c].report.tick, c, f.remote_for});
    }
    return out;
}

} // namespace

TEST_CASE("a global timer of an idle CPU is expired by the migrator, on its jiffy") {
    MachineStepper m(two_cpus(true), timers({20}, {{.cpu = 1}}));
    const std::vector<CpuTick> start = m.start_frame();
    REQUIRE(start.size() == 2);
    REQUIRE(start[1].report.armed.size() == 1);
    CHECK(start[0].report.armed.empty());
    CHECK(start[1].pending[Modern69Wheel::base_global] == 1);
    CHECK(start[1].pending[Modern69Wheel::base_local] == 0);
    // CPU 1 went idle right after its arm: its global timer is the hierarchy's.
    CHECK(start[1].idle);
    CHECK_FALSE(start[1].wakeup);
    CHECK_FALSE(start[0].idle);

    const std::vector<CpuTick> tick1 = m.step();
    CHECK(tick1[0].ticked);
    CHECK_FALSE(tick1[1].ticked);
    // CPU 0, the last to go idle, wakes for CPU 1's global timer.
    CHECK(tick1[0].idle);
    CHECK(tick1[0].wakeup == kStart + 21);

    for (int t = 2; t < 21; ++t) {
        const std::vector<CpuTick> f = m.step();
        CHECK_FALSE(f[0].ticked);
        CHECK_FALSE(f[1].ticked);
    }
    const std::vector<CpuTick> tick21 = m.step();
    CHECK(tick21[0].report.tick == 21);
    CHECK(tick21[0].woke);
    CHECK(tick21[0].report.softirq);
    CHECK_FALSE(tick21[1].ticked);
    REQUIRE(tick21[0].report.fired.size() == 1);
    CHECK(tick21[0].report.fired[0].remote_for == 1u);
    CHECK(tick21[0].report.fired[0].requested == kStart + 20);
    CHECK(tick21[1].report.fired.empty());
    CHECK(tick21[1].pending[Modern69Wheel::base_global] == 0);
}

TEST_CASE("without NOHZ every CPU ticks and fires its own timers") {
    MachineStepper m(two_cpus(false), timers({20}, {{.cpu = 1}}));
    CHECK(fires(m, 25) == std::vector<Fire>{{21, 1, std::nullopt}});
    const std::vector<CpuTick> f = m.step();
    CHECK(f[0].ticked);
    CHECK(f[1].ticked);
    CHECK_FALSE(f[1].idle);
}

// CPU 0 arms first (actions at one time go by CPU) and goes idle while CPU 1
// ticks; CPU 1, pinned timer armed, is the last to go idle: it wakes at 21
// for its own timer, then at 31 for CPU 0's global one, as the migrator.
TEST_CASE("a pinned timer of an idle CPU wakes that CPU, the migrator of the other") {
    MachineStepper m(two_cpus(true), timers({20, 30}, {{.cpu = 1, .pinned = true}, {.cpu = 0}}));
    const std::vector<CpuTick> start = m.start_frame();
    CHECK(start[1].pending[Modern69Wheel::base_local] == 1);
    CHECK(start[1].wakeup == kStart + 21);
    CHECK(fires(m, 35) == std::vector<Fire>{{21, 1, std::nullopt}, {31, 1, 0u}});
}

TEST_CASE("silent ticks (--from) leave the machine where stepping them does") {
    const StepWorkload w = timers({5, 20, 40}, {{.cpu = 1}, {.cpu = 1}, {.cpu = 0, .pinned = true}});
    MachineStepper stepped(two_cpus(true), w), skipped(two_cpus(true), w);
    fires(stepped, 10);
    skipped.skip(10);
    CHECK(fires(stepped, 40) == fires(skipped, 40));
}

TEST_CASE("a timer placed off the machine is refused") {
    CHECK_THROWS_AS(MachineStepper(two_cpus(true), timers({20}, {{.cpu = 2}})), std::invalid_argument);
}
