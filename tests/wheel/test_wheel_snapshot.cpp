// Wheel snapshots (wheel/views/wheel_snapshot.hpp), what `timersim step` draws: every
// bucket count equals the number of pending timers whose placement() names
// that bucket, and the pointers are the clock's index bits, on wheels that
// have been armed, cancelled, re-armed, ticked and (classic) cascaded.
#include "wheel/views/wheel_snapshot.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace timersim;

namespace {

constexpr Jiffies kStart1000 = 4294667296; // INITIAL_JIFFIES at HZ=1000

// Counts per (level, slot-in-level) built from placement() alone.
using Grid = std::vector<std::vector<std::uint32_t>>;

Grid expected_modern(const ModernWheel& w, const std::vector<TimerId>& ids, bool deferrable_base) {
    Grid g(w.depth(), std::vector<std::uint32_t>(modern::kLevelSize, 0));
    for (TimerId id : ids) {
        const Placement p = w.placement(id);
        if (!p.pending || p.deferrable_base != deferrable_base) continue;
        ++g[p.level][p.slot % modern::kLevelSize];
    }
    return g;
}

Grid expected_classic(const ClassicWheel& w, const std::vector<TimerId>& ids) {
    const auto& geo = w.geometry();
    Grid g;
    for (unsigned a = 1; a <= classic::kArrays; ++a) g.emplace_back(geo.slots(a), 0);
    for (TimerId id : ids) {
        const Placement p = w.placement(id);
        if (p.pending) ++g[p.level - 1][p.slot];
    }
    return g;
}

void check_modern(const ModernWheel& w, const std::vector<TimerId>& ids, ModernWheel::BaseIndex base) {
    const ModernSnapshot s = snapshot(w, base);
    const auto& b = w.base(base);
    CHECK(s.jiffies == w.jiffies());
    CHECK(s.clk == b.clk);
    CHECK(s.next_expiry == b.next_expiry);
    CHECK(s.next_expiry_stale == b.next_expiry_recalc);
    CHECK(s.pending == b.queued);
    REQUIRE(s.levels.size() == w.depth());
    const Grid want = expected_modern(w, ids, base == ModernWheel::base_def);
    std::uint64_t total = 0;
    for (unsigned level = 0; level < w.depth(); ++level) {
        const LevelOccupancy& l = s.levels[level];
        CHECK(l.level == level);
        CHECK(l.pointer == ((b.clk >> (3 * level)) & 63));
        CHECK(l.counts == want[level]);
        // Outside a softirq run a bucket's pending_map bit is set exactly when it holds timers.
        for (unsigned slot = 0; slot < modern::kLevelSize; ++slot)
            CHECK(((b.pending_map[level] >> slot) & 1) == (l.counts[slot] > 0 ? 1u : 0u));
        total += l.total();
    }
    CHECK(total == s.pending);
}

void check_classic(const ClassicWheel& w, const std::vector<TimerId>& ids) {
    const ClassicSnapshot s = snapshot(w);
    const Jiffies t = w.timer_jiffies();
    CHECK(s.jiffies == w.jiffies());
    CHECK(s.timer_jiffies == t);
    CHECK(s.pending == w.pending());
    REQUIRE(s.levels.size() == classic::kArrays);
    const Grid want = expected_classic(w, ids);
    const auto& geo = w.geometry();
    std::uint64_t total = 0;
    for (unsigned a = 1; a <= classic::kArrays; ++a) {
        const LevelOccupancy& l = s.levels[a - 1];
        CHECK(l.level == a);
        CHECK(l.pointer == ((t >> geo.shift(a)) & (geo.slots(a) - 1)));
        CHECK(l.counts == want[a - 1]);
        total += l.total();
    }
    CHECK(total == w.pending());
}

// A delay drawn across every level of both wheels, past expiries included.
Jiffies random_delay(std::mt19937_64& rng) {
    switch (rng() % 6) {
    case 0: return rng() % 64;
    case 1: return rng() % 4096;
    case 2: return rng() % 300000;
    case 3: return rng() % (Jiffies{1} << 31);
    case 4: return rng() % (Jiffies{1} << 34); // beyond the modern cutoff and classic MAX_TVAL
    default: return static_cast<Jiffies>(-static_cast<std::int64_t>(rng() % 100)); // in the past
    }
}

} // namespace

TEST_CASE("modern snapshot: known placements and pointers") {
    // reference §8.1: from clk 0, E=64 goes to level 1 idx 73; E=36 of clk
    // 1000 to level 0 idx 13 (LWN's 36 jiffies); 2^40 is clamped to idx 575.
    ModernWheel w(ModernWheel::Config{.hz = 1000, .start_jiffies = 0});
    const TimerId a = w.create();
    const TimerId b = w.create();
    const TimerId c = w.create();
    w.arm(a, 64);
    w.arm(c, Jiffies{1} << 40);
    ModernSnapshot s = snapshot(w);
    CHECK(s.levels[1].counts[73 - 64] == 1);
    CHECK(s.levels[8].counts[575 - 512] == 1);
    CHECK(s.levels[0].total() == 0);
    for (const auto& l : s.levels) CHECK(l.pointer == 0);

    tick_to(w, 1000, [](const FiredTimer&) {});
    w.arm(b, 1036);
    s = snapshot(w);
    CHECK(s.clk == 1000);
    CHECK(s.levels[0].counts[13] == 1);
    CHECK(s.levels[0].pointer == (1000 & 63));     // 40
    CHECK(s.levels[1].pointer == ((1000 >> 3) & 63)); // 61
    CHECK(s.levels[2].pointer == ((1000 >> 6) & 63)); // 15
    CHECK(s.pending == 2); // a fired at 72
    check_modern(w, {a, b, c}, ModernWheel::base_std);
}

TEST_CASE("modern snapshot: counts follow placement() through arms, cancels, re-arms and expiry") {
    for (const unsigned hz : {100u, 1000u}) {
        CAPTURE(hz);
        ModernWheel w(ModernWheel::Config{.hz = hz, .start_jiffies = kStart1000});
        std::mt19937_64 rng(hz);
        std::vector<TimerId> ids;
        for (int i = 0; i < 3000; ++i) ids.push_back(w.create(TimerFlags{.deferrable = i % 7 == 0}));
        for (TimerId id : ids) w.arm(id, w.jiffies() + random_delay(rng));
        check_modern(w, ids, ModernWheel::base_std);
        check_modern(w, ids, ModernWheel::base_def);
        for (int round = 0; round < 40; ++round) {
            tick_to(w, w.jiffies() + 1 + rng() % 700, [](const FiredTimer&) {});
            for (int i = 0; i < 100; ++i) {
                const TimerId id = ids[rng() % ids.size()];
                if (rng() % 3 == 0)
                    w.cancel(id);
                else
                    w.arm(id, w.jiffies() + random_delay(rng)); // same-bucket shortcuts included
            }
            check_modern(w, ids, ModernWheel::base_std);
            check_modern(w, ids, ModernWheel::base_def);
        }
    }
}

TEST_CASE("modern snapshot of an empty wheel") {
    const ModernWheel w(ModernWheel::Config{.hz = 250, .start_jiffies = 12345});
    const ModernSnapshot s = snapshot(w);
    CHECK(s.pending == 0);
    CHECK_FALSE(s.timers_pending);
    CHECK(s.levels.size() == 9);
    for (const auto& l : s.levels) {
        CHECK(l.counts.size() == 64);
        CHECK(l.total() == 0);
    }
    CHECK(snapshot(ModernWheel(ModernWheel::Config{.hz = 100})).levels.size() == 8);
}

TEST_CASE("classic snapshot: the reference cascade path tv3[1] > tv2[1] > tv1[0]") {
    // reference §8.2 (slack off): E=16640 from T=0.
    ClassicWheel w(ClassicWheel::Config{.hz = 1000, .start_jiffies = 0, .slack = std::nullopt});
    const TimerId id = w.create();
    w.arm(id, 16640);
    ClassicSnapshot s = snapshot(w);
    CHECK(s.levels[2].counts[1] == 1); // tv3[1]
    CHECK(s.levels[2].total() == 1);
    for (const auto& l : s.levels) CHECK(l.pointer == 0);

    // The step at T=16384 cascades tv3[1] into tv2[1]; T is then 16385.
    tick_to(w, 16384, [](const FiredTimer&) {});
    s = snapshot(w);
    CHECK(s.timer_jiffies == 16385);
    CHECK(s.levels[2].total() == 0);
    CHECK(s.levels[1].counts[1] == 1); // tv2[1]
    CHECK(s.levels[0].pointer == 1);   // 16385 & 255
    CHECK(s.levels[1].pointer == 0);   // (16385 >> 8) & 63 = 64 & 63
    CHECK(s.levels[2].pointer == 1);   // (16385 >> 14) & 63

    tick_to(w, 16640, [](const FiredTimer&) {});
    s = snapshot(w);
    CHECK(s.pending == 0); // ran at 16640 after its second cascade (tv2[1] > tv1[0])
    check_classic(w, {id});
}

TEST_CASE("classic snapshot: counts follow placement() through arms, cancels and cascades") {
    for (const auto geometry : {classic::Geometry::normal(), classic::Geometry::base_small()}) {
        CAPTURE(geometry.tvr_bits);
        ClassicWheel w(ClassicWheel::Config{.hz = 1000, .start_jiffies = kStart1000, .geometry = geometry});
        std::mt19937_64 rng(geometry.tvr_bits);
        std::vector<TimerId> ids;
        for (int i = 0; i < 3000; ++i) ids.push_back(w.create());
        for (TimerId id : ids) w.arm(id, w.jiffies() + random_delay(rng));
        check_classic(w, ids);
        std::uint64_t moves = 0;
        for (int round = 0; round < 40; ++round) {
            tick_to(w, w.jiffies() + 1 + rng() % 2000, [](const FiredTimer&) {});
            for (int i = 0; i < 100; ++i) {
                const TimerId id = ids[rng() % ids.size()];
                if (rng() % 3 == 0)
                    w.cancel(id);
                else
                    w.arm(id, w.jiffies() + random_delay(rng));
            }
            check_classic(w, ids);
            moves = w.counters().cascade_moves;
        }
        CHECK(moves > 0); // the rounds did cross cascades
    }
}

TEST_CASE("classic snapshot of an empty wheel and of BASE_SMALL") {
    const ClassicWheel normal(ClassicWheel::Config{.hz = 250, .start_jiffies = 1000});
    ClassicSnapshot s = snapshot(normal);
    REQUIRE(s.levels.size() == 5);
    CHECK(s.levels[0].counts.size() == 256);
    CHECK(s.levels[4].counts.size() == 64);
    CHECK(s.levels[0].pointer == (1000 & 255));
    CHECK(s.levels[1].pointer == ((1000 >> 8) & 63));

    const ClassicWheel small(ClassicWheel::Config{.hz = 250, .start_jiffies = 1000,
                                                  .geometry = classic::Geometry::base_small()});
    s = snapshot(small);
    CHECK(s.levels[0].counts.size() == 64);
    CHECK(s.levels[1].counts.size() == 16);
    CHECK(s.levels[0].pointer == (1000 & 63));
    CHECK(s.levels[1].pointer == ((1000 >> 6) & 15));
    CHECK(s.levels[2].pointer == ((1000 >> 10) & 15));
    CHECK(classic_pointer(1000, 1, classic::Geometry::base_small()) == (1000 & 63));
    CHECK(modern_pointer(kStart1000, 0) == 32);
    CHECK(modern_pointer(kStart1000, 1) == 4);
    CHECK(modern_pointer(kStart1000, 8) == 63);
}
