// The comparison on the simulated machine (`timersim compare`): every design
// sees the same operations, the reports are deterministic and carry the
// documented fields, the heap is exact, only the classic wheel cascades.
#include "sim/machine/comparison.hpp"
#include "sim/report/comparison_report.hpp"
#include "workloads/generators/churn_workload.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace timersim;

namespace {

MachineConfig small_machine(unsigned hz) {
    MachineConfig m;
    m.hz = hz;
    m.ticks = 90ull * hz;
    return m;
}

WorkloadSpec churn(const MachineConfig& m, std::uint64_t seed = 42, double interval_ms = 700) {
    ConnectionChurnConfig w;
    w.hz = m.hz;
    w.connections = 3000;
    w.message_interval_ms = interval_ms;
    w.seed = seed;
    return WorkloadSpec{.name = "connection-churn",
                        .description = "churn, \"quoted\"",
                        .params = {{"seed", seed}},
                        .factory = churn_workload(w, m.ticks, m.tick_jitter_ns)};
}

const RunResult& of(const Comparison& c, Design d) {
    for (const auto& r : c.runs)
        if (r.design == d) return r;
    throw std::logic_error("design missing");
}

const std::vector<Design> kAll = all_designs();

} // namespace

TEST_CASE("same machine and seed give byte-identical reports; another seed does not") {
    const auto m = small_machine(250);
    const auto a = compare_designs(kAll, m, churn(m));
    const auto b = compare_designs(kAll, m, churn(m));
    CHECK(format_comparison_text(a) == format_comparison_text(b));
    CHECK(format_comparison_json(a) == format_comparison_json(b));
    CHECK(format_comparison_csv(a) == format_comparison_csv(b));
    CHECK(format_comparison_json(compare_designs(kAll, m, churn(m, 43))) != format_comparison_json(a));
    // Designs on threads of their own give the same result as one after the other.
    int calls = 0;
    double last = 0;
    const auto threaded = compare_designs(kAll, m, churn(m), [&](double f) {
        ++calls;
        CHECK(f >= last);
        last = f;
    }, nullptr, 3);
    CHECK(format_comparison_json(threaded) == format_comparison_json(a));
    CHECK(calls > 0);
    CHECK(last == 1.0);
}

TEST_CASE("every design sees the same operations; the heap is exact, only the classic wheel cascades") {
    for (unsigned hz : {100u, 250u, 1000u}) {
        CAPTURE(hz);
        auto m = small_machine(hz);
        m.classic_slack = std::nullopt;
        const auto c = compare_designs(kAll, m, churn(m));
        REQUIRE(c.runs.size() == 3);
        const auto& heap = of(c, Design::heap).total;
        const auto& classic = of(c, Design::classic).total;
        const auto& modern = of(c, Design::modern).total;
        CHECK(heap.arms > 0);
        CHECK(heap.arms == classic.arms);
        CHECK(heap.arms == modern.arms);
        REQUIRE(heap.fired > 0);
        CHECK(heap.error_jiffies.min() == 0);
        CHECK(heap.error_jiffies.max() == 0);
        // Without slack the classic wheel is exact too, but pays in cascades.
        CHECK(classic.error_jiffies.counts() == heap.error_jiffies.counts());
        CHECK(classic.counters.cascade_moves > 0);
        CHECK(modern.counters.cascade_moves == 0);
        // The modern wheel is never early and at most a level-4 granule late.
        CHECK(modern.error_jiffies.min() >= 0);
        CHECK(modern.early == 0);
        CHECK(modern.error_jiffies.max() <= 4096);
        CHECK(modern.error_jiffies.percentile(99) > 0);
    }
}

TEST_CASE("the designs run in the order asked for; bad selections are refused") {
    const auto m = small_machine(250);
    const std::vector<Design> two{Design::heap, Design::modern};
    const auto c = compare_designs(two, m, churn(m));
    REQUIRE(c.runs.size() == 2);
    CHECK(c.runs[0].design == Design::heap);
    CHECK(c.runs[1].design == Design::modern);
    CHECK_THROWS_AS(compare_designs(std::vector<Design>{}, m, churn(m)), std::invalid_argument);
    const std::vector<Design> twice{Design::modern, Design::modern};
    CHECK_THROWS_AS(compare_designs(twice, m, churn(m)), std::invalid_argument);
    auto bad = m;
    bad.hz = 0;
    CHECK_THROWS_AS(compare_designs(kAll, bad, churn(m)), std::invalid_argument);
}

TEST_CASE("the reports carry every design, the schema and the trade-off") {
    const auto m = small_machine(250);
    const auto c = compare_designs(kAll, m, churn(m));
    const auto json = format_comparison_json(c);
    CHECK(json.find(fmt::format("\"schema\": \"{}\"", kCompareJsonSchema)) != std::string::npos);
    for (const char* key : {"\"name\": \"classic\"", "\"name\": \"modern\"", "\"name\": \"heap\"",
                            "\"error_jiffies\"", "\"error_ms\"", "\"p99.9\"", "\"cascades\"", "\"series\"",
                            "\"per_tick_p99_ns\"", "\"peak_bytes\"", "\"verdict\""})
        CHECK_MESSAGE(json.find(key) != std::string::npos, key);
    // The workload's description is a JSON string, quotes escaped.
    CHECK(json.find(R"("description": "churn, \"quoted\"")") != std::string::npos);

    const auto csv = format_comparison_csv(c);
    CHECK(csv.rfind("design,metric,value\n", 0) == 0);
    CHECK(csv.find("\nmodern,error_p99_jiffies,") != std::string::npos);
    CHECK(csv.find("\nheap,error_max_jiffies,0\n") != std::string::npos);
    CHECK(csv.find("\nmodern,cascade_moves,0\n") != std::string::npos);

    const auto text = format_comparison_text(c);
    CHECK(text.find("Verdict: classic: ") != std::string::npos);
    CHECK(text.find("\nPrecision error histogram") != std::string::npos);
    const auto verdict = comparison_verdict(c);
    CHECK(verdict.find("modern: 0 cascade moves") != std::string::npos);
    CHECK(verdict.find("heap: 0 cascade moves, p99 error +0 jiffies") != std::string::npos);
}

TEST_CASE("softirq cost per tick counts the ticks that ran no softirq as zero") {
    // Sparse timers on the modern wheel: most ticks raise nothing, so the
    // per-tick p99 is 0 while the longest run is not.
    auto m = small_machine(250);
    const std::vector<Design> modern{Design::modern};
    ConnectionChurnConfig w;
    w.hz = m.hz;
    w.connections = 5;
    w.message_interval_ms = 20000;
    const WorkloadSpec sparse{.name = "sparse", .description = "sparse",
                              .factory = churn_workload(w, m.ticks, 0)};
    const auto c = compare_designs(modern, m, sparse);
    const auto& r = c.runs.front();
    REQUIRE(r.total.softirq_ns.count() > 0);
    REQUIRE(r.total.softirq_ns.count() * 100 < m.ticks);
    const auto csv = format_comparison_csv(c);
    CHECK(csv.find("\nmodern,softirq_per_tick_p99_ns,0\n") != std::string::npos);
    CHECK(csv.find(fmt::format("\nmodern,softirq_max_stall_ns,{}\n", r.total.max_softirq_ns)) != std::string::npos);
    CHECK(r.total.max_softirq_ns > 0);
}

namespace {

double csv_value(const std::string& csv, std::string_view design, std::string_view metric) {
    const std::string key = fmt::format("\n{},{},", design, metric);
    const auto at = csv.find(key);
    REQUIRE(at != std::string::npos);
    return std::stod(csv.substr(at + key.size()));
}

} // namespace

TEST_CASE("the share of the CPU never exceeds 100 %, also when arm/cancel work does not fit in the run") {
    // Arm/cancel (task) work is accounted but not put on the simulated time
    // line: at 0.1 s per enqueue, 3000 connections need far more CPU time
    // than the 90 s the run spans. The share used to be that work over the
    // span (over 300 %).
    auto m = small_machine(250);
    m.costs.enqueue_ns = 100'000'000;
    const std::vector<Design> modern{Design::modern};
    const auto heavy = compare_designs(modern, m, churn(m));
    const RunResult& r = heavy.runs.front();
    REQUIRE(r.total.task_work_ns > r.end_ns);
    const std::string csv = format_comparison_csv(heavy);
    CHECK(csv_value(csv, "modern", "cpu_share_percent") == doctest::Approx(100.0));
    CHECK(format_comparison_text(heavy).find("share of the CPU: ") != std::string::npos);

    // When the work fits, the share is the work over the span, as before.
    const auto light = compare_designs(modern, small_machine(250), churn(small_machine(250)));
    const RunResult& l = light.runs.front();
    REQUIRE(l.total.timer_work_ns() < l.end_ns);
    CHECK(csv_value(format_comparison_csv(light), "modern", "cpu_share_percent") ==
          doctest::Approx(100.0 * static_cast<double>(l.total.timer_work_ns()) / static_cast<double>(l.end_ns)));
    CHECK(format_comparison_text(light).find("share of the CPU: ") == std::string::npos);
}
