// The 6.9+ timer-migration hierarchy for N CPUs on K NUMA nodes
// (sim/machine/migration_hierarchy.hpp), against trees worked out by hand
// from the kernel's rules (6.12 kernel/time/timer_migration.c: tmigr_init(),
// tmigr_get_group(), tmigr_setup_groups()), and what the nodes change on
// the simulated machine: which CPU expires an idle CPU's global timer.
#include "sim/machine/engine.hpp"
#include "sim/machine/migration_hierarchy.hpp"
#include "tests/machine/multi_cpu_fixture.hpp"
#include "wheel/kernel/modern69_wheel.hpp"

#include <doctest/doctest.h>

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

using namespace timersim;

namespace {

// A level as "first-last" CPU spans, e.g. "0-7 8-15".
std::string spans(const std::vector<MigrationGroup>& level) {
    std::string s;
    for (const MigrationGroup& g : level) {
        if (!s.empty()) s += ' ';
        s += std::to_string(g.first_cpu) + '-' + std::to_string(g.end_cpu - 1);
    }
    return s;
}

// Each group's node, "x" for one above the crossnode level.
std::string nodes(const std::vector<MigrationGroup>& level) {
    std::string s;
    for (const MigrationGroup& g : level) s += g.node == kNoNumaNode ? 'x' : static_cast<char>('0' + g.node);
    return s;
}

} // namespace

TEST_CASE("CPUs go to NUMA nodes in contiguous blocks, the larger first") {
    // 20 on 3: c * 3 / 20 is 0 for 0-6, 1 for 7-13, 2 for 14-19.
    CHECK(numa_node_of(6, 20, 3) == 0);
    CHECK(numa_node_of(7, 20, 3) == 1);
    CHECK(numa_node_of(13, 20, 3) == 1);
    CHECK(numa_node_of(14, 20, 3) == 2);
    CHECK(numa_node_of(19, 20, 3) == 2);
    // 9 on 4: 3, 2, 2, 2; no node is left empty.
    std::vector<unsigned> count(4);
    for (unsigned c = 0; c < 9; ++c) ++count[numa_node_of(c, 9, 4)];
    CHECK(count == std::vector<unsigned>{3, 2, 2, 2});
}

TEST_CASE("the hierarchy's groups are the kernel's for the CPUs and nodes") {
    SUBCASE("16 CPUs on 2 nodes") {
        // tmigr_init(): per node ceil(16/2) = 8; cpu levels ceil(order_base_2(8) = 3 / 3) = 1;
        // node levels ceil(order_base_2(2) = 1 / 3) = 1: 2 levels, crossnode level 1.
        // Level 0 holds one node's CPUs per group: 0-7 (node 0), 8-15 (node 1);
        // level 1 crosses nodes: one group of those two.
        const MigrationHierarchy h = build_migration_hierarchy(16, 2);
        CHECK(h.hierarchy_levels == 2);
        CHECK(h.crossnode_level == 1);
        REQUIRE(h.levels.size() == 2);
        CHECK(spans(h.levels[0]) == "0-7 8-15");
        CHECK(nodes(h.levels[0]) == "01");
        CHECK(spans(h.levels[1]) == "0-15");
        CHECK(nodes(h.levels[1]) == "x");
        CHECK(h.group_of_cpu[7] == 0);
        CHECK(h.group_of_cpu[8] == 1);
    }
    SUBCASE("20 CPUs on 3 nodes") {
        // Nodes 0-6, 7-13, 14-19. Per node ceil(20/3) = 7; cpu levels
        // ceil(order_base_2(7) = 3 / 3) = 1; node levels ceil(order_base_2(3) = 2 / 3) = 1:
        // 2 levels, crossnode level 1. Level 0: a group per node (none
        // has more than 8 CPUs); level 1: one group of the three.
        const MigrationHierarchy h = build_migration_hierarchy(20, 3);
        CHECK(h.hierarchy_levels == 2);
        CHECK(h.crossnode_level == 1);
        REQUIRE(h.levels.size() == 2);
        CHECK(spans(h.levels[0]) == "0-6 7-13 14-19");
        CHECK(nodes(h.levels[0]) == "012");
        CHECK(spans(h.levels[1]) == "0-19");
        CHECK(h.levels[1][0].end_child - h.levels[1][0].first_child == 3);
    }
    SUBCASE("20 CPUs on one node") {
        // cpu levels ceil(order_base_2(20) = 5 / 3) = 2, no node level:
        // level 0 runs of 8 CPUs, level 1 one group of them.
        const MigrationHierarchy h = build_migration_hierarchy(20, 1);
        CHECK(h.crossnode_level == 2);
        REQUIRE(h.levels.size() == 2);
        CHECK(spans(h.levels[0]) == "0-7 8-15 16-19");
        CHECK(nodes(h.levels[0]) == "000");
        CHECK(spans(h.levels[1]) == "0-19");
    }
    SUBCASE("48 CPUs on 2 nodes: the example of timer_migration.c's opening comment") {
        // Per node 24: cpu levels ceil(order_base_2(24) = 5 / 3) = 2, node
        // levels 1: 3 levels, crossnode level 2. Level 0: six groups of 8;
        // level 1, still per node: GRP0:0-2 and GRP0:3-5; level 2: one.
        const MigrationHierarchy h = build_migration_hierarchy(48, 2);
        CHECK(h.hierarchy_levels == 3);
        CHECK(h.crossnode_level == 2);
        REQUIRE(h.levels.size() == 3);
        CHECK(spans(h.levels[0]) == "0-7 8-15 16-23 24-31 32-39 40-47");
        CHECK(nodes(h.levels[0]) == "000111");
        CHECK(spans(h.levels[1]) == "0-23 24-47");
        CHECK(nodes(h.levels[1]) == "01");
        CHECK(spans(h.levels[2]) == "0-47");
        CHECK(h.levels[0][4].parent == 1);
    }
    SUBCASE("2 CPUs on 2 nodes: the crossnode level is 0") {
        // Per node 1: no cpu level (order_base_2(1) = 0), one node level:
        // level 0 already crosses nodes.
        const MigrationHierarchy h = build_migration_hierarchy(2, 2);
        CHECK(h.crossnode_level == 0);
        REQUIRE(h.levels.size() == 1);
        CHECK(spans(h.levels[0]) == "0-1");
        CHECK(nodes(h.levels[0]) == "x");
    }
    SUBCASE("72 CPUs on one node: a lone group of level 0 still gets a parent") {
        // 3 levels (order_base_2(72) = 7): nine groups at level 0, the
        // ninth alone in the second group of level 1.
        const MigrationHierarchy h = build_migration_hierarchy(72, 1);
        REQUIRE(h.levels.size() == 3);
        CHECK(h.levels[0].size() == 9);
        CHECK(spans(h.levels[1]) == "0-63 64-71");
        CHECK(spans(h.levels[2]) == "0-71");
    }
    SUBCASE("one CPU: no hierarchy") {
        CHECK(build_migration_hierarchy(1, 1).levels.empty());
    }
}

TEST_CASE("NUMA nodes out of 1..CPUs are refused") {
    CHECK_THROWS_AS(build_migration_hierarchy(4, 0), std::invalid_argument);
    CHECK_THROWS_AS(build_migration_hierarchy(4, 5), std::invalid_argument);
    std::vector<Modern69Wheel> queues = test::make_queues<Modern69Wheel>(2);
    CHECK_THROWS_AS(Engine<Modern69Wheel>(std::span<Modern69Wheel>(queues),
                                          EngineConfig{.hz = test::kHz, .nohz_idle = true, .numa_nodes = 3}),
                    std::invalid_argument);
}

namespace {

// 8 CPUs, NOHZ idle: CPUs 0 and 4 keep their ticks with a pinned timer
// re-armed at the current jiffy by its own callback (due at the next tick);
// at 1 s CPU 5 arms one plain mod_timer() timer 100 jiffies ahead and
// idles. Returns that timer's fire and CPU 5's metrics.
struct NodesRun {
    FireRecord fire{};
    CpuMetrics idle_cpu;
};

NodesRun run_on_nodes(unsigned numa_nodes) {
    constexpr std::uint64_t kSecond = 1'000'000'000;
    std::vector<Modern69Wheel> queues = test::make_queues<Modern69Wheel>(8);
    Engine<Modern69Wheel> engine(
        std::span<Modern69Wheel>(queues),
        EngineConfig{.hz = test::kHz, .costs = CostModel::zero(), .nohz_idle = true, .numa_nodes = numa_nodes});
    const TimerId keep0 = engine.create_timer();
    const TimerId keep4 = engine.create_timer();
    const TimerId global = engine.create_timer();
    test::Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        if (tag == 0) sim.arm(sim.current_cpu() == 0 ? keep0 : keep4, sim.jiffies(), ArmCall::mod_timer_pinned);
        if (tag == 1) sim.arm(global, sim.jiffies() + 100);
    };
    w.fire = [&](Sim& sim, const FireRecord& r) {
        if (r.id == keep0 || r.id == keep4) sim.arm(r.id, sim.jiffies(), ArmCall::mod_timer_pinned);
    };
    engine.set_workload(&w);
    engine.schedule_action(kSecond / 2, test::call_on(0, 0));
    engine.schedule_action(kSecond / 2, test::call_on(4, 0));
    engine.schedule_action(kSecond, test::call_on(5, 1));
    engine.run_until(2 * kSecond);
    const FireRecord* f = w.find(global);
    REQUIRE(f != nullptr);
    return {*f, engine.metrics(5)};
}

} // namespace

TEST_CASE("on two NUMA nodes an idle CPU's global timer is expired by its own node's migrator") {
    // One node: CPUs 0-7 are one group, whose migrator is CPU 0 (the
    // lowest whose tick runs); it expires CPU 5's timer. Two nodes (0-3,
    // 4-7): CPU 5's level-0 group is 4-7, whose migrator is CPU 4; CPU 0
    // sees that group active from level 1 and leaves it alone.
    const NodesRun one = run_on_nodes(1);
    const NodesRun two = run_on_nodes(2);
    CHECK(one.fire.cpu == 0);
    CHECK(two.fire.cpu == 4);
    // Either way CPU 5 sleeps through it, and it fires on the same jiffy.
    CHECK(one.idle_cpu.wakeups_by_timer == 0);
    CHECK(two.idle_cpu.wakeups_by_timer == 0);
    CHECK(one.idle_cpu.expired_by_remote == 1);
    CHECK(two.idle_cpu.expired_by_remote == 1);
    CHECK(one.fire.fired_jiffies == two.fire.fired_jiffies);
}
