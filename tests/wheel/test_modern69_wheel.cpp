// modern-6.9 (Modern69Wheel): which base a timer goes to, the order a run
// goes through them, a budgeted run stepping across bases, and the remote
// run of the global base alone.
#include "wheel/kernel/modern69_wheel.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace timersim;

namespace {

constexpr Jiffies kStart = 5000;

Modern69Wheel at_start() { return Modern69Wheel(Modern69Wheel::Config{.hz = 250, .start_jiffies = kStart}); }

} // namespace

TEST_CASE("modern-6.9: the base follows TIMER_PINNED and TIMER_DEFERRABLE") {
    Modern69Wheel q = at_start();
    const TimerId pinned = q.create();
    const TimerId global = q.create();
    const TimerId deferrable = q.create(TimerFlags{.deferrable = true});
    CHECK(q.arm(pinned, kStart + 10, ArmCall::mod_timer_pinned) == ArmOutcome::queued);
    CHECK(q.arm(global, kStart + 10) == ArmOutcome::queued);
    CHECK(q.arm(deferrable, kStart + 10, ArmCall::mod_timer_pinned) == ArmOutcome::queued);
    CHECK(q.base_of(pinned) == Modern69Wheel::base_local);
    CHECK(q.base_of(global) == Modern69Wheel::base_global);
    CHECK(q.base_of(deferrable) == Modern69Wheel::base_def); // pinned or not
    CHECK(q.placement(deferrable).deferrable_base);
    CHECK(q.pending() == 3);
    // Re-armed unpinned, a pinned timer leaves BASE_LOCAL for BASE_GLOBAL;
    // mod_timer_pending() keeps the base.
    CHECK(q.arm(pinned, kStart + 200) == ArmOutcome::queued);
    CHECK(q.base_of(pinned) == Modern69Wheel::base_global);
    CHECK(q.arm(pinned, kStart + 300, ArmCall::mod_timer_pending) == ArmOutcome::queued);
    CHECK(q.base_of(pinned) == Modern69Wheel::base_global);
    CHECK(q.wheel(Modern69Wheel::base_local).pending() == 0);
    CHECK(q.wheel(Modern69Wheel::base_global).pending() == 2);
    // The same bucket of its own base: the shortcut, no base switch.
    CHECK(q.arm(global, kStart + 10) == ArmOutcome::same_expiry);
    CHECK(q.arm(global, kStart + 10, ArmCall::mod_timer_pinned) == ArmOutcome::same_expiry);
    CHECK(q.base_of(global) == Modern69Wheel::base_global);
}

TEST_CASE("modern-6.9: a run goes through LOCAL, GLOBAL, DEF, also one expiry at a time") {
    for (const bool stepped : {false, true}) {
        Modern69Wheel q = at_start();
        const TimerId def = q.create(TimerFlags{.deferrable = true});
        const TimerId global = q.create();
        const TimerId local = q.create();
        // Armed in the opposite order of the run's.
        q.arm(def, kStart + 3);
        q.arm(global, kStart + 3);
        q.arm(local, kStart + 3, ArmCall::mod_timer_pinned);
        q.set_jiffies(kStart + 4);
        REQUIRE(q.softirq_due());
        std::vector<TimerId> order;
        const auto take = [&](const FiredTimer& f) { order.push_back(f.id); };
        if (stepped) {
            CHECK(q.run_softirq(take, 1));
            while (q.resume_softirq(take, 1)) {}
        } else {
            q.run_softirq(take);
        }
        CHECK(order == std::vector<TimerId>{local, global, def});
        CHECK(q.counters().softirq_runs == 1);
        CHECK(q.counters().expired == 3);
        CHECK(!q.softirq_due());
    }
}

TEST_CASE("modern-6.9: a remote run expires the global base only") {
    Modern69Wheel q = at_start();
    const TimerId local = q.create();
    const TimerId global = q.create();
    const TimerId def = q.create(TimerFlags{.deferrable = true});
    q.arm(local, kStart + 3, ArmCall::mod_timer_pinned);
    q.arm(global, kStart + 3);
    q.arm(def, kStart + 3);
    CHECK(!q.remote_due());
    q.set_jiffies(kStart + 4);
    CHECK(q.remote_due());
    std::vector<TimerId> fired;
    const auto take = [&](const FiredTimer& f) { fired.push_back(f.id); };
    CHECK(q.run_remote_softirq(take, 1)); // stopped right after its one expiry
    CHECK(!q.resume_remote_softirq(take, 1));
    CHECK(fired == std::vector<TimerId>{global});
    CHECK(!q.remote_due());
    CHECK(q.is_pending(local));
    CHECK(q.is_pending(def));
    CHECK(q.softirq_due()); // the CPU's own bases are still due
    // Deferrable timers never wake the CPU; the local one does.
    CHECK(q.next_timer_interrupt() == kStart + 4);
}

TEST_CASE("modern-6.9: the layout draws each base's levels, global first") {
    Modern69Wheel q = at_start();
    const TimerId global = q.create();
    const TimerId local = q.create();
    const TimerId def = q.create(TimerFlags{.deferrable = true});
    q.arm(global, kStart + 3);
    q.arm(local, kStart + 3, ArmCall::mod_timer_pinned);
    q.arm(def, kStart + 3);
    const QueueLayout l = q.layout();
    REQUIRE(l.rows.size() == 3 * q.depth());
    CHECK(l.rows[0].name == "L0");
    CHECK(l.rows[q.depth()].name == "pL0");
    CHECK(l.deferrable_row == 2 * q.depth());
    CHECK(l.rows[l.deferrable_row].name == "dL0");
    for (const unsigned row : {0u, q.depth(), l.deferrable_row}) {
        CHECK(l.rows[row].total == 1);
        CHECK(l.rows[row].counts.at(q.placement(global).slot) == 1); // the same bucket on each base
    }
}
