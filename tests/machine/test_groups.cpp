// Timer groups (--by function|cpu|level|base, sim/machine/group_metrics.hpp):
// for every grouping, design and workload, the groups partition the run's
// totals: arms, fires, cancels and early fires sum to them, the groups'
// error histograms merge to the total's bin by bin, and the groups'
// softirq time plus the unattributed rest is the total softirq time. On
// generated workloads (one and several CPUs) and the real kernel capture.
#include "sim/machine/engine_run.hpp"
#include "workloads/generators/generator_catalog.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include "test_data_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;
const std::string kCapture = std::string(TEST_DATA_DIR) + "/kernel/capture-6.1-hz250.trace.xz";

WorkloadSpec generated(std::string_view list, std::uint32_t connections, std::uint64_t ticks) {
    GeneratorParams p;
    p.connections = connections;
    return WorkloadSpec{.name = std::string(list), .description = "",
                        .factory = workload_list_factory(list, p, ticks, kHz)};
}

void check_partition(const RunResult& r) {
    const GroupTable& t = r.groups;
    REQUIRE(t.names.size() == t.groups.size());
    GroupMetrics sum;
    for (const GroupMetrics& g : t.groups) {
        CHECK_FALSE(g.empty()); // empty groups are left out
        sum.merge(g);
    }
    CHECK(sum.arms == r.total.arms);
    CHECK(sum.fired == r.total.fired);
    CHECK(sum.cancelled == r.total.cancelled);
    CHECK(sum.early == r.total.early);
    CHECK(sum.error_jiffies.counts() == r.total.error_jiffies.counts());
    CHECK(sum.softirq_ns + t.unattributed_softirq_ns == r.total.softirq_work_ns);
    // Names are unique: a group is one function, CPU or level.
    CHECK(std::set<std::string>(t.names.begin(), t.names.end()).size() == t.names.size());
}

} // namespace

TEST_CASE("groups sum to the totals: every grouping, design and generated workload") {
    struct Case {
        std::string_view workload;
        unsigned cpus;
    };
    for (const Case w : {Case{"tcp-retransmit,socket-timeouts", 1}, Case{"mixed", 3}, Case{"connection-churn", 2},
                         Case{"uniform", 1}}) {
        for (GroupBy by : {GroupBy::function, GroupBy::cpu, GroupBy::level, GroupBy::base}) {
            for (Design d : all_designs()) {
                CAPTURE(w.workload);
                CAPTURE(to_string(by));
                CAPTURE(to_string(d));
                MachineConfig m;
                m.hz = kHz;
                m.cpus = w.cpus;
                m.ticks = 20 * kHz;
                m.group_by = by;
                const RunResult r = run_machine(d, m, generated(w.workload, 300, m.ticks));
                REQUIRE(r.total.fired > 0);
                CHECK(r.groups.by == by);
                check_partition(r);
                // mixed spreads its connections over the CPUs (churn keeps to CPU 0).
                if (by == GroupBy::cpu) CHECK(r.groups.groups.size() == (w.workload == "mixed" ? w.cpus : 1u));
                if (by == GroupBy::level) CHECK(r.groups.no_levels == (d == Design::heap));
                if (by == GroupBy::level && d == Design::heap) CHECK(r.groups.groups.size() == 1);
                // One base but 6.1's deferrable one (modern-6.9's three: below).
                if (by == GroupBy::base)
                    for (const std::string& n : r.groups.names) CHECK((n == "standard" || n == "deferrable"));
                // Some softirq time is every design's expiries'.
                std::uint64_t attributed = 0;
                for (const GroupMetrics& g : r.groups.groups) attributed += g.softirq_ns;
                CHECK(attributed > 0);
            }
        }
    }
}

TEST_CASE("function groups are the generators' labels") {
    MachineConfig m;
    m.hz = kHz;
    m.ticks = 10 * kHz;
    const RunResult r = run_machine(Design::modern, m, generated("mixed", 200, m.ticks));
    const std::set<std::string> names(r.groups.names.begin(), r.groups.names.end());
    // mixed: every part's timers, named as the kernel callback they model.
    for (const char* label : {"tcp_write_timer", "tcp_delack_timer", "sk_idle_timer", "tcp_keepalive_timer",
                              "tw_timer_handler"}) {
        CAPTURE(label);
        CHECK(names.count(label) == 1);
    }
    CHECK(names.count("(no label)") == 0);
}

TEST_CASE("cpu groups are the per-CPU fires and cancels; level groups are the queue's levels") {
    MachineConfig m;
    m.hz = kHz;
    m.cpus = 2;
    m.ticks = 10 * kHz;
    m.group_by = GroupBy::cpu;
    const RunResult r = run_machine(Design::classic, m, generated("tcp-retransmit", 200, m.ticks));
    REQUIRE(r.groups.names == std::vector<std::string>{"0", "1"});
    // Fires count on the base that ran them, as the per-CPU metrics do.
    for (unsigned c = 0; c < 2; ++c) {
        CHECK(r.groups.groups[c].fired == r.per_cpu[c].fired);
        CHECK(r.groups.groups[c].error_jiffies.counts() == r.per_cpu[c].error_jiffies.counts());
    }
    m.cpus = 1;
    m.group_by = GroupBy::level;
    const RunResult classic = run_machine(Design::classic, m, generated("uniform", 200, m.ticks));
    for (const std::string& n : classic.groups.names) CHECK(n.rfind("tv", 0) == 0);
    const RunResult modern = run_machine(Design::modern, m, generated("uniform", 200, m.ticks));
    for (const std::string& n : modern.groups.names) CHECK(n.rfind("level ", 0) == 0);
    CHECK(modern.groups.names.size() > 1); // uniform delays reach several levels
}

TEST_CASE("base groups: modern-6.9's local, global and deferrable bases sum to the totals") {
    // mixed on 3 CPUs with NOHZ idle: arms of every kind, remote expiries.
    MachineConfig m;
    m.hz = kHz;
    m.cpus = 3;
    m.nohz_idle = true;
    m.ticks = 20 * kHz;
    m.group_by = GroupBy::base;
    const RunResult r = run_machine(Design::modern_6_9, m, generated("mixed", 300, m.ticks));
    REQUIRE(r.total.fired > 0);
    check_partition(r);
    for (const std::string& n : r.groups.names) CHECK((n == "local (pinned)" || n == "global" || n == "deferrable"));
    const auto& n = r.groups.names;
    CHECK(std::find(n.begin(), n.end(), "global") != n.end());
}

TEST_CASE("groups sum to the totals on the real kernel capture, and function groups are its callbacks") {
    const TraceSummary summary = summarize_trace(kCapture, TraceKind::ftrace, kHz);
    for (GroupBy by : {GroupBy::function, GroupBy::cpu, GroupBy::level, GroupBy::base}) {
        for (Design d : all_designs()) {
            CAPTURE(to_string(by));
            CAPTURE(to_string(d));
            MachineConfig m;
            m.hz = summary.header.hz;
            m.start_jiffies = summary.header.start_jiffies;
            m.cpus = summary.cpus;
            m.ticks = summary.last_event_ns / (1'000'000'000ull / m.hz) + 100;
            m.group_by = by;
            const RunResult r = run_machine(
                d, m,
                WorkloadSpec{.name = "ftrace", .description = "",
                             .factory = trace_replay(kCapture, TraceKind::ftrace, summary.header)});
            REQUIRE(r.total.fired > 0);
            check_partition(r);
            if (by == GroupBy::function) {
                // The capture's callbacks (ftrace function=), not one anonymous group.
                CHECK(r.groups.names.size() > 3);
                const auto& n = r.groups.names;
                CHECK(std::find(n.begin(), n.end(), "process_timeout") != n.end());
            }
        }
    }
}

TEST_CASE("the us error histogram is collected only when asked, and then has every fire") {
    MachineConfig m;
    m.hz = kHz;
    m.ticks = 10 * kHz;
    const RunResult off = run_machine(Design::modern, m, generated("tcp-retransmit", 200, m.ticks));
    CHECK(off.total.error_us.empty());
    m.error_us_histogram = true;
    const RunResult on = run_machine(Design::modern, m, generated("tcp-retransmit", 200, m.ticks));
    CHECK(on.total.error_us.total() == on.total.fired);
    // Whole us, rounded down, of the exact ns extremes.
    CHECK(on.total.error_us.max() == on.total.error_ns.max() / 1000);
    CHECK(on.total.error_us.min() == on.total.error_ns.min() / 1000);
    // Collecting it changes nothing else.
    CHECK(on.total.error_jiffies.counts() == off.total.error_jiffies.counts());
    CHECK(on.total.softirq_work_ns == off.total.softirq_work_ns);
}
