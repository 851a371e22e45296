// The delay mix of ../shared/peers' streams, for the benchmarks that run its
// steady workload on timersim's wheels alone (bucket_churn, pair_floor):
// 70 % 50..500 ticks, 25 % 1000..60000, 5 % 60001..2000000, each uniform.
// R is any generator with `std::uint32_t below(std::uint32_t n)` (uniform in
// [0, n)); the peers harness draws with SplitMix64.
#pragma once

#include <cstdint>

namespace timersim::bench {

template <class R>
std::uint32_t draw_peers_delay(R& r) {
    const std::uint32_t c = r.below(100);
    if (c < 70) return 50 + r.below(451);
    if (c < 95) return 1000 + r.below(59001);
    return 60001 + r.below(2000000 - 60000);
}

} // namespace timersim::bench
