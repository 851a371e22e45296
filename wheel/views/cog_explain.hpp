// Why a cog timer fires when it does: the rings it passes through, from its
// placement to the tick that drains it, computed from cog's rules (wheel/
// cog_wheel.hpp) without ticking. Pure data; `timersim explain --design cog`
// turns it into sentences (sim/report/seed_views.hpp), and the tests check
// every hop against a CogWheel ticked one tick at a time.
//
// The rules, for ring r of 64 buckets of width 64^r:
//   * placed from clk (the next tick to process) by d = expires - clk: the
//     lowest ring whose range holds d (ring r: d < 64^(r+1)), slot
//     (expires >> 6r) & 63; d < 0 (the past) goes to ring 0's slot clk & 63;
//     beyond the top ring as if expires were clk + 64^rings - 1;
//   * ring r's slot s (r >= 1) cascades on the first tick t >= clk with
//     t % 64^(r+1) == s * 64^r (t's low 6r bits zero, its ring-r index s):
//     cog_tick() cascades ring 1's slot at every multiple of 64, ring r+1's
//     while ring r's slot index was 0; the timer is placed again from clk = t;
//   * ring 0's slot s drains on the first tick t >= clk with t % 64 == s:
//     it fires on tick t.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <vector>

namespace timersim {

struct CogHop {
    Jiffies clk;   // the tick it is placed at (the first: the clk it was armed at)
    unsigned ring;
    unsigned slot;
    bool past = false;    // an expiry before clk: ring 0's slot of clk
    bool clamped = false; // beyond the top ring: placed as if at its longest delta
};

struct CogExplanation {
    std::vector<CogHop> hops; // the placement, then one per cascade (every lap of the top ring too)
    Jiffies fires_at;         // the tick ring 0 drains it
};

CogExplanation explain_cog(Jiffies clk, Jiffies expires, unsigned rings);

} // namespace timersim
