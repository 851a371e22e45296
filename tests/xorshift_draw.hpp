// Draws for a test's random stream: Marsaglia's xorshift64, the same
// sequence on every platform and standard library (std::
// uniform_int_distribution's is not), seeded by the test.
//
//   XorshiftDraw draw{88172645463325252ull};
//   const std::uint64_t cpu = draw(2);  // in [0, 2)
#pragma once

#include <cstdint>

namespace timersim::testing {

struct XorshiftDraw {
    std::uint64_t x; // not 0
    std::uint64_t operator()(std::uint64_t n) noexcept {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x % n;
    }
};

} // namespace timersim::testing
