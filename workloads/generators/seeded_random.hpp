// SeededRandom: the generators' random numbers. SplitMix64 (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) and
// our own mapping to the values we need, not std::*_distribution, whose
// algorithms differ between standard libraries: a seed means the same
// workload everywhere.
//
// Each connection draws from its own stream (for_stream), so what happens on
// one connection does not shift the draws of another: connections whose
// timers never fire see the same traffic in every design.
#pragma once

#include <cmath>
#include <cstdint>

namespace timersim {

struct SeededRandom {
    std::uint64_t state = 0;

    // Stream `stream` of seed `seed` (e.g. one per connection).
    static SeededRandom for_stream(std::uint64_t seed, std::uint64_t stream) noexcept {
        SeededRandom r{seed ^ (stream + 1) * 0xD1B54A32D192ED03ull};
        r.next();
        return r;
    }

    std::uint64_t next() noexcept {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1), 53 bits.
    double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    bool chance(double p) noexcept { return uniform01() < p; }
    // Uniform in [lo, hi].
    double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform01(); }
    // Uniform integer in [0, n) (n > 0; the modulo bias is below 2^-40 for
    // the ranges we use).
    std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
    // Exponential with the given mean (the gaps of a Poisson process).
    double exponential(double mean) noexcept { return -std::log1p(-uniform01()) * mean; }
    // Log-uniform in [lo, hi] (lo > 0): as many values per decade.
    double log_uniform(double lo, double hi) noexcept { return lo * std::pow(hi / lo, uniform01()); }
};

// A seed for one part of a composite workload, from the run's seed and the
// part's name, so adding a part does not change the others' draws.
inline std::uint64_t part_seed(std::uint64_t seed, const char* name) noexcept {
    std::uint64_t h = 0xCBF29CE484222325ull; // FNV-1a
    for (const char* p = name; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 0x100000001B3ull;
    SeededRandom r{seed ^ h};
    return r.next();
}

} // namespace timersim
