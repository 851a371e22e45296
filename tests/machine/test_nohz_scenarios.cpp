// NOHZ idle scenarios on the engine (EngineConfig::nohz_idle): what each
// wheel does when the tick was stopped for a long time, and where deferrable
// timers fire on an idle CPU. Every expected count and jiffy below is derived
// from the kernel rules in the comments (4.4 and 6.1 kernel/time/timer.c),
// not read back from a run.
//
// All runs: HZ=250, one CPU, the queue's default start INITIAL_JIFFIES
// J0 = (unsigned long)(unsigned int)(-300 * HZ) = 0xfffedb08 (low byte 8).
// The engine's first tick (tick 1, at 4 ms) happens before any idle
// decision; after it the CPU is idle and the tick stops until the next
// non-deferrable timer's jiffy.
#include "sim/machine/engine.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;
constexpr Jiffies kJ0 = 0xfffedb08; // INITIAL_JIFFIES at HZ=250

// Costs that differ from each other and from the defaults, so a softirq's
// simulated duration says which work it did.
constexpr CostModel kCosts{.enqueue_ns = 0, .dequeue_ns = 0, .cascade_move_ns = 100, .bucket_scan_ns = 10,
                           .expiry_ns = 7, .callback_ns = 3, .next_expiry_step_ns = 0, .softirq_entry_ns = 1000};

EngineConfig nohz_config() { return EngineConfig{.hz = kHz, .costs = kCosts, .nohz_idle = true}; }

ClassicWheel classic_no_slack() { return ClassicWheel(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt}); }

// Records every firing; an action (tag = delay) arms `wake_timer` at jiffies + delay.
struct Recorder final : Workload {
    std::vector<FireRecord> fired;
    TimerId wake_timer = kNoTimer;
    void on_action(Sim& sim, std::uint64_t delay) override { sim.arm(wake_timer, sim.jiffies() + delay); }
    void on_fire(Sim&, const FireRecord& r) override { fired.push_back(r); }
    const FireRecord* find(TimerId id) const {
        for (const auto& r : fired)
            if (r.id == id) return &r;
        return nullptr;
    }
    std::size_t position(TimerId id) const {
        for (std::size_t i = 0; i < fired.size(); ++i)
            if (fired[i].id == id) return i;
        return fired.size();
    }
};

// What one softirq did: the difference of the queue counters around it.
struct SoftirqWork {
    std::uint64_t buckets_scanned, jiffies_walked, cascades, cascade_moves, expired;
};

SoftirqWork work_between(const QueueCounters& a, const QueueCounters& b) {
    return {b.buckets_scanned - a.buckets_scanned, b.jiffies_walked - a.jiffies_walked, b.cascades - a.cascades,
            b.cascade_moves - a.cascade_moves, b.expired - a.expired};
}

// One far timer at J0 + idle, nothing else: the CPU sleeps from tick 1 to
// that timer's tick (or bucket's tick), which then runs one softirq.
struct IdleWake {
    SoftirqWork work{};
    CpuMetrics metrics;
    FireRecord fired{};
};

template <class Q>
IdleWake idle_then_wake(Q queue, Jiffies idle, Jiffies wake_jiffy) {
    Engine<Q> engine(queue, nohz_config());
    REQUIRE(engine.jiffies() == kJ0);
    Recorder rec;
    engine.set_workload(&rec);
    const TimerId far = engine.create_timer();
    engine.arm(far, kJ0 + idle);
    const std::uint64_t wake_ns = tick_time_ns(wake_jiffy - kJ0, kHz);
    engine.run_until(wake_ns - 1);
    // Asleep since tick 1: no softirq has run the far timer yet.
    REQUIRE(engine.tick_stopped());
    REQUIRE(engine.ticks() == 1);
    REQUIRE(rec.fired.empty());
    const QueueCounters before = engine.queue().counters();
    engine.run_until(wake_ns);
    IdleWake r;
    r.work = work_between(before, engine.queue().counters());
    r.metrics = engine.metrics();
    REQUIRE(rec.fired.size() == 1);
    r.fired = rec.fired.front();
    return r;
}

} // namespace

TEST_CASE("NOHZ: after a long idle stretch the classic softirq walks every skipped jiffy") {
    // 4.4 __run_timers(): while (time_after_eq(jiffies, base->timer_jiffies))
    // one step per jiffy: if (timer_jiffies & TVR_MASK) == 0, cascade tv2
    // slot INDEX(0), and tv3 slot INDEX(1) only if INDEX(0) was 0, and so on
    // (the && chain of cascade() return values); then ++timer_jiffies and
    // run tv1[index]. The model counts one bucket scanned per step and per
    // cascade. There is no catch-up shortcut while a timer is queued
    // (all_timers != 0).
    //
    // Tick 1 (jiffies J0+1) ran steps J0 and J0+1 (timer_jiffies was J0 from
    // the arm: 4.4 internal_add_timer() snaps an empty base's timer_jiffies
    // to jiffies), so the wake-up softirq walks J0+2 .. J0+idle.
    SUBCASE("4 s idle (1000 jiffies)") {
        // E = J0+1000 = 0xfffedef0, armed at T=J0 with idx 1000: tv2 slot
        // (E >> 8) & 63 = 30. Steps J0+2 .. J0+1000: 999. Multiples of 256
        // in that range: 0xfffedc00, 0xfffedd00, 0xfffede00 (J0+248, +504,
        // +760), tv2 slots 28, 29, 30, none 0: 3 cascades. The one at
        // 0xfffede00 moves the timer to tv1 (idx 0xf0 = 240): 1 move.
        const auto r = idle_then_wake(classic_no_slack(), 1000, kJ0 + 1000);
        CHECK(r.work.jiffies_walked == 999);
        CHECK(r.work.cascades == 3);
        CHECK(r.work.buckets_scanned == 999 + 3);
        CHECK(r.work.cascade_moves == 1);
        CHECK(r.fired.fired_jiffies == kJ0 + 1000);
        CHECK(r.metrics.max_jiffies_jump == 999); // J0+1 -> J0+1000 in one step
        // The softirq's simulated time is exactly that work.
        CHECK(r.metrics.max_softirq_ns == kCosts.softirq_entry_ns + (999 + 3) * kCosts.bucket_scan_ns +
                                              1 * kCosts.cascade_move_ns + kCosts.expiry_ns + kCosts.callback_ns);
    }
    SUBCASE("400 s idle (100000 jiffies): a hundred times the walk") {
        // E = J0+100000 = 0x1000061a8, idx 100000 at T=J0: tv3 slot
        // (E >> 14) & 63 = 1. Steps J0+2 .. J0+100000: 99999. Cascades:
        //   tv2, every multiple of 256 from 0xfffedc00 to 0x100006100: 390;
        //   tv3, those with INDEX(0) = (T >> 8) & 63 = 0, the multiples of
        //   0x4000: 0xffff0000, 0xffff4000, 0xffff8000, 0xffffc000,
        //   0x100000000, 0x100004000: 6;
        //   tv4, those with INDEX(1) = (T >> 14) & 63 = 0: 0x100000000: 1;
        //   tv5, there INDEX(2) = (T >> 20) & 63 = 0x1000 & 63 = 0 too: 1.
        // 390 + 6 + 1 + 1 = 398. The timer: at 0x100004000 (tv3 slot 1
        // cascades) it moves to tv2 (idx 0x21a8 = 8616), at 0x100006100 to
        // tv1 (idx 0xa8): 2 moves.
        const auto r = idle_then_wake(classic_no_slack(), 100'000, kJ0 + 100'000);
        CHECK(r.work.jiffies_walked == 99'999);
        CHECK(r.work.cascades == 398);
        CHECK(r.work.buckets_scanned == 99'999 + 398);
        CHECK(r.work.cascade_moves == 2);
        CHECK(r.fired.fired_jiffies == kJ0 + 100'000);
        CHECK(r.metrics.max_softirq_ns == kCosts.softirq_entry_ns + (99'999 + 398) * kCosts.bucket_scan_ns +
                                              2 * kCosts.cascade_move_ns + kCosts.expiry_ns + kCosts.callback_ns);
    }
}

TEST_CASE("NOHZ: after a long idle stretch the modern softirq scans a bounded number of buckets") {
    // 6.1 __run_timers(): while (jiffies >= clk && jiffies >= next_expiry)
    // collect_expired_timers(), which sets clk = next_expiry (the jump over
    // the idle stretch) and looks at one bucket per level, going up a level
    // only while (clk & LVL_CLK_MASK) == 0 (clk >>= 3 each level); then
    // clk++, so clk > jiffies and the loop ends after one collect. No
    // cascades, no per-jiffy walk. The bucket expiry comes from 6.1
    // calc_index(): ((expires >> LVL_SHIFT(lvl)) + 1) << LVL_SHIFT(lvl),
    // the level being the first with delta < LVL_START(lvl + 1) = 63 << 3*lvl.
    SUBCASE("4 s idle (1000 jiffies)") {
        // delta 1000: level 2 (504 <= 1000 < 4032), granularity 64.
        // E = 0xfffedef0 -> bucket expiry 0xfffedf00 = J0+1016. Its low
        // 3-bit groups: bits 0-2 = 0, bits 3-5 = 0, bits 6-8 = 0b100: levels
        // 0, 1 and 2 are looked at: 3 buckets.
        const auto r = idle_then_wake(ModernWheel(ModernWheel::Config{.hz = kHz}), 1000, kJ0 + 1016);
        CHECK(r.work.buckets_scanned == 3);
        CHECK(r.work.jiffies_walked == 0);
        CHECK(r.work.cascade_moves == 0);
        CHECK(r.fired.fired_jiffies == kJ0 + 1016);
    }
    SUBCASE("400 s idle (100000 jiffies): still a handful") {
        // delta 100000: level 4 (32256 <= 100000 < 258048), granularity
        // 4096. E = 0x1000061a8 -> bucket expiry 0x100007000 = J0+103672.
        // Low 12 bits zero, bits 12-14 = 0b111: levels 0..4, 5 buckets.
        const auto r = idle_then_wake(ModernWheel(ModernWheel::Config{.hz = kHz}), 100'000, kJ0 + 103'672);
        CHECK(r.work.buckets_scanned == 5);
        CHECK(r.work.jiffies_walked == 0);
        CHECK(r.work.cascade_moves == 0);
        CHECK(r.fired.fired_jiffies == kJ0 + 103'672);
    }
}

namespace {

// Deferrable timer d at J0+100 and a wake-up that is not deferrable: either a
// standard timer at J0+1000 or, if `action_at_ns` is set, an action at that
// time that arms a standard timer 10 jiffies ahead. Returns the records of
// d and of the waking timer.
struct DeferrableRun {
    FireRecord deferrable{}, waker{};
    bool deferrable_first = false; // d ran before the waking timer in the same softirq
    CpuMetrics metrics;
};

template <class Q>
DeferrableRun deferrable_scenario(Q queue, bool nohz, bool wake_by_action) {
    EngineConfig config = nohz_config();
    config.nohz_idle = nohz;
    Engine<Q> engine(queue, config);
    REQUIRE(engine.jiffies() == kJ0);
    Recorder rec;
    engine.set_workload(&rec);
    const TimerId d = engine.create_timer(TimerFlags{.deferrable = true});
    const TimerId w = engine.create_timer();
    engine.arm(d, kJ0 + 100);
    if (wake_by_action) {
        rec.wake_timer = w;
        // 2 s = tick 500 exactly: the action runs with jiffies J0+500.
        engine.schedule_action(2'000'000'000, Action{.kind = Action::Kind::call, .tag = 10});
    } else {
        engine.arm(w, kJ0 + 1000);
    }
    engine.run_until(10'000'000'000); // 10 s: everything has fired
    DeferrableRun r;
    REQUIRE(rec.find(d) != nullptr);
    REQUIRE(rec.find(w) != nullptr);
    r.deferrable = *rec.find(d);
    r.waker = *rec.find(w);
    r.deferrable_first = rec.position(d) < rec.position(w);
    r.metrics = engine.metrics();
    return r;
}

} // namespace

TEST_CASE("NOHZ: a deferrable timer on an idle modern CPU waits for the next non-deferrable wake-up") {
    // 6.1 get_next_timer_interrupt() looks at timer_bases[BASE_STD] only, so
    // d (queued on BASE_DEF) does not keep the tick or program a wake-up.
    // d at J0+100: level 1 (63 <= 100 < 504), bucket expiry
    // ((0xfffedb6c >> 3) + 1) << 3 = 0xfffedb70 = J0+104.
    SUBCASE("ticking (no NOHZ): d runs at its bucket, J0+104") {
        const auto r = deferrable_scenario(ModernWheel(ModernWheel::Config{.hz = kHz}), false, false);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 104);
    }
    SUBCASE("idle, woken by a standard timer: d runs in that timer's softirq") {
        // The standard timer at J0+1000 sits in the level-2 bucket of
        // J0+1016 (see the idle test above): the CPU sleeps from tick 1 to
        // J0+1016. 6.1 run_timer_softirq() runs BASE_STD, then BASE_DEF,
        // whose next_expiry (J0+104) is long due: d runs at J0+1016, after
        // the waking timer.
        const auto r = deferrable_scenario(ModernWheel(ModernWheel::Config{.hz = kHz}), true, false);
        CHECK(r.waker.fired_jiffies == kJ0 + 1016);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 1016);
        CHECK_FALSE(r.deferrable_first);
        CHECK(r.metrics.ticks == 2); // tick 1 and the wake-up: d never ended a sleep
        CHECK(r.metrics.wakeups_by_timer == 1);
    }
    SUBCASE("idle, woken by an action that arms a standard timer") {
        // The action at jiffies J0+500 arms w at J0+510 (forward_timer_base()
        // moved clk to J0+500 first): delta 10, level 0, bucket expiry
        // J0+511, more than one tick away, so the tick stays stopped until
        // J0+511, where d runs after w.
        const auto r = deferrable_scenario(ModernWheel(ModernWheel::Config{.hz = kHz}), true, true);
        CHECK(r.waker.fired_jiffies == kJ0 + 511);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 511);
        CHECK_FALSE(r.deferrable_first);
        CHECK(r.metrics.wakeups_by_action == 1);
    }
}

TEST_CASE("NOHZ: a deferrable timer on an idle classic CPU waits too, and runs in its own walk step") {
    // 4.4 get_next_timer_interrupt() uses base->next_timer, kept over the
    // non-deferrable timers only (active_timers), and __next_timer_interrupt()
    // skips entries with tbase_get_deferrable(nte->base): d does not wake
    // the CPU. Deferrable timers share the one wheel, so the catch-up walk
    // runs d in the step timer_jiffies == J0+100, before the waking timer's
    // step, with jiffies already at the wake-up jiffy. No slack here.
    SUBCASE("ticking (no NOHZ): d runs at J0+100") {
        const auto r = deferrable_scenario(classic_no_slack(), false, false);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 100);
    }
    SUBCASE("idle, woken by a standard timer at J0+1000") {
        const auto r = deferrable_scenario(classic_no_slack(), true, false);
        CHECK(r.waker.fired_jiffies == kJ0 + 1000);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 1000);
        CHECK(r.deferrable_first);
        CHECK(r.metrics.ticks == 2);
    }
    SUBCASE("idle, woken by an action that arms a standard timer") {
        // 4.x mod_timer() without slack: w expires at J0+500+10, the CPU
        // sleeps until J0+510.
        const auto r = deferrable_scenario(classic_no_slack(), true, true);
        CHECK(r.waker.fired_jiffies == kJ0 + 510);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 510);
        CHECK(r.deferrable_first);
        CHECK(r.metrics.wakeups_by_action == 1);
    }
}

TEST_CASE("NOHZ: the heap reference ignores idle policy: a deferrable timer wakes the CPU on time") {
    // HeapQueue::next_timer_interrupt() returns the earliest timer whatever
    // its flags (the exact reference), so d ends the sleep at J0+100.
    SUBCASE("woken by d itself") {
        const auto r = deferrable_scenario(HeapQueue(HeapQueue::Config{.hz = kHz}), true, false);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 100);
        CHECK(r.waker.fired_jiffies == kJ0 + 1000);
        CHECK(r.deferrable_first);
        CHECK(r.metrics.wakeups_by_timer == 2);
    }
    SUBCASE("an action later changes nothing for d") {
        const auto r = deferrable_scenario(HeapQueue(HeapQueue::Config{.hz = kHz}), true, true);
        CHECK(r.deferrable.fired_jiffies == kJ0 + 100);
        CHECK(r.waker.fired_jiffies == kJ0 + 510);
    }
}
