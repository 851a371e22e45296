#include "bench/delay_tables.hpp"

#include <cmath>
#include <random>

namespace timersim::bench {

std::vector<Jiffies> uniform_delays(std::size_t count, std::uint64_t seed, Jiffies lo, Jiffies hi) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<Jiffies> dist(lo, hi);
    std::vector<Jiffies> out(count);
    for (auto& d : out) d = dist(rng);
    return out;
}

std::vector<Jiffies> log_uniform_delays(std::size_t count, std::uint64_t seed, Jiffies lo,
                                        Jiffies hi) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(std::log(static_cast<double>(lo)),
                                                std::log(static_cast<double>(hi) + 1.0));
    std::vector<Jiffies> out(count);
    for (auto& d : out) {
        const auto v = static_cast<Jiffies>(std::exp(dist(rng)));
        d = v < lo ? lo : (v > hi ? hi : v);
    }
    return out;
}

std::vector<std::uint32_t> uniform_indices(std::size_t count, std::size_t range,
                                           std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> dist(0, range - 1);
    std::vector<std::uint32_t> out(count);
    for (auto& i : out) i = static_cast<std::uint32_t>(dist(rng));
    return out;
}

} // namespace timersim::bench
