#include "bench/memory_latency.hpp"

#include "bench/cpu_clock.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace timersim::bench {
namespace {

constexpr std::int64_t kLoadsPerIteration = 1024;

struct alignas(64) Line {
    std::uint32_t next;
};

void dependent_loads(benchmark::State& state) {
    const std::size_t lines = static_cast<std::size_t>(state.range(0)) * 1024 * 1024 / sizeof(Line);
    // Sattolo's algorithm: one random cycle through every line, so each load
    // depends on the previous one and the prefetchers cannot guess the next.
    std::vector<std::uint32_t> order(lines);
    for (std::size_t i = 0; i < lines; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::mt19937_64 rng(0x5eed'0100);
    for (std::size_t i = lines - 1; i > 0; --i)
        std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
    std::vector<Line> buffer(lines);
    for (std::size_t i = 0; i < lines; ++i) buffer[i].next = order[i];

    std::uint32_t at = 0;
    const auto t0 = CpuClock::now();
    for (auto _ : state) {
        for (std::int64_t i = 0; i < kLoadsPerIteration; ++i) at = buffer[at].next;
        benchmark::DoNotOptimize(at);
    }
    const double ns = std::chrono::duration<double, std::nano>(CpuClock::now() - t0).count();
    state.counters["ns_per_load"] =
        ns / (static_cast<double>(kLoadsPerIteration) * static_cast<double>(state.iterations()));
}

} // namespace

void register_memory_latency() {
    benchmark::RegisterBenchmark("memory_latency", dependent_loads)
        ->ArgName("MiB")
        ->Arg(1)->Arg(4)->Arg(16)->Arg(64)->Arg(256)
        ->MinTime(0.1);
}

} // namespace timersim::bench
