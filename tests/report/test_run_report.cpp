// The run report (sim/report/run_report.hpp): same run, same bytes; the
// multi-CPU report has its per-CPU part.
#include "sim/machine/engine_run.hpp"
#include "sim/report/run_report.hpp"
#include "workloads/generators/churn_workload.hpp"
#include "workloads/generators/generator_catalog.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;

MachineConfig machine(unsigned cpus) {
    MachineConfig m;
    m.hz = kHz;
    m.cpus = cpus;
    m.ticks = 2500;
    return m;
}

WorkloadSpec churn(const MachineConfig& m) {
    ConnectionChurnConfig w;
    w.hz = m.hz;
    w.connections = 1000;
    w.message_interval_ms = 500;
    w.seed = 7;
    return WorkloadSpec{.name = "connection-churn", .description = "churn",
                        .factory = churn_workload(w, m.ticks, m.tick_jitter_ns)};
}

// Connections spread over the CPUs (the generators place connection c on CPU c % cpus).
WorkloadSpec retransmits(const MachineConfig& m) {
    return WorkloadSpec{.name = "tcp-retransmit", .description = "tcp-retransmit",
                        .factory = generator_factory("tcp-retransmit", GeneratorParams{}, 400, m.ticks, m.hz)};
}

} // namespace

TEST_CASE("same inputs and seeds give byte-identical run reports") {
    for (Design d : all_designs()) {
        CAPTURE(to_string(d));
        const MachineConfig c = machine(1);
        const RunResult a = run_machine(d, c, churn(c));
        const RunResult b = run_machine(d, c, churn(c));
        CHECK(a.total.fired > 0);
        CHECK(format_run_json(a) == format_run_json(b));
        CHECK(format_run_text(a) == format_run_text(b));
    }
}

TEST_CASE("a multi-CPU run report is deterministic and shows every CPU") {
    for (Design d : all_designs()) {
        CAPTURE(to_string(d));
        MachineConfig m = machine(4);
        m.tick_jitter_ns = 300'000;
        m.nohz_idle = d != Design::classic;
        const RunResult a = run_machine(d, m, retransmits(m));
        const RunResult b = run_machine(d, m, retransmits(m));
        REQUIRE(a.per_cpu.size() == 4);
        CHECK(a.total.arms > 0);
        CHECK(format_run_json(a) == format_run_json(b));
        CHECK(format_run_text(a) == format_run_text(b));
        const std::string text = format_run_text(a);
        CHECK(text.find("Per CPU") != std::string::npos);
        const std::string json = format_run_json(a);
        CHECK(json.find("\"total\": {") != std::string::npos);
        CHECK(json.find("\"cpu\": 3,") != std::string::npos);
    }
}
