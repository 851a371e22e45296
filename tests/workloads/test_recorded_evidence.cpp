// What a kernel trace tells about the machine it ran on, beyond which
// jiffies each CPU ran TIMER_SOFTIRQ at (test_recorded_machine.cpp):
//   * each callback's recorded length and the jiffies it spanned
//     (recorded_callbacks.hpp), from the entry/exit pairs and the `now` of
//     the next fire of the same run, as KernelFireIndex keeps them;
//   * the held spans: a non-deferrable timer the kernel cancelled after its
//     bucket's jiffy without firing it (KernelFireCollector::unfired(),
//     RecordedMachine::held).
// Expected values follow from the lines written here and the 6.1 rules
// cited, not from a run.
#include "workloads/traces/kernel/kernel_fire_index.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/kernel/recorded_callbacks.hpp"
#include "workloads/traces/kernel/recorded_machine.hpp"

#include "tests/xorshift_draw.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

using namespace timersim;

namespace {

constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kMs = 1'000'000;
constexpr unsigned kHz = 250;

FtraceEvent entry(std::uint64_t t, std::uint32_t cpu, std::uint64_t timer, Jiffies now, Jiffies baseclk) {
    FtraceEvent e;
    e.type = FtraceEventType::timer_expire_entry;
    e.timestamp_ns = t;
    e.line_cpu = cpu;
    e.timer = timer;
    e.now = now;
    e.baseclk = baseclk;
    return e;
}

FtraceEvent of_type(FtraceEventType type, std::uint64_t t, std::uint32_t cpu, std::uint64_t timer) {
    FtraceEvent e;
    e.type = type;
    e.timestamp_ns = t;
    e.line_cpu = cpu;
    e.timer = timer;
    return e;
}

FtraceEvent start(std::uint64_t t, std::uint32_t cpu, std::uint64_t timer, Jiffies expires, unsigned idx,
                  bool deferrable = false) {
    FtraceEvent e = of_type(FtraceEventType::timer_start, t, cpu, timer);
    e.expires = expires;
    e.cpu = cpu;
    e.idx = idx;
    e.flags = deferrable ? kFtraceDeferrable : 0;
    return e;
}

std::optional<std::uint32_t> same_id(std::uint64_t pointer) { return static_cast<std::uint32_t>(pointer); }

} // namespace

TEST_CASE("a callback's length and the jiffies its run moved on while it ran") {
    KernelFireCollector c;
    // CPU 0's run at jiffy 100: timer 1's callback takes 5 ms; the run's next
    // fire, from the same bucket after the detach (a cancel line), shows 101.
    c.timer_event(entry(10 * kMs, 0, 1, 100, 99));
    c.timer_event(of_type(FtraceEventType::timer_expire_exit, 15 * kMs, 0, 1));
    c.timer_event(of_type(FtraceEventType::timer_cancel, 15 * kMs + 2 * kUs, 0, 2));
    c.timer_event(entry(15 * kMs + 3 * kUs, 0, 2, 101, 99));
    c.timer_event(of_type(FtraceEventType::timer_expire_exit, 15 * kMs + 5 * kUs, 0, 2));
    // A later run of another bucket, far from that exit: not the same run.
    c.timer_event(entry(40 * kMs, 0, 3, 107, 107));
    c.timer_event(of_type(FtraceEventType::timer_expire_exit, 40 * kMs + 1 * kUs, 0, 3));
    // An exit of a timer other than the one open on its CPU measures nothing.
    c.timer_event(entry(50 * kMs, 1, 4, 110, 110));
    c.timer_event(of_type(FtraceEventType::timer_expire_exit, 50 * kMs + 1 * kUs, 1, 5));
    const auto& f = c.fires();
    REQUIRE(f.size() == 4);
    CHECK(f[0].callback_ns() == 5 * kMs);
    CHECK(f[0].next_in_run() == Jiffies{101});
    CHECK(f[1].callback_ns() == 2 * kUs);
    CHECK_FALSE(f[1].next_in_run()); // 25 ms later, another bucket
    CHECK_FALSE(f[3].callback_ns());

    const KernelFireIndex cbs(f, {}, same_id);
    const auto cb = [](const KernelFireIndex& index, std::uint32_t timer) {
        return index.nearest_callback(timer, 100);
    };
    REQUIRE(cb(cbs, 1));
    CHECK(cb(cbs, 1)->ns == 5 * kMs);
    CHECK(cb(cbs, 1)->ticks == std::uint64_t{1});
    CHECK_FALSE(cb(cbs, 2)->ticks); // no next fire of its run and no clock
    CHECK_FALSE(cb(cbs, 4));        // fired, but no exit of its own
    CHECK_FALSE(cb(cbs, 5));        // never fired

    // With the kernel's clock, one without a next fire is placed by it:
    // jiffies 101 from 12 ms on, so timer 2's exit (15 ms) is one jiffy on.
    const KernelClock clock({{10 * kMs, 100}, {12 * kMs, 101}, {40 * kMs, 107}}, kHz);
    const KernelFireIndex timed(f, {}, same_id, &clock);
    CHECK(cb(timed, 1)->ticks == std::uint64_t{1}); // the run's next fire still wins
    CHECK(cb(timed, 2)->ticks == std::uint64_t{0}); // 101 at 15 ms, its own now
    CHECK(cb(timed, 3)->ticks == std::uint64_t{0});
}

namespace {

// A fire of timer 1 at `now` (`ns`: its callback's length; none: no exit).
KernelFire fire_at(Jiffies now, std::optional<std::uint64_t> ns, std::uint32_t cpu = 0) {
    KernelFire f;
    f.timer = 1;
    f.now = now;
    f.cpu = cpu;
    f.set_callback_ns(ns);
    return f;
}

} // namespace

TEST_CASE("the nearest recorded callback of a timer, the earlier of two as near") {
    // Read out of order (two CPUs), and a fire without an exit between.
    const KernelFires fires = {fire_at(110, 2), fire_at(100, 1), fire_at(120, std::nullopt), fire_at(130, 3)};
    const KernelFireIndex index(fires, {}, same_id);
    const auto ns = [&](Jiffies fired) { return index.nearest_callback(1, fired)->ns; };
    CHECK_FALSE(index.nearest_callback(0, 100));
    CHECK(ns(90) == 1);
    CHECK(ns(105) == 1); // as near: the earlier
    CHECK(ns(106) == 2);
    CHECK(ns(119) == 2);
    CHECK(ns(121) == 3); // 120 has no callback: 130 is the nearest that has one
    CHECK(ns(125) == 3);
    CHECK(ns(500) == 3);
    // What a record cannot hold narrowly (a CPU beyond 16 bits, a callback
    // beyond 32, a jiffy count beyond 16) is kept whole.
    KernelFire wide = fire_at(200, std::uint64_t{1} << 33, 70000);
    wide.set_next_in_run(200 + 100000);
    const KernelFireIndex wide_index({fire_at(100, 1), wide}, {}, same_id);
    CHECK(wide_index.nearest_callback(1, 190)->ns == std::uint64_t{1} << 33);
    CHECK(wide_index.nearest_callback(1, 190)->ticks == std::uint64_t{100000});
    CHECK(wide_index.nearest_callback(1, 190)->now == Jiffies{200});
    FireTally tally(wide_index);
    tally.replayed(1, 200, 70000 - 65536, 70000 - 65536); // the CPU is not cut to 16 bits
    CHECK(tally.agreement().same_jiffy_cpu == 0);
    tally.replayed(1, 200, 70000, 70000);
    CHECK(tally.agreement().same_jiffy_cpu == 1);
}

TEST_CASE("a recorded callback ends as many of the replay's jiffies later as the kernel's did") {
    // HZ=250: jiffy start+n spans [4n, 4n+4) ms. A callback starting 2 ms
    // into jiffy start+10 (at 42 ms); margin a sixteenth of a tick (250 us).
    const Jiffies j0 = 1000;
    const std::uint64_t at = 42 * kMs;
    // The kernel saw no jiffy pass: 5 ms would cross the 44 ms tick; it
    // ends 250 us before it.
    CHECK(callback_on_grid({1010, 5 * kMs, 0}, at, j0, 1010, kHz) == 2 * kMs - 250 * kUs);
    // Short enough: as long as it was.
    CHECK(callback_on_grid({1010, 1 * kMs, 0}, at, j0, 1010, kHz) == 1 * kMs);
    // The kernel's next fire came a jiffy on: 10 us reaches the 44 ms tick.
    CHECK(callback_on_grid({1010, 10 * kUs, 1}, at, j0, 1010, kHz) == 2 * kMs);
    // Two jiffies on: 12 ms ends 250 us before the 52 ms tick, 1 ms
    // reaches the 48 ms one, 9 ms is as long as it was.
    CHECK(callback_on_grid({1010, 12 * kMs, 2}, at, j0, 1010, kHz) == 10 * kMs - 250 * kUs);
    CHECK(callback_on_grid({1010, 1 * kMs, 2}, at, j0, 1010, kHz) == 6 * kMs);
    CHECK(callback_on_grid({1010, 9 * kMs, 2}, at, j0, 1010, kHz) == 9 * kMs);
    // Without a jiffy count, the length as recorded.
    CHECK(callback_on_grid({1010, 9 * kMs, std::nullopt}, at, j0, 1010, kHz) == 9 * kMs);
}

TEST_CASE("a due timer cancelled unfired holds its CPU from its bucket's jiffy to the cancel's") {
    KernelFireCollector c;
    // 6.1 calc_index(): level 0 (idx < 64) collects expires E at E + 1;
    // level 1 (idx 64..127) at ((E >> 3) + 1) << 3.
    c.timer_event(start(1 * kMs, 0, 1, 103, 40));        // bucket 104, on CPU 0
    c.timer_event(start(1 * kMs, 1, 2, 200, 64 + 25));   // bucket 208, on CPU 1
    c.timer_event(start(1 * kMs, 0, 3, 150, 22, true));  // deferrable: proves nothing
    c.timer_event(start(1 * kMs, 0, 4, 120, 57));        // bucket 121: it will fire
    c.timer_event(of_type(FtraceEventType::timer_cancel, 30 * kMs, 1, 1)); // del_timer() from CPU 1
    c.timer_event(of_type(FtraceEventType::timer_init, 30 * kMs + kUs, 1, 1));
    c.timer_event(of_type(FtraceEventType::timer_cancel, 31 * kMs, 0, 3));
    c.timer_event(of_type(FtraceEventType::timer_cancel, 40 * kMs, 0, 4)); // the detach of its expiry
    c.timer_event(entry(40 * kMs + kUs, 0, 4, 121, 121));
    c.timer_event(of_type(FtraceEventType::timer_cancel, 90 * kMs, 1, 2)); // still pending at the end: a cancel
    const std::vector<KernelUnfired> unfired = c.unfired();
    REQUIRE(unfired.size() == 2);
    CHECK(unfired[0].cpu == 0);
    CHECK(unfired[0].bucket_expiry == 104);
    CHECK(unfired[0].cancel_ns == 30 * kMs);
    CHECK(unfired[1].cpu == 1);
    CHECK(unfired[1].bucket_expiry == 208);

    // The clock puts 30 ms at jiffy 107 and 90 ms at 208.
    const KernelClock clock({{1 * kMs, 100}, {30 * kMs, 107}, {90 * kMs, 208}}, kHz);
    KernelFires fires(2);
    for (std::uint32_t cpu = 0; cpu < 2; ++cpu) {
        fires[cpu].timer = 9;
        fires[cpu].now = 100;
        fires[cpu].cpu = cpu;
    }
    const RecordedMachine m = RecordedMachine::from(fires, {}, unfired, &clock);
    // Due at 104, cancelled in 107: CPU 0 ran no timer softirq in 104..106.
    CHECK_FALSE(m.held_at(0, 103));
    CHECK(m.held_at(0, 104));
    CHECK(m.held_at(0, 106));
    CHECK_FALSE(m.held_at(0, 107)); // the cancel's own jiffy: it may have come first
    // Cancelled in its bucket's own jiffy: nothing held.
    CHECK_FALSE(m.held_at(1, 208));
    // Without a clock the cancels cannot be placed: nothing held.
    CHECK_FALSE(RecordedMachine::from(fires, {}, unfired, nullptr).held_at(0, 105));

    // A collector given the clock keeps only the cancels that can prove a
    // hold: CPU 1's came in its bucket's own jiffy. The machine is the same.
    KernelFireCollector clocked;
    clocked.use_clock(&clock);
    for (const FtraceEvent& e : {start(1 * kMs, 0, 1, 103, 40), start(1 * kMs, 1, 2, 200, 64 + 25),
                                 of_type(FtraceEventType::timer_cancel, 30 * kMs, 1, 1),
                                 of_type(FtraceEventType::timer_init, 30 * kMs + kUs, 1, 1),
                                 of_type(FtraceEventType::timer_cancel, 90 * kMs, 1, 2)})
        clocked.timer_event(e);
    const std::vector<KernelUnfired> kept = clocked.unfired();
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].bucket_expiry == 104);
    const RecordedMachine same = RecordedMachine::from(fires, {}, kept, &clock);
    CHECK(same.held == m.held);
}

TEST_CASE("6.9+: a migrator's fires for an idle CPU are that CPU's, and their lateness is its remote window") {
    KernelFireCollector c;
    // CPU 0's TIMER softirq: its own timer 1 first, then idle CPU 1's
    // global base (6.9 run_timer_softirq() -> tmigr_handle_remote()),
    // which fires timer 2 five jiffies after its bucket, then CPU 2's.
    c.timer_softirq({.entry = true, .line = 1, .timestamp_ns = 10 * kMs, .line_cpu = 0});
    c.timer_event(entry(10 * kMs + kUs, 0, 1, 136, 136));
    c.other_line(3, "  <idle>-0  [000] d.s2.  0.010002: tmigr_handle_remote_cpu: cpu=1 parent=00000000deadbeef wakeup=0");
    c.timer_event(entry(10 * kMs + 3 * kUs, 0, 2, 136, 131));
    c.other_line(5, "  <idle>-0  [000] d.s2.  0.010004: tmigr_handle_remote_cpu: cpu=2 parent=00000000deadbeef wakeup=0");
    c.timer_event(entry(10 * kMs + 5 * kUs, 0, 3, 136, 134));
    c.timer_softirq({.entry = false, .line = 7, .timestamp_ns = 10 * kMs + 6 * kUs, .line_cpu = 0});
    // The next softirq on CPU 0 runs its own bases only.
    c.timer_softirq({.entry = true, .line = 8, .timestamp_ns = 20 * kMs, .line_cpu = 0});
    c.timer_event(entry(20 * kMs + kUs, 0, 4, 139, 138));
    CHECK(c.saw_timer_migration());
    const auto& f = c.fires();
    REQUIRE(f.size() == 4);
    CHECK_FALSE(f[0].remote_of());
    CHECK(f[1].remote_of() == 1u);
    CHECK(f[2].remote_of() == 2u);
    CHECK_FALSE(f[3].remote_of());
    const RecordedMachine m = RecordedMachine::from(f, {}, {}, nullptr, c.remote_runs());
    CHECK(m.remote_wake_window_of(1) == 5);
    CHECK(m.remote_wake_window_of(2) == 2);
    CHECK(m.remote_wake_window_of(0) == 0);
    CHECK(m.remote_wake_window_of(7) == 0);
    CHECK(m.remote_expired_within(1, 136, 136));
    // The migrator's own window counts every fire it made, remote ones too.
    CHECK(m.wake_window[0] == 5);
}

TEST_CASE("6.9+ without timer_migration events: a CPU's fires of an idle CPU's global timers are inferred remote") {
    // The same softirq as above, as a trace without tmigr lines shows it:
    // CPU 0 fires its own timer 1, then timers 2 and 3 that CPU 1's last
    // timer_starts queued on its global base (not pinned, not deferrable):
    // one remote run of CPU 1, as a tmigr_handle_remote_cpu line would have
    // opened it. Timer 4, pinned on CPU 1, is no remote expiry.
    KernelFireCollector c;
    c.timer_event(start(1 * kMs, 0, 1, 136, 0));
    c.timer_event(start(2 * kMs, 1, 2, 131, 0));
    c.timer_event(start(3 * kMs, 1, 3, 134, 0));
    FtraceEvent pinned = start(4 * kMs, 1, 4, 139, 0);
    pinned.flags = kFtracePinned;
    c.timer_event(pinned);
    c.timer_softirq({.entry = true, .line = 5, .timestamp_ns = 10 * kMs, .line_cpu = 0});
    c.timer_event(entry(10 * kMs + kUs, 0, 1, 136, 136));
    c.timer_event(entry(10 * kMs + 3 * kUs, 0, 2, 136, 131));
    c.timer_event(entry(10 * kMs + 5 * kUs, 0, 3, 136, 134));
    c.timer_softirq({.entry = false, .line = 9, .timestamp_ns = 10 * kMs + 6 * kUs, .line_cpu = 0});
    c.timer_softirq({.entry = true, .line = 10, .timestamp_ns = 20 * kMs, .line_cpu = 0});
    c.timer_event(entry(20 * kMs + kUs, 0, 4, 139, 139));
    CHECK_FALSE(c.saw_timer_migration());
    CHECK(c.remote_runs().empty()); // nothing before the inference is asked for
    CHECK(c.use_inferred_remote_runs() == 2);
    REQUIRE(c.remote_runs().size() == 1);
    CHECK(c.remote_runs()[0].migrator == 0);
    CHECK(c.remote_runs()[0].cpu == 1);
    CHECK(c.remote_runs()[0].softirq_ns == 10 * kMs);
    CHECK(c.remote_runs()[0].now == Jiffies{136});
    const auto& f = c.fires();
    REQUIRE(f.size() == 4);
    CHECK_FALSE(f[0].remote_of());
    CHECK(f[1].remote_of() == 1u);
    CHECK(f[2].remote_of() == 1u);
    CHECK_FALSE(f[3].remote_of());
    const RecordedMachine m = RecordedMachine::from(f, {}, {}, nullptr, c.remote_runs());
    CHECK(m.remote_wake_window_of(1) == 5);
    CHECK(m.remote_expired_within(1, 136, 136));

    // One tmigr line anywhere: the trace's own lines are the evidence.
    KernelFireCollector with;
    with.other_line(1, "  <idle>-0  [001] d..2.  0.000500: tmigr_cpu_idle: cpu=1 parent=00000000deadbeef "
                       "nextevt=9223372036854775807 wakeup=9223372036854775807");
    CHECK(with.saw_timer_migration());
}

// The replay's fires matched against the kernel's (KernelFireIndex, shared
// by every replay; FireTally, one a replay): each kernel fire matches at
// most one replay fire of the same timer, CPU and jiffy, checked against a
// map of the remaining fires on a random stream whose keys repeat and
// collide.
TEST_CASE("a replay's fires match the kernel's one for one, by timer, CPU and jiffy") {
    const auto fire_of = [](std::uint64_t timer, std::uint32_t cpu, Jiffies now) {
        KernelFire f;
        f.timer = timer;
        f.cpu = cpu;
        f.now = now;
        return f;
    };
    // Pointer 0x100 + id is timer id; 0x999 is not in the replay.
    const auto id_of = [](std::uint64_t pointer) -> std::optional<std::uint32_t> {
        if (pointer == 0x999) return std::nullopt;
        return static_cast<std::uint32_t>(pointer - 0x100);
    };
    SUBCASE("repeats, another CPU, a timer the replay lacks") {
        const KernelFires fires = {fire_of(0x101, 0, 50), fire_of(0x101, 0, 50), fire_of(0x102, 1, 60),
                                               fire_of(0x999, 0, 50)};
        const KernelFireIndex index(fires, {}, id_of);
        CHECK(index.kernel_side().kernel_fires_total == 4);
        CHECK(index.kernel_side().kernel_fires == 3);
        CHECK(index.kernel_side().kernel_fires_unreplayable == 1);
        FireTally tally(index), other(index);
        tally.replayed(1, 50, 0, 0);
        tally.replayed(1, 50, 0, 0);
        tally.replayed(1, 50, 0, 0); // a third: the kernel fired it twice
        tally.replayed(2, 60, 0, 0); // on CPU 0, the kernel's was on CPU 1
        tally.replayed(2, 61, 1, 1); // a jiffy late
        CHECK(tally.agreement().replay_fires == 5);
        CHECK(tally.agreement().same_jiffy_cpu == 2);
        other.replayed(2, 60, 1, 1); // another replay matches from the start
        CHECK(other.agreement().same_jiffy_cpu == 1);
    }
    SUBCASE("a random stream, against a map") {
        testing::XorshiftDraw draw{88172645463325252ull};
        KernelFires fires;
        std::map<std::tuple<std::uint32_t, std::uint32_t, Jiffies>, int> left;
        for (int i = 0; i < 5000; ++i) {
            const std::uint32_t id = static_cast<std::uint32_t>(draw(50));
            const std::uint32_t cpu = static_cast<std::uint32_t>(draw(2));
            const Jiffies now = 1000 + draw(100);
            fires.push_back(fire_of(0x100 + id, cpu, now));
            ++left[{id, cpu, now}];
        }
        const KernelFireIndex index(fires, {}, id_of);
        FireTally tally(index);
        std::uint64_t expected = 0;
        for (int i = 0; i < 8000; ++i) {
            const std::uint32_t id = static_cast<std::uint32_t>(draw(55));
            const std::uint32_t cpu = static_cast<std::uint32_t>(draw(3));
            const Jiffies now = 1000 + draw(105);
            const auto it = left.find({id, cpu, now});
            if (it != left.end() && it->second > 0) {
                --it->second;
                ++expected;
            }
            tally.replayed(id, now, cpu, cpu);
        }
        CHECK(expected > 1000);
        CHECK(tally.agreement().same_jiffy_cpu == expected);
        CHECK(index.kernel_side().kernel_fires == 5000);
    }
}

// Lines saying a CPU lost events make its history lost until its next
// fire, as validate has it: that fire, and the replay's fires on that CPU
// in between that match none of the kernel's, leave the figures.
TEST_CASE("lost history: the kernel's first fire on a CPU after lost events, and the replay's there, are left out") {
    KernelFireCollector c;
    c.timer_event(start(1 * kMs, 1, 7, 120, 20)); // jiffies shown: 120 (timeout 0)
    c.timer_event(entry(2 * kMs, 0, 8, 100, 100));
    c.other_line(10, "CPU:1 [LOST 4 EVENTS]");
    c.other_line(11, "CPU:1 [LOST 2 EVENTS]"); // the same history
    c.other_line(12, "  <idle>-0  [001] ..s1.  0.003000: softirq_entry: vec=1 [action=TIMER]");
    c.other_line(13, "CPU:9000 [LOST 1 EVENTS]"); // no kernel has CPU 9000: no such line
    c.other_line(14, "CPU:5 [LOST 1 EVENTS]");    // no timer event names CPU 5: validate ignores it too
    c.timer_event(entry(3 * kMs, 0, 9, 121, 121));  // CPU 0 lost nothing
    c.timer_event(entry(3 * kMs, 1, 99, 122, 122)); // a timer the replay lacks (a filter's): no end
    c.timer_event(entry(4 * kMs, 1, 7, 125, 125));  // CPU 1's first fire since: lost history
    c.timer_event(entry(5 * kMs, 1, 7, 130, 130));  // its history is known again
    c.other_line(20, "##### CPU 0 buffer started ####"); // open to the end: no fire of CPU 0 after it
    REQUIRE(c.lost_lines().size() == 3);
    CHECK(c.lost_lines()[0].cpu == 1);
    CHECK(c.lost_lines()[0].latest == Jiffies{120});
    CHECK(c.lost_lines()[0].fires_before == 1);
    CHECK(c.lost_lines()[2].cpu == 0);
    CHECK(c.lost_lines()[2].latest == Jiffies{130}); // the latest the trace showed
    CHECK(c.lost_lines()[2].fires_before == 5);

    const auto replayed = [](std::uint64_t pointer) -> std::optional<std::uint32_t> {
        if (pointer == 99) return std::nullopt;
        return static_cast<std::uint32_t>(pointer);
    };
    const KernelFireIndex index(c.fires(), {}, replayed, nullptr, c.lost_lines());
    const FireAgreement& kernel = index.kernel_side();
    CHECK(kernel.kernel_fires == 3);
    CHECK(kernel.kernel_fires_unreplayable == 1);
    CHECK(kernel.lost_history.kernel_fires == 1);
    CHECK(kernel.lost_history.lines == 3);
    CHECK(kernel.lost_history.cpus == std::vector<std::uint32_t>{0, 1});
    CHECK(index.in_lost_history(1, 120));
    CHECK(index.in_lost_history(1, 125));
    CHECK_FALSE(index.in_lost_history(1, 119));
    CHECK_FALSE(index.in_lost_history(1, 126));
    CHECK(index.in_lost_history(0, 1000));
    CHECK_FALSE(index.in_lost_history(0, 129));
    CHECK_FALSE(index.in_lost_history(2, 125));
    // The lost fire stays in the index for its callback.
    REQUIRE(index.of(7).last - index.of(7).first == 2);
    CHECK(index.lost_at(index.of(7).first));
    CHECK_FALSE(index.lost_at(index.of(7).first + 1));
    FireTally tally(index);
    tally.replayed(7, 125, 1, 1); // the lost fire's own key: matches nothing, in the window
    tally.replayed(7, 122, 1, 1); // a fire the kernel did not make, in the window
    tally.replayed(7, 130, 1, 1); // matches
    tally.replayed(7, 131, 1, 1); // after the window: a fire not the kernel's
    tally.replayed(9, 121, 0, 0); // matches on CPU 0
    tally.replayed(9, 200, 0, 0); // not the kernel's, in CPU 0's open window
    const FireAgreement& a = tally.agreement();
    CHECK(a.same_jiffy_cpu == 2);
    CHECK(a.replay_fires == 3);
    CHECK(a.lost_history.replay_fires == 3);
}

// 6.9+: a migrator's remote expiry of an idle CPU's global timer is a fire
// of the idle CPU's base (validate checks it against that CPU's wheel): it
// ends that CPU's lost history, not the migrator's.
TEST_CASE("lost history: a remote expiry ends the window of the CPU whose base it was") {
    KernelFires fires;
    KernelFire f;
    f.timer = 1;
    f.now = 100;
    fires.push_back(f); // CPU 0's own, before the line
    f.timer = 2;
    f.now = 110;
    f.set_remote_of(1);
    fires.push_back(f); // CPU 0 runs CPU 1's global base: ends CPU 1's window
    f = KernelFire{};
    f.timer = 3;
    f.cpu = 1;
    f.now = 120;
    fires.push_back(f); // CPU 1's own: its history is known again
    const std::vector<KernelLostLine> lost = {{.cpu = 1, .latest = Jiffies{100}, .fires_before = 1}};
    const auto id_of = [](std::uint64_t pointer) -> std::optional<std::uint32_t> {
        return static_cast<std::uint32_t>(pointer);
    };
    const KernelFireIndex index(fires, {}, id_of, nullptr, lost);
    CHECK(index.kernel_side().lost_history.kernel_fires == 1);
    CHECK(index.kernel_side().kernel_fires == 2);
    CHECK(index.lost_at(index.of(2).first));
    CHECK_FALSE(index.lost_at(index.of(3).first));
    CHECK(index.in_lost_history(1, 110));
    CHECK_FALSE(index.in_lost_history(1, 111));
    CHECK_FALSE(index.in_lost_history(0, 105)); // the migrator lost nothing
    // The replay's fires are placed the same way: an unmatched remote
    // expiry run by CPU 0 of CPU 1's base is CPU 1's lost history.
    FireTally tally(index);
    tally.replayed(2, 105, 0, 1);
    tally.replayed(2, 106, 0, 0);
    CHECK(tally.agreement().lost_history.replay_fires == 1);
    CHECK(tally.agreement().replay_fires == 1);
}

// Validate's model classes the lost history (lost_history.hpp): its expiries
// left out, each one fire by timer, now and CPU, and its windows replace the
// lines' (which would end CPU 1's at its next fire, 125).
TEST_CASE("lost history as validate classes it: its expiries and windows, not the lines'") {
    KernelFireCollector c;
    c.timer_event(start(1 * kMs, 1, 7, 120, 20));
    c.other_line(10, "CPU:1 [LOST 4 EVENTS]");
    c.timer_event(entry(2 * kMs, 1, 7, 125, 125)); // lost (validate's first)
    c.timer_event(entry(3 * kMs, 1, 8, 127, 127)); // lost: validate's model pinned again here
    c.timer_event(entry(4 * kMs, 1, 7, 130, 130)); // whole again
    c.timer_event(entry(4 * kMs, 0, 7, 127, 127)); // the same timer and now on CPU 0: not the lost one
    LostHistoryClasses classes;
    classes.lines = 1;
    classes.sequences = 2;
    classes.expiries = {{7, 125, 1}, {8, 127, 1}};
    classes.windows = {{.cpu = 1, .from = Jiffies{120}, .to = Jiffies{127}}, {.cpu = 0, .from = Jiffies{200}}};
    const KernelFireIndex index(c.fires(), {}, same_id, nullptr, c.lost_lines(), &classes);
    const FireAgreement& kernel = index.kernel_side();
    CHECK(kernel.lost_history.kernel_fires == 2);
    CHECK(kernel.kernel_fires == 2);
    CHECK(kernel.lost_history.lines == 1);
    CHECK(kernel.lost_history.sequences == 2);
    CHECK(kernel.lost_history.cpus == std::vector<std::uint32_t>{0, 1});
    CHECK(index.in_lost_history(1, 126));
    CHECK(index.in_lost_history(1, 127));
    CHECK_FALSE(index.in_lost_history(1, 128));
    CHECK_FALSE(index.in_lost_history(0, 199));
    CHECK(index.in_lost_history(0, 5000));
    FireTally tally(index);
    tally.replayed(7, 130, 1, 1); // matches
    tally.replayed(7, 127, 0, 0); // matches CPU 0's, not lost
    tally.replayed(8, 126, 1, 1); // in CPU 1's window: left out
    tally.replayed(8, 129, 1, 1); // after it: counted
    const FireAgreement& a = tally.agreement();
    CHECK(a.same_jiffy_cpu == 2);
    CHECK(a.replay_fires == 3);
    CHECK(a.lost_history.replay_fires == 1);
}

// A trace gives validate's model cause to find lost history only at a line
// saying so or at a sequence that may be one the kernel cannot print, read
// with validate's rules for what leaves a timer pending.
TEST_CASE("history in doubt: the sequences and lines that may lose a CPU's history") {
    const auto cancel = [](std::uint64_t t, std::uint32_t cpu, std::uint64_t timer) {
        return of_type(FtraceEventType::timer_cancel, t, cpu, timer);
    };
    const auto whole = [&](KernelFireCollector& c) {
        c.timer_event(cancel(1 * kMs, 0, 5));              // armed before the trace: its detach,
        c.timer_event(entry(1 * kMs + 10, 0, 5, 100, 100)); // then its expiry (unknown history)
        c.timer_event(entry(2 * kMs, 1, 6, 100, 100));      // first seen at its expiry: unknown history
        c.timer_event(start(3 * kMs, 0, 7, 120, 20));
        c.timer_event(cancel(3 * kMs + 5, 0, 7)); // a requeue: cancel, then start
        c.timer_event(start(3 * kMs + 5, 0, 7, 130, 30));
        c.timer_event(cancel(8 * kMs, 0, 7)); // the detach
        c.timer_event(entry(8 * kMs + 10, 0, 7, 130, 130));
        c.timer_event(of_type(FtraceEventType::timer_expire_exit, 8 * kMs + 20, 0, 7));
        c.timer_event(of_type(FtraceEventType::timer_init, 9 * kMs, 0, 7));
        c.timer_event(start(9 * kMs, 0, 7, 140, 40));
        c.timer_event(entry(10 * kMs, 0, 7, 140, 140)); // its detach lost: validate fires it all the same
        c.timer_event(start(11 * kMs, 0, 7, 150, 50));
    };
    KernelFireCollector plain;
    whole(plain);
    CHECK_FALSE(plain.history_in_doubt());

    KernelFireCollector restarted; // a start of a timer pending since its start
    whole(restarted);
    restarted.timer_event(start(12 * kMs, 0, 7, 160, 60));
    CHECK(restarted.history_in_doubt());

    KernelFireCollector unarmed; // an expiry of a timer known (its init) and never started since
    whole(unarmed);
    unarmed.timer_event(of_type(FtraceEventType::timer_init, 12 * kMs, 0, 8));
    unarmed.timer_event(cancel(13 * kMs, 0, 8));
    unarmed.timer_event(entry(13 * kMs + 10, 0, 8, 170, 170));
    CHECK(unarmed.history_in_doubt());

    KernelFireCollector elsewhere; // its cancel on another CPU is applied: no detach
    whole(elsewhere);
    elsewhere.timer_event(cancel(12 * kMs, 1, 7));
    elsewhere.timer_event(entry(12 * kMs + 10, 0, 7, 150, 150));
    CHECK(elsewhere.history_in_doubt());

    KernelFireCollector no_baseclk; // an expiry validate cannot check leaves the timer pending
    whole(no_baseclk);
    FtraceEvent bare = entry(12 * kMs, 0, 7, 150, 150);
    bare.baseclk.reset();
    no_baseclk.timer_event(bare);
    CHECK_FALSE(no_baseclk.history_in_doubt());
    no_baseclk.timer_event(start(13 * kMs, 0, 7, 170, 70)); // so its re-arm is a start of a pending timer
    CHECK(no_baseclk.history_in_doubt());

    KernelFireCollector marked;
    whole(marked);
    marked.other_line(30, "CPU:0 [LOST 4 EVENTS]");
    CHECK(marked.history_in_doubt());
}
