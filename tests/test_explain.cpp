// explain_modern / explain_classic agree with the reference vectors and,
// more importantly, with what the real queues do with the same timer.
#include "wheel/classic_wheel.hpp"
#include "wheel/explain.hpp"
#include "wheel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <random>

using namespace timersim;

TEST_CASE("explain_modern matches the reference vectors") {
    // reference §8.1: (clk, expires) -> level, idx, bucket_expiry
    struct Row { Jiffies clk, expires; unsigned hz, level, idx; Jiffies b; };
    const Row rows[] = {
        {4294667296, 4294667336, 1000, 0, 9, 4294667337},      // HZ1000 delack min
        {4294667296, 4294668296, 1000, 2, 129, 4294668352},    // HZ1000 SYN RTO 1 s
        {4294667296, 4301867296, 1000, 6, 411, 4302045184},    // HZ1000 keepalive 2 h
        {4294892296, 4294907296, 250, 3, 203, 4294907392},     // HZ250 TIME_WAIT
        {0, 132120576, 100, 7, 511, 132120576},                // HZ100 clamp
        {1000, 999, 250, 0, 40, 1000},                         // past
    };
    for (const auto& r : rows) {
        const auto e = explain_modern(r.clk, r.expires, r.hz);
        CHECK(e.index.level == r.level);
        CHECK(e.index.idx == r.idx);
        CHECK(e.index.bucket_expiry == r.b);
        CHECK(e.late == static_cast<std::int64_t>(r.b - r.expires));
    }
    CHECK(explain_modern(0, 132120576, 100).index.clamped);
    CHECK(explain_modern(1000, 999, 250).index.past);
}

TEST_CASE("explain_classic follows the reference cascade paths") {
    const auto g = classic::Geometry::normal();
    SUBCASE("tv3[1] > tv2[1] > tv1[0]") {
        const auto e = explain_classic(0, 16640, std::nullopt, g);
        REQUIRE(e.hops.size() == 3);
        CHECK(e.hops[0].slot.array == 3);
        CHECK(e.hops[0].slot.slot == 1);
        CHECK(e.hops[1].timer_jiffies == 16384);
        CHECK(e.hops[1].slot.array == 2);
        CHECK(e.hops[1].slot.slot == 1);
        CHECK(e.hops[2].timer_jiffies == 16640);
        CHECK(e.hops[2].slot.array == 1);
        CHECK(e.hops[2].slot.slot == 0);
        CHECK(e.runs_at == 16640);
    }
    SUBCASE("beyond MAX_TVAL laps tv5: tv5[63] > tv5[0] > tv1[5]") {
        const auto e = explain_classic(0, 4294967301ull, std::nullopt, g);
        REQUIRE(e.hops.size() == 3);
        CHECK(e.hops[0].slot.array == 5);
        CHECK(e.hops[0].slot.slot == 63);
        CHECK(e.hops[0].slot.clamped);
        CHECK(e.hops[1].slot.array == 5);
        CHECK(e.hops[1].slot.slot == 0);
        CHECK(e.hops[2].slot.array == 1);
        CHECK(e.hops[2].slot.slot == 5);
        CHECK(e.runs_at == 4294967301ull);
    }
    SUBCASE("default slack on a 2 h keepalive at HZ=1000 adds 14048 jiffies") {
        const auto e = explain_classic(4294667296, 4301867296, -1, g);
        CHECK(e.expires == 4301881344);
        CHECK(e.runs_at == 4301881344);
    }
}

// The analytic cascade path must be what ClassicWheel really does: step the
// wheel to each predicted cascade jiffy and compare the placement.
TEST_CASE("explain_classic agrees with ClassicWheel on random timers") {
    std::mt19937_64 rng(7);
    for (const auto geometry : {classic::Geometry::normal(), classic::Geometry::base_small()}) {
        for (int i = 0; i < 80; ++i) {
            const Jiffies start = (i % 3 == 0) ? initial_jiffies(1000) : rng() % (Jiffies{1} << 40);
            // Delays spread over every array (log-uniform up to 2^27).
            const Jiffies delay = rng() % (Jiffies{1} << (rng() % 28));
            const Jiffies expires = start + delay;
            const auto e = explain_classic(start, expires, std::nullopt, geometry);
            ClassicWheel w(ClassicWheel::Config{.hz = 1000, .start_jiffies = start, .geometry = geometry,
                                                .slack = std::nullopt});
            const TimerId id = w.create();
            w.arm(id, expires);
            Jiffies fired_at = 0;
            bool fired = false;
            auto on_fire = [&](const FiredTimer& f) {
                fired = true;
                fired_at = f.base_clk;
            };
            for (const auto& hop : e.hops) {
                // Just before the hop's jiffy the timer must still sit where
                // the previous hop put it; run up to the hop and check it moved.
                if (hop.timer_jiffies != start) wake_at(w, hop.timer_jiffies, on_fire);
                if (hop.slot.array == 1 && hop.timer_jiffies == expires) break;
                const Placement p = w.placement(id);
                REQUIRE(p.pending);
                CHECK(p.level == hop.slot.array);
                CHECK(p.slot == hop.slot.slot);
            }
            wake_at(w, e.runs_at, on_fire);
            CHECK(fired);
            CHECK(fired_at == e.runs_at);
        }
    }
}

TEST_CASE("explain_classic compresses tv5 laps of very long timeouts") {
    const auto g = classic::Geometry::normal();
    const Jiffies expires = Jiffies{1} << 40;
    const auto e = explain_classic(0, expires, std::nullopt, g);
    CHECK(e.runs_at == expires);
    CHECK(e.hops.size() < 8);
    std::uint64_t placements = 0;
    for (const auto& h : e.hops) placements += h.laps;
    // One lap every 2^32 - 2^26 jiffies while more than MAX_TVAL remains.
    const Jiffies stride = (Jiffies{1} << 32) - (Jiffies{1} << 26);
    CHECK(placements >= expires / stride);
    CHECK(placements <= expires / stride + 4);
    // The last hop lands in tv1 with no lap count of its own.
    CHECK(e.hops.back().slot.array == 1);
    CHECK(e.hops.back().laps == 1);
}
