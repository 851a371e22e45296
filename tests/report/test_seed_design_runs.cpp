// The seeds' designs on the whole machine: run_machine() for each against
// the heap on the same workload (one CPU and four, the tick always on or
// NOHZ, a bound on expiries per softirq), and their reports: the paper's
// costs and held garbage present for them, absent for the kernel designs.
#include "sim/machine/engine_run.hpp"
#include "sim/report/run_report.hpp"
#include "workloads/generators/churn_workload.hpp"
#include "workloads/generators/generator_catalog.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace timersim;

namespace {

MachineConfig machine(unsigned cpus, bool nohz, std::uint32_t bound) {
    MachineConfig m;
    m.hz = 250;
    m.cpus = cpus;
    m.ticks = 3000;
    m.costs = CostModel::zero(); // no simulated delay: lateness is the queue's alone
    m.nohz_idle = nohz;
    m.max_expiries_per_softirq = bound;
    return m;
}

WorkloadSpec retransmits(const MachineConfig& m) {
    return WorkloadSpec{.name = "tcp-retransmit", .description = "tcp-retransmit",
                        .factory = generator_factory("tcp-retransmit", GeneratorParams{}, 400, m.ticks, m.hz)};
}

WorkloadSpec churn(const MachineConfig& m) {
    ConnectionChurnConfig w;
    w.hz = m.hz;
    w.connections = 800;
    w.message_interval_ms = 300;
    w.seed = 9;
    return WorkloadSpec{.name = "connection-churn", .description = "churn",
                        .factory = churn_workload(w, m.ticks, m.tick_jitter_ns)};
}

std::vector<Design> seed_designs() {
    std::vector<Design> out;
    for (Design d : every_design())
        if (design_info(d).paper_costs) out.push_back(d);
    return out;
}

} // namespace

TEST_CASE("registry: names, aliases, the default comparison and every design") {
    CHECK(all_designs() == std::vector<Design>{Design::classic, Design::modern, Design::heap});
    // Every design but the configurable wheel, which needs a geometry.
    const std::vector<Design> every = every_design();
    CHECK(every.size() + 1 == design_table().size());
    CHECK(std::find(every.begin(), every.end(), Design::wheel) == every.end());
    CHECK(seed_designs().size() == 7);
    for (const DesignInfo& info : design_table()) {
        CHECK(design_from_string(info.name) == info.design);
        CHECK(to_string(info.design) == info.name);
        for (std::string_view alias : info.aliases) CHECK(design_from_string(alias) == info.design);
    }
    CHECK(design_from_string("scheme3") == Design::heap);
    CHECK(!design_from_string("scheme7"));
}

TEST_CASE("seed designs on the machine fire what the heap fires, on the same jiffies") {
    for (const unsigned cpus : {1u, 4u})
        for (const bool nohz : {false, true})
            for (const std::uint32_t bound : {0u, 3u}) {
                const MachineConfig m = machine(cpus, nohz, bound);
                for (const auto& spec : {retransmits(m), churn(m)}) {
                    const RunResult heap = run_machine(Design::heap, m, spec);
                    for (const Design d : seed_designs()) {
                        CAPTURE(to_string(d));
                        CAPTURE(cpus);
                        CAPTURE(nohz);
                        CAPTURE(bound);
                        CAPTURE(spec.name);
                        const RunResult r = run_machine(d, m, spec);
                        CHECK(r.total.early == 0);
                        CHECK(r.total.counters.paper.expiry == r.total.counters.expired);
                        // Sorted insertion adds the elements walked past.
                        if (d == Design::scheme2 || d == Design::scheme5)
                            CHECK(r.total.counters.paper.start >= r.total.counters.enqueues);
                        else
                            CHECK(r.total.counters.paper.start == r.total.counters.enqueues);
                        // With a bound, which timers wait for the next softirq
                        // run is each design's own (the heap takes the earliest
                        // first), and callbacks then re-arm at other times.
                        if (bound != 0) continue;
                        // Zero cost: every timer on its jiffy, as on the heap,
                        // so the workload sees the same machine.
                        CHECK(r.total.arms == heap.total.arms);
                        CHECK(r.total.fired == heap.total.fired);
                        CHECK(r.total.pending == heap.total.pending);
                        CHECK(r.total.error_jiffies.max() == heap.total.error_jiffies.max());
                        CHECK(r.total.error_jiffies.mean() == heap.total.error_jiffies.mean());
                    }
                }
            }
}

TEST_CASE("the run report shows the paper's costs and held garbage only for the designs that count them") {
    const MachineConfig m = machine(1, false, 0);
    for (const Design d : every_design()) {
        CAPTURE(to_string(d));
        const RunResult r = run_machine(d, m, churn(m));
        const std::string text = format_run_text(r);
        const std::string json = format_run_json(r);
        const bool paper = design_info(d).paper_costs;
        const bool garbage = design_info(d).holds_garbage;
        CHECK((text.find("Varghese-Lauck costs") != std::string::npos) == paper);
        CHECK((json.find("\"paper_costs\"") != std::string::npos) == paper);
        CHECK((text.find("Cancelled entries still held") != std::string::npos) == garbage);
        CHECK((json.find("\"garbage\"") != std::string::npos) == garbage);
        if (garbage) CHECK(r.total.counters.peak_garbage > 0); // churn cancels and re-arms
        CHECK(format_run_json(run_machine(d, m, churn(m))) == json); // deterministic
    }
}
