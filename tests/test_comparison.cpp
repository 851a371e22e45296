// The queue comparison: deterministic, the heap exact, the wheels within
// their documented bounds, and the classic wheel (slack off) exact too.
#include "sim/comparison_report.hpp"
#include "sim/queue_comparison.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace timersim;

namespace {

ComparisonConfig small_config(unsigned hz) {
    ComparisonConfig c;
    c.workload.hz = hz;
    c.workload.connections = 3000;
    c.workload.message_interval_ms = 700;
    c.workload.seed = 42;
    c.duration_s = 90;
    return c;
}

const DesignResult& of(const ComparisonResult& r, Design d) {
    for (const auto& x : r.designs)
        if (x.design == d) return x;
    throw std::logic_error("design missing");
}

} // namespace

TEST_CASE("same config and seed give byte-identical reports") {
    const auto a = run_comparison(small_config(250));
    const auto b = run_comparison(small_config(250));
    CHECK(format_comparison_text(a) == format_comparison_text(b));
    CHECK(format_comparison_json(a) == format_comparison_json(b));
    auto other = small_config(250);
    other.workload.seed = 43;
    CHECK(format_comparison_json(run_comparison(other)) != format_comparison_json(a));
}

TEST_CASE("every design sees the same operations; errors stay within each design's bounds") {
    for (unsigned hz : {100u, 250u, 1000u}) {
        CAPTURE(hz);
        auto config = small_config(hz);
        config.classic_slack = std::nullopt;
        const auto r = run_comparison(config);
        const auto& heap = of(r, Design::heap);
        const auto& classic = of(r, Design::classic);
        const auto& modern = of(r, Design::modern);
        CHECK(heap.arms == classic.arms);
        CHECK(heap.arms == modern.arms);
        CHECK(heap.arms > 0);
        // The heap is exact; the classic wheel without slack is exact too.
        REQUIRE(heap.error_jiffies.total() > 0);
        CHECK(heap.error_jiffies.min() == 0);
        CHECK(heap.error_jiffies.max() == 0);
        CHECK(classic.error_jiffies.counts() == heap.error_jiffies.counts());
        // The modern wheel is never early and at most one level-2 granule
        // late for these timeouts (all below 60 s: level <= 4 at HZ=1000).
        CHECK(modern.error_jiffies.min() >= 1);
        CHECK(modern.error_jiffies.max() <= 4096);
        CHECK(modern.counters.cascade_moves == 0);
        // Timers the wheel fires late can be re-armed before they fire, so the
        // modern wheel fires at most as many as the heap.
        CHECK(modern.error_jiffies.total() <= heap.error_jiffies.total());
    }
}

TEST_CASE("default slack delays classic timers but never makes them early") {
    auto config = small_config(1000);
    config.workload.message_interval_ms = 100000; // quiet connections: idle timers fire
    const auto r = run_comparison(config);
    const auto& classic = of(r, Design::classic);
    CHECK(classic.error_jiffies.min() >= 0);
    // 60 s at HZ=1000 gets up to 60000/256 = 234 jiffies of slack.
    CHECK(classic.error_jiffies.max() > 0);
    CHECK(classic.error_jiffies.max() <= 234);
    CHECK(classic.counters.cascade_moves > 0);
}

TEST_CASE("reports carry every design and the documented JSON keys") {
    const auto r = run_comparison(small_config(250));
    const auto json = format_comparison_json(r);
    for (const char* key : {"\"schema\": \"timersim.compare.v1\"", "\"name\": \"classic\"", "\"name\": \"modern\"",
                            "\"name\": \"heap\"", "\"error_jiffies\"", "\"p99\"", "\"cascade_moves\"",
                            "\"error_histogram\""})
        CHECK(json.find(key) != std::string::npos);
    const auto csv = format_comparison_csv(r);
    CHECK(csv.rfind("design,metric,value\n", 0) == 0);
    CHECK(csv.find("modern,error_p99_jiffies,") != std::string::npos);
    const auto text = format_comparison_text(r);
    CHECK(text.find("Verdict:") != std::string::npos);
}

TEST_CASE("bad configurations are refused") {
    auto c = small_config(250);
    c.workload.hz = 0;
    CHECK_THROWS_AS(run_comparison(c), std::invalid_argument);
    c = small_config(250);
    c.duration_s = -1;
    CHECK_THROWS_AS(run_comparison(c), std::invalid_argument);
    c = small_config(250);
    c.designs.clear();
    CHECK_THROWS_AS(run_comparison(c), std::invalid_argument);
}
