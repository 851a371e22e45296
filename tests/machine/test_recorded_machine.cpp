// The machine as recorded (EngineConfig::recorded, recorded_machine.hpp):
// a CPU raises TIMER_SOFTIRQ at the jiffies the recording ran it, at the
// run's own time in the jiffy; a design's timer that should wake the CPU
// waits for a recorded run up to the recording's longest wake delay, and
// without one the CPU wakes for it after the median delay, late in that
// jiffy and never where the recording shows the CPU held; deferrable timers
// wait for a run. Every expected jiffy
// below follows from those rules and the 6.1 bucket rule (a level-0 timer
// at expires E runs at E + 1: calc_index() rounds up by the granularity),
// not from a run.
#include "sim/machine/engine.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern69_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include "tests/xorshift_draw.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;
constexpr Jiffies kJ0 = 0xfffedb08; // INITIAL_JIFFIES at HZ=250

struct Recorder final : Workload {
    std::vector<FireRecord> fired;
    std::uint64_t long_callback_ns = 0; // the first fire's callback, if set
    void on_fire(Sim&, const FireRecord& r) override { fired.push_back(r); }
    std::optional<std::uint64_t> callback_cost_ns(const FireRecord&) const override {
        if (fired.size() == 1 && long_callback_ns) return long_callback_ns;
        return std::nullopt;
    }
};

// A fire on `cpu` of the bucket whose clock was `baseclk`.
KernelFire fire(std::uint64_t timer, Jiffies now, Jiffies baseclk, std::uint32_t cpu = 0, bool deferrable = false) {
    KernelFire f;
    f.timer = timer;
    f.now = now;
    f.cpu = cpu;
    f.deferrable = deferrable;
    f.set_baseclk(baseclk);
    return f;
}

// Recorded runs on CPU 0 at J0+20 and J0+50; wake delays seen: 0, 1, 3
// (window 3, median 1).
std::shared_ptr<const RecordedMachine> recording() {
    KernelFires fires = {
        fire(1, kJ0 + 20, kJ0 + 20),
        fire(2, kJ0 + 20, kJ0 + 19),
        fire(3, kJ0 + 50, kJ0 + 47),
        // A deferrable timer's lateness is not a wake delay.
        fire(4, kJ0 + 50, kJ0 + 10, 0, true),
    };
    return std::make_shared<const RecordedMachine>(RecordedMachine::from(fires));
}

// Timers armed at `arm_at` (0: at the start) with `expires`, each
// cancelled at `cancel_at` (0: never), replayed on `recording`: the jiffies
// they fired at.
struct Timed {
    Jiffies expires;
    bool deferrable = false;
    std::uint64_t cancel_at = 0;
    std::uint64_t arm_at = 0;
};
template <class Q>
std::vector<Jiffies> fire_jiffies(Q queue, std::shared_ptr<const RecordedMachine> recording,
                                  const std::vector<Timed>& timers, std::uint64_t first_callback_ns = 0) {
    EngineConfig config{.hz = kHz};
    config.recorded = std::move(recording);
    Engine<Q> engine(queue, config);
    Recorder rec;
    rec.long_callback_ns = first_callback_ns;
    engine.set_workload(&rec);
    for (const Timed& t : timers) {
        const TimerId id = engine.create_timer(TimerFlags{.deferrable = t.deferrable});
        if (t.arm_at)
            engine.schedule_action(t.arm_at, Action{.kind = Action::Kind::arm, .timer = id, .expires = t.expires});
        else
            engine.arm(id, t.expires);
        if (t.cancel_at) engine.schedule_action(t.cancel_at, Action{.kind = Action::Kind::cancel, .timer = id});
    }
    engine.run_until(tick_time_ns(100, kHz));
    std::vector<Jiffies> out;
    for (const FireRecord& r : rec.fired) out.push_back(r.fired_jiffies);
    return out;
}

} // namespace

TEST_CASE("the recording's runs, window and median delay come from non-deferrable expiries alone") {
    const auto m = recording();
    REQUIRE(m->runs.size() == 1);
    // Without run times each run is at its tick's (kNoTime).
    CHECK(m->runs[0] == std::vector<RecordedMachine::Run>{{kJ0 + 20}, {kJ0 + 50}});
    CHECK(m->wake_window[0] == 3);
    CHECK(m->wake_delay[0] == 1);
    REQUIRE(m->run_at(0, kJ0 + 20));
    CHECK(m->run_at(0, kJ0 + 20)->jiffy == kJ0 + 20);
    CHECK_FALSE(m->run_at(0, kJ0 + 21));
    CHECK_FALSE(m->run_at(1, kJ0 + 20));
    CHECK(m->runs_within(0, kJ0 + 48, kJ0 + 50));
    CHECK_FALSE(m->runs_within(0, kJ0 + 21, kJ0 + 49));
}

// The runs and delays are counted, not kept a fire each: on a random
// stream (CPUs' lines interleaved, runs revisited, delays up to past the
// counts' small range) they are what sorting every fire gives.
TEST_CASE("the recording's runs and delays on a random stream are those of every fire sorted") {
    testing::XorshiftDraw draw{0x9E3779B97F4A7C15ull};
    for (int round = 0; round < 20; ++round) {
        KernelFires fires;
        std::vector<std::vector<Jiffies>> runs(3), delays(3);
        const int n = 1 + static_cast<int>(draw(400));
        for (int i = 0; i < n; ++i) {
            const auto cpu = static_cast<std::uint32_t>(draw(3));
            const Jiffies now = kJ0 + draw(i % 7 == 0 ? 10000 : 60);
            const Jiffies delay = draw(4) == 0 ? draw(9000) : draw(3);
            const bool deferrable = draw(5) == 0;
            fires.push_back(fire(i, now, now - delay, cpu, deferrable));
            runs[cpu].push_back(now);
            if (!deferrable) delays[cpu].push_back(delay);
        }
        const RecordedMachine m = RecordedMachine::from(fires);
        for (std::size_t c = 0; c < m.runs.size(); ++c) {
            std::sort(runs[c].begin(), runs[c].end());
            runs[c].erase(std::unique(runs[c].begin(), runs[c].end()), runs[c].end());
            std::vector<Jiffies> got;
            for (const RecordedMachine::Run& r : m.runs[c]) got.push_back(r.jiffy);
            CHECK(got == runs[c]);
            std::sort(delays[c].begin(), delays[c].end());
            CHECK(m.wake_window[c] == (delays[c].empty() ? 0 : delays[c].back()));
            CHECK(m.wake_delay[c] == (delays[c].empty() ? 0 : delays[c][(delays[c].size() - 1) / 2]));
        }
    }
}

TEST_CASE("a due timer fires at the recorded run within the wake window, else at its own wake") {
    // modern: expires J0+18 runs at J0+19 (bucket), the recorded run J0+20
    // is within 3: fires there. Expires J0+30 runs at J0+31: no run in
    // J0+31..J0+34, so the CPU wakes for it at J0+31+1.
    CHECK(fire_jiffies(ModernWheel(ModernWheel::Config{.hz = kHz}), recording(), {{kJ0 + 18}, {kJ0 + 30}}) ==
          std::vector<Jiffies>{kJ0 + 20, kJ0 + 32});
    // classic (4.x: due at expires itself): J0+18 waits for J0+20; J0+30
    // wakes at J0+31.
    CHECK(fire_jiffies(ClassicWheel(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt}), recording(),
                       {{kJ0 + 18}, {kJ0 + 30}}) == std::vector<Jiffies>{kJ0 + 20, kJ0 + 31});
}

TEST_CASE("a due tick without a recorded run asks as the kernel's idle entry does: a stale next_expiry is refreshed") {
    // modern: a timer armed for J0+5 (bucket J0+6) and cancelled at J0+3
    // leaves next_expiry stale at J0+6. At J0+6 the CPU, with no recorded
    // run, asks get_next_timer_interrupt(): next_expiry is searched again
    // (nothing pending) and clk moves to J0+6. An arm at J0+10 for J0+70 is
    // then forwarded to clk J0+10 (delta 60, level 0): bucket J0+71, no run
    // within 3, so the CPU wakes for it at J0+72. Had the stale J0+6 been
    // left, forward_timer_base() would stop clk there (delta 64, level 1:
    // bucket J0+72, fired at J0+73).
    CHECK(fire_jiffies(ModernWheel(ModernWheel::Config{.hz = kHz}), recording(),
                       {{kJ0 + 5, false, tick_time_ns(3, kHz)},
                        {kJ0 + 70, false, 0, tick_time_ns(10, kHz) + 1'000}}) == std::vector<Jiffies>{kJ0 + 72});
}

TEST_CASE("a callback that runs past ticks: the run goes on at the jiffies it moved to, deferrable base included") {
    // The run at J0+20 fires a timer (expires J0+18) whose callback takes
    // 10 ms: jiffies moves to J0+22 meanwhile. A deferrable timer due at
    // J0+21 (expires J0+20) fires in that run, at J0+22, as 6.1
    // __run_timers() reads jiffies at each turn and run_timer_softirq() runs
    // the deferrable base after the standard one, rather than waiting for
    // the next recorded run (J0+50).
    CHECK(fire_jiffies(ModernWheel(ModernWheel::Config{.hz = kHz}), recording(), {{kJ0 + 18}, {kJ0 + 20, true}},
                       10'000'000) == std::vector<Jiffies>{kJ0 + 20, kJ0 + 22});
    // With a short callback it waits for J0+50.
    CHECK(fire_jiffies(ModernWheel(ModernWheel::Config{.hz = kHz}), recording(), {{kJ0 + 18}, {kJ0 + 20, true}}) ==
          std::vector<Jiffies>{kJ0 + 20, kJ0 + 50});
}

TEST_CASE("a deferrable timer never wakes the CPU: it waits for the next recorded run") {
    // Due at J0+31 (modern bucket), no wake of its own: the run at J0+50.
    CHECK(fire_jiffies(ModernWheel(ModernWheel::Config{.hz = kHz}), recording(), {{kJ0 + 30, true}}) ==
          std::vector<Jiffies>{kJ0 + 50});
}

namespace {

// One CPU, a recording whose only run is at J0+20, 2 ms into that jiffy;
// `held`: a timer of the kernel's own due at J0+31 and cancelled unfired in
// J0+34, so CPU 0 ran no timer softirq in J0+31..J0+33.
std::vector<Jiffies> fires_on_timeline(const std::vector<Timed>& timers, bool held) {
    KernelFires fires = {fire(1, kJ0 + 20, kJ0 + 19), fire(2, kJ0 + 50, kJ0 + 47)};
    const std::vector<RecordedRunTime> times = {{0, kJ0 + 20, tick_time_ns(20, kHz) + 2'000'000}};
    const KernelClock clock({{0, kJ0}}, kHz);
    std::vector<KernelUnfired> unfired;
    if (held) unfired.push_back({0, kJ0 + 31, tick_time_ns(34, kHz) + 1'000'000});
    return fire_jiffies(ModernWheel(ModernWheel::Config{.hz = kHz}),
                        std::make_shared<const RecordedMachine>(RecordedMachine::from(fires, times, unfired, &clock)),
                        timers);
}

} // namespace

TEST_CASE("a recorded run comes at its own time in the jiffy: a task's cancel traced before it wins") {
    // Both due at J0+19 (expires J0+18), waiting for the run at J0+20, 2 ms
    // into it: the one cancelled 1 ms into J0+20 never fires; the one
    // cancelled 3 ms in had fired.
    const std::uint64_t j20 = tick_time_ns(20, kHz);
    CHECK(fires_on_timeline({{kJ0 + 18, false, j20 + 1'000'000}, {kJ0 + 18, false, j20 + 3'000'000}}, false) ==
          std::vector<Jiffies>{kJ0 + 20});
}

TEST_CASE("a design's own wake comes late in its jiffy, after the tasks traced there") {
    // Due at J0+31, no run within 3: the CPU wakes for it in J0+32, after
    // a cancel 3 ms into that jiffy; without the cancel it fires there.
    CHECK(fires_on_timeline({{kJ0 + 30, false, tick_time_ns(32, kHz) + 3'000'000}}, false).empty());
    CHECK(fires_on_timeline({{kJ0 + 30}}, false) == std::vector<Jiffies>{kJ0 + 32});
}

TEST_CASE("no own wake where the recording shows the CPU held") {
    // Held J0+31..J0+33: the wake due in J0+32 waits for J0+34.
    CHECK(fires_on_timeline({{kJ0 + 30}}, true) == std::vector<Jiffies>{kJ0 + 34});
}

namespace {

// 6.9+: global timers, each armed at `at` on `cpu` for `expires`, replayed
// on two CPUs of modern-6.9 on `recording`: their fires, in order.
struct Arm69 {
    std::uint64_t at;
    std::uint32_t cpu;
    Jiffies expires;
};
std::vector<FireRecord> fires_69(RecordedMachine recording, const std::vector<Arm69>& arms) {
    EngineConfig config{.hz = kHz};
    config.recorded = std::make_shared<const RecordedMachine>(std::move(recording));
    std::vector<Modern69Wheel> queues(2, Modern69Wheel(Modern69Wheel::Config{.hz = kHz}));
    Engine<Modern69Wheel> engine(std::span<Modern69Wheel>(queues), config);
    Recorder rec;
    engine.set_workload(&rec);
    for (const Arm69& a : arms)
        engine.schedule_action(a.at, Action{.kind = Action::Kind::arm, .cpu = a.cpu, .timer = engine.create_timer(),
                                            .expires = a.expires});
    engine.run_until(tick_time_ns(100, kHz));
    return rec.fired;
}

} // namespace

TEST_CASE("a wait for a recorded run ends when the timer goes otherwise: the next one waits from its own jiffy") {
    // 6.9+, two CPUs. CPU 1 ran its softirq at J0+20 and J0+50 (window 3,
    // delay 1); at J0+31 CPU 0, the migrator, ran CPU 1's global base. A
    // global timer armed on CPU 1 for J0+30 (bucket J0+31) is due there at
    // J0+31 and expired by CPU 0 then. Another, armed on CPU 1 in J0+31 for
    // J0+47 (bucket J0+48), finds CPU 1's run at J0+50 within the window
    // from J0+48: it fires there, not at a wake of CPU 1's own at J0+48 as
    // if it had been waiting since J0+31.
    const KernelFires fires = {fire(1, kJ0 + 20, kJ0 + 19, 1), fire(2, kJ0 + 50, kJ0 + 47, 1),
                                           fire(3, kJ0 + 31, kJ0 + 31, 0)};
    const std::vector<KernelRemoteRun> remote = {{.migrator = 0, .cpu = 1, .now = kJ0 + 31}};
    const std::vector<FireRecord> fired = fires_69(RecordedMachine::from(fires, {}, {}, nullptr, remote),
                                                   {{1'000, 1, kJ0 + 30}, {tick_time_ns(31, kHz) + 2'000'000, 1, kJ0 + 47}});
    REQUIRE(fired.size() == 2);
    CHECK((fired[0].expires == kJ0 + 30 && fired[0].fired_jiffies == kJ0 + 31 && fired[0].cpu == 0));
    CHECK((fired[1].expires == kJ0 + 47 && fired[1].fired_jiffies == kJ0 + 50 && fired[1].cpu == 1));
}

TEST_CASE("6.9+: an idle CPU's global timer waits for the migrator as long as the recording's migrators were late") {
    // CPU 1 ran its softirq at J0+20 and J0+50 (window 3, delay 1). CPU 0
    // ran CPU 1's global base at J0+36 and fired a timer due at J0+31
    // there: 5 jiffies late, CPU 1's remote window. A global timer armed on
    // CPU 1 for J0+30 (bucket J0+31) waits for that run and fires on CPU 0
    // at J0+36; with CPU 1's own window of 3 alone, CPU 1 would have woken
    // for it itself at J0+32.
    const KernelFires fires = {fire(1, kJ0 + 20, kJ0 + 19, 1), fire(2, kJ0 + 50, kJ0 + 47, 1),
                                           fire(3, kJ0 + 36, kJ0 + 31, 0).set_remote_of(1)};
    const std::vector<KernelRemoteRun> remote = {{.migrator = 0, .cpu = 1, .now = kJ0 + 36}};
    RecordedMachine recording = RecordedMachine::from(fires, {}, {}, nullptr, remote);
    REQUIRE(recording.remote_wake_window_of(1) == 5);
    const std::vector<FireRecord> fired = fires_69(std::move(recording), {{1'000, 1, kJ0 + 30}});
    REQUIRE(fired.size() == 1);
    CHECK(fired[0].fired_jiffies == kJ0 + 36);
    CHECK(fired[0].cpu == 0);
}

TEST_CASE("6.9+: a remote run that the trace shows after the idle CPU's own run in that jiffy comes after it") {
    // CPU 0's global timer, due at J0+31 (bucket), and two CPUs that both
    // ran CPU 0's global base in J0+31: CPU 0 itself, 2 ms into the jiffy,
    // and CPU 1 as the migrator (its tmigr_handle_remote_cpu: cpu=0), which
    // fired nothing. The trace's order decides who fires it: CPU 1's
    // softirq began 0.1 ms after CPU 0's fire, so CPU 0 fires it; had it
    // begun 0.1 ms before, CPU 1 would have, at the jiffy's tick.
    const std::uint64_t own_run_ns = tick_time_ns(31, kHz) + 2'000'000;
    const auto fired_on = [own_run_ns](std::uint64_t migrator_softirq_ns) {
        KernelFire own = fire(9, kJ0 + 31, kJ0 + 31, 0);
        own.entry_ns = own_run_ns;
        const KernelFires fires = {own};
        const std::vector<RecordedRunTime> times = {{0, kJ0 + 31, own_run_ns}};
        const std::vector<KernelRemoteRun> remote = {{.migrator = 1, .cpu = 0, .softirq_ns = migrator_softirq_ns}};
        const KernelClock clock({{0, kJ0}}, kHz);
        const std::vector<FireRecord> fired =
            fires_69(RecordedMachine::from(fires, times, {}, &clock, remote), {{1'000, 0, kJ0 + 30}});
        REQUIRE(fired.size() == 1);
        CHECK(fired[0].fired_jiffies == kJ0 + 31);
        return fired[0].cpu;
    };
    CHECK(fired_on(own_run_ns + 100'000) == 0);
    CHECK(fired_on(own_run_ns - 100'000) == 1);
}
