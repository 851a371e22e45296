#include "bench/clock_reference.hpp"

#include "bench/cpu_clock.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace timersim::bench {
namespace {

constexpr std::int64_t kAddsPerIteration = 8 * 1024;

void dependent_adds(benchmark::State& state) {
    std::uint64_t x = 0;
    const std::uint64_t k = 1;
    const auto t0 = CpuClock::now();
    for (auto _ : state) {
        for (int i = 0; i < 1024; ++i) {
#if defined(__x86_64__)
            // Eight adds, each waiting for the one before: 8 cycles.
            asm volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x)
                         : "r"(k));
#else
            for (int j = 0; j < 8; ++j) {
                x += k;
                benchmark::DoNotOptimize(x);
            }
#endif
        }
    }
    const double ns = std::chrono::duration<double, std::nano>(CpuClock::now() - t0).count();
    benchmark::DoNotOptimize(x);
    // One add per cycle: adds per CPU nanosecond = cycles per ns = GHz.
    state.counters["GHz"] =
        static_cast<double>(kAddsPerIteration) * static_cast<double>(state.iterations()) / ns;
}

} // namespace

void register_clock_reference(const char* tag) {
    benchmark::RegisterBenchmark((std::string("clock_reference/") + tag).c_str(), dependent_adds)
        ->MinTime(0.2);
}

} // namespace timersim::bench
