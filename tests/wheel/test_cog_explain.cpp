// explain_cog() (wheel/views/cog_explain.hpp), what `timersim explain --design
// cog` tells, against the cog queue itself: timers armed in a CogWheel and
// ticked one tick at a time must be placed in the ring and slot the first
// hop says, be moved by a cascade on exactly the ticks the later hops say
// (and into their ring and slot), at no other tick, and fire on exactly
// fires_at. Starting clocks on and around 0, ring boundaries and the 2^32
// and 2^64 wraps; delays on every ring boundary and log-uniform in between.
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/views/cog_explain.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "tests/build_flavour.hpp"

using namespace timersim;

namespace {

constexpr bool kThorough = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED;

struct Expected {
    TimerId id;
    Jiffies expires;
    CogExplanation e;
    std::size_t next_hop = 1; // the hop to come
    bool fired = false;
};

// Arms every delay at `start` and ticks until all fired, checking each
// timer's placement after every hop tick, the cascade count of every tick
// and every fire against explain_cog().
void check_against_queue(Jiffies start, const std::vector<Jiffies>& delays) {
    CAPTURE(start);
    CogWheel q(CogWheel::Config{.hz = 250, .start_jiffies = start});
    std::vector<Expected> timers;
    std::multimap<Jiffies, std::size_t> hops_at; // tick -> timer whose hop it is
    Jiffies last = start;
    for (const Jiffies d : delays) {
        const TimerId id = q.create();
        const Jiffies expires = start + d;
        q.arm(id, expires);
        Expected x{id, expires, explain_cog(start, expires, CogWheel::kDefaultRings)};
        const Placement p = q.placement(id);
        CAPTURE(d);
        REQUIRE(p.pending);
        CHECK(p.level == x.e.hops.front().ring);
        CHECK(p.slot == x.e.hops.front().slot);
        CHECK(x.e.hops.front().clk == start);
        for (std::size_t h = 1; h < x.e.hops.size(); ++h) hops_at.emplace(x.e.hops[h].clk, timers.size());
        if (time_after(x.e.fires_at, last)) last = x.e.fires_at;
        timers.push_back(std::move(x));
    }
    std::map<TimerId, std::size_t> by_id;
    for (std::size_t i = 0; i < timers.size(); ++i) by_id[timers[i].id] = i;
    std::size_t fired = 0;
    for (Jiffies t = start;; ++t) {
        q.set_jiffies(t);
        const std::uint64_t moves = q.counters().cascade_moves;
        q.run_softirq([&](const FiredTimer& f) {
            Expected& x = timers[by_id.at(f.id)];
            CAPTURE(x.expires);
            CHECK(t == x.e.fires_at);
            // Every cascade happened first (the last one may be this tick's:
            // cascaded into ring 0's slot of the tick, drained right after).
            CHECK((x.next_hop == x.e.hops.size() ||
                   (x.next_hop + 1 == x.e.hops.size() && x.e.hops.back().clk == t)));
            x.fired = true;
            ++fired;
        });
        // Exactly the predicted hops of this tick, each into its ring and slot.
        const auto [lo, hi] = hops_at.equal_range(t);
        CHECK(q.counters().cascade_moves - moves == static_cast<std::uint64_t>(std::distance(lo, hi)));
        for (auto it = lo; it != hi; ++it) {
            Expected& x = timers[it->second];
            CAPTURE(x.expires);
            REQUIRE(x.next_hop < x.e.hops.size());
            const CogHop& h = x.e.hops[x.next_hop++];
            if (x.fired) continue; // drained on the tick it landed in ring 0
            const Placement p = q.placement(x.id);
            CHECK(p.level == h.ring);
            CHECK(p.slot == h.slot);
        }
        if (t == last) break;
    }
    CHECK(fired == timers.size());
    CHECK(q.pending() == 0);
}

std::vector<Jiffies> boundary_delays(Jiffies max) {
    std::vector<Jiffies> d;
    for (Jiffies v = 0; v < 130; ++v) d.push_back(v);
    for (unsigned r = 1; r <= 3; ++r) {
        const Jiffies b = Jiffies{1} << (6 * r);
        for (const Jiffies v : {b - 65, b - 64, b - 2, b - 1, b, b + 1, b + 63, b + 64, b + 65, 2 * b - 1, 2 * b})
            if (v <= max) d.push_back(v);
    }
    return d;
}

} // namespace

TEST_CASE("explain_cog: every hop and the fire tick, as the cog queue ticks them") {
    const Jiffies max = kThorough ? (Jiffies{1} << 20) : (Jiffies{1} << 18) + 200;
    std::mt19937_64 rng(0xc0c0);
    std::vector<Jiffies> delays = boundary_delays(max);
    const std::size_t random = kThorough ? 3000 : 600;
    for (std::size_t i = 0; i < random; ++i) {
        const unsigned bits = static_cast<unsigned>(rng() % 21);
        delays.push_back((rng() & ((Jiffies{1} << bits) - 1)) % (max + 1));
    }
    const Jiffies wrap32 = Jiffies{1} << 32;
    for (const Jiffies start : {Jiffies{0}, Jiffies{63}, Jiffies{64}, Jiffies{4095}, Jiffies{262143}, wrap32 - 4097,
                                ~Jiffies{0} - 300000, ~Jiffies{0}, Jiffies{rng()}})
        check_against_queue(start, delays);
}

TEST_CASE("explain_cog: a past expiry fires on the next tick; beyond the top ring it laps, still exact") {
    // The past: ring 0's slot of clk, drained on that tick.
    const CogExplanation past = explain_cog(1000, 990, CogWheel::kDefaultRings);
    REQUIRE(past.hops.size() == 1);
    CHECK(past.hops[0].past);
    CHECK(past.hops[0].ring == 0);
    CHECK(past.hops[0].slot == (1000 & 63));
    CHECK(past.fires_at == 1000);
    check_against_queue(1000, {});
    // With 2 rings (deltas below 4096), a 20000-tick timer is clamped into
    // ring 1 and laps it: the queue with 2 rings agrees hop by hop.
    CogWheel q(CogWheel::Config{.hz = 250, .start_jiffies = 5, .rings = 2});
    const TimerId id = q.create();
    q.arm(id, 20005);
    const CogExplanation e = explain_cog(5, 20005, 2);
    CHECK(e.hops.front().clamped);
    CHECK(e.fires_at == 20005);
    CHECK(e.hops.size() > 5); // several laps of ring 1, then ring 0
    std::size_t next = 1;
    bool fired = false;
    for (Jiffies t = 5; t <= 20005; ++t) {
        q.set_jiffies(t);
        q.run_softirq([&](const FiredTimer&) {
            CHECK(t == 20005);
            fired = true;
        });
        if (next < e.hops.size() && e.hops[next].clk == t) {
            if (!fired) {
                const Placement p = q.placement(id);
                CHECK(p.level == e.hops[next].ring);
                CHECK(p.slot == e.hops[next].slot);
            }
            ++next;
        }
    }
    CHECK(next == e.hops.size());
    CHECK(fired);
    CHECK(q.counters().cascade_moves == e.hops.size() - 1);
}
