#include "wheel/views/cog_explain.hpp"

#include "wheel/seeds/cog_wheel.hpp"

#include <stdexcept>

namespace timersim {

namespace {

constexpr unsigned kBits = CogWheel::kRingBits;
constexpr Jiffies kMask = CogWheel::kRingSize - 1;

// CogWheel::place() for one timer at `clk`.
CogHop place(Jiffies clk, Jiffies expires, unsigned rings) {
    CogHop h{clk, 0, 0};
    const Jiffies d = expires - clk;
    if (static_cast<std::int64_t>(d) < 0) {
        h.past = true;
        h.slot = static_cast<unsigned>(clk & kMask);
        return h;
    }
    while (h.ring + 1 < rings && d >> (kBits * (h.ring + 1)) != 0) ++h.ring;
    const unsigned top_bits = kBits * rings;
    h.clamped = top_bits < 64 && d >> top_bits != 0;
    const Jiffies at = h.clamped ? clk + ((Jiffies{1} << top_bits) - 1) : expires;
    h.slot = static_cast<unsigned>((at >> (kBits * h.ring)) & kMask);
    return h;
}

// The first tick t >= from with t % 2^(bits + 6) == slot << bits: when
// ring bits/6's slot comes up (bits 0: ring 0's slot drains). Unsigned
// arithmetic, so jiffies may wrap on the way.
Jiffies next_tick(Jiffies from, unsigned slot, unsigned bits) {
    const Jiffies period_mask = bits + kBits >= 64 ? ~Jiffies{0} : (Jiffies{1} << (bits + kBits)) - 1;
    return from + ((((Jiffies{slot}) << bits) - from) & period_mask);
}

} // namespace

CogExplanation explain_cog(Jiffies clk, Jiffies expires, unsigned rings) {
    if (rings < 2 || rings > CogWheel::kMaxRings) throw std::invalid_argument("cog: rings must be 2..kMaxRings");
    CogExplanation e;
    e.hops.push_back(place(clk, expires, rings));
    while (e.hops.back().ring > 0) {
        const CogHop& h = e.hops.back();
        const Jiffies t = next_tick(h.clk, h.slot, kBits * h.ring);
        e.hops.push_back(place(t, expires, rings));
    }
    e.fires_at = next_tick(e.hops.back().clk, e.hops.back().slot, 0);
    return e;
}

} // namespace timersim
