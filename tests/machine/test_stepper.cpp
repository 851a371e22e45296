// Stepper's interactive calls (add_timer, arm_now, cancel_now: what the
// browser playground uses between ticks) against its workload path: timers
// added and armed by hand at tick 0 must give the very ticks that the same
// timeouts given as a StepWorkload give, and a cancel or re-arm between ticks
// must act exactly then.
#include "sim/machine/stepper.hpp"
#include "wheel/core/heap_queue.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace timersim;

namespace {

struct Event {
    Jiffies tick;
    std::uint32_t timer;
    bool operator==(const Event&) const = default;
};

template <class Q>
std::vector<Event> fires(Stepper<Q>& s, Jiffies ticks) {
    std::vector<Event> out;
    for (Jiffies t = 0; t < ticks; ++t) {
        const TickReport r = s.step(true);
        for (const Fired& f : r.fired) out.push_back({r.tick, f.timer});
    }
    return out;
}

const std::vector<Jiffies> kTimeouts = {1, 63, 64, 255, 256, 300, 4095, 4096, 20000};

template <class Q>
void same_as_workload(const typename Q::Config& config) {
    StepWorkload w;
    w.timeouts = kTimeouts;
    Stepper<Q> given(config, w, nullptr);
    Stepper<Q> by_hand(config, StepWorkload{}, nullptr);
    for (Jiffies timeout : kTimeouts) {
        const std::uint32_t t = by_hand.add_timer();
        const Armed a = by_hand.arm_now(t, by_hand.queue().jiffies() + timeout);
        CHECK(a.timer == t);
        CHECK(a.at.pending);
        CHECK(a.at.level == given.placement(t).level);
        CHECK(a.at.slot == given.placement(t).slot);
    }
    const auto want = fires(given, 25000);
    CHECK(want.size() == kTimeouts.size());
    CHECK(fires(by_hand, 25000) == want);
}

} // namespace

TEST_CASE("timers armed by hand at tick 0 fire as the same timeouts given as a workload") {
    same_as_workload<ClassicWheel>({.hz = 1000});
    same_as_workload<ModernWheel>({.hz = 1000});
    same_as_workload<HeapQueue>({.hz = 1000});
}

TEST_CASE("cancel_now and arm_now between ticks act at that jiffy") {
    Stepper<ModernWheel> s({.hz = 250}, StepWorkload{}, nullptr);
    const std::uint32_t a = s.add_timer();
    const std::uint32_t b = s.add_timer();
    CHECK(s.timers() == 2);
    s.arm_now(a, s.queue().jiffies() + 10);
    s.arm_now(b, s.queue().jiffies() + 10);
    CHECK(fires(s, 5).empty());
    const Armed c = s.cancel_now(a);
    CHECK(c.cancel);
    CHECK(c.at.pending); // it was pending when cancelled
    CHECK_FALSE(s.placement(a).pending);
    // Re-armed at tick 5 for 3 more jiffies: 6.1 calc_index() rounds up even
    // on level 0 (bucket_expiry = expires + 1), so tick 9, not 8 nor 10.
    s.arm_now(b, s.queue().jiffies() + 3);
    CHECK(s.requested(b) == s.queue().jiffies() + 3);
    CHECK(fires(s, 20) == std::vector<Event>{{9, b}});
    CHECK(s.tick() == 25);
}

// The configurable cascading wheel with the classic preset places and
// cascades as ClassicWheel does (tests/wheel/test_configurable_wheel.cpp);
// its Stepper must then report the very cascades ClassicWheel's reports,
// tick by tick (the playground draws wheel:SPEC's moves from them). Levels
// differ by name only: CascadingWheel's are 1-based, as the tv arrays.
TEST_CASE("Stepper reports the cascades of wheel:classic as those of the classic wheel") {
    StepWorkload w;
    w.timeouts = kTimeouts;
    w.timeouts.push_back(70000);
    Stepper<ClassicWheel> classic({.hz = 1000, .slack = std::nullopt}, w, nullptr);
    CascadingWheel::Config config;
    config.hz = 1000;
    config.geometry = parse_wheel_spec("wheel:classic").geometry(1000);
    config.slack = std::nullopt;
    Stepper<CascadingWheel> wheel(config, w, nullptr);
    std::size_t moves = 0;
    for (int t = 0; t < 80000; ++t) {
        const TickReport a = classic.step(true);
        const TickReport b = wheel.step(true);
        REQUIRE(a.cascaded.size() == b.cascaded.size());
        for (std::size_t i = 0; i < a.cascaded.size(); ++i) {
            CHECK(a.cascaded[i].timer == b.cascaded[i].timer);
            CHECK(a.cascaded[i].to.level == b.cascaded[i].to.level);
            CHECK(a.cascaded[i].to.slot == b.cascaded[i].to.slot);
        }
        moves += b.cascaded.size();
    }
    CHECK(moves >= 4); // 300, 4095, 4096, 20000 and 70000 all cascade at least once
}
