// timersim_bench: what the timer queues cost at scale (docs/performance.md,
// "Queue micro-benchmarks"; run by scripts/bench). Every benchmark is one
// template over the TimerQueue concept, registered for ModernWheel,
// ClassicWheel and HeapQueue at 1K, 100K, 1M and 10M pending timers, and
// two of them for the seeds' designs (below). All queues run at HZ=250 with
// their default configuration.
//
//   arm_cancel/Q/pending:N     arm one idle timer (log-uniform delay, so every
//                              level is hit) and cancel it again, with N other
//                              timers pending: time per iteration = one pair
//   rearm_random/Q/pending:N   mod_timer() of a random pending timer to a new
//                              uniform delay: the timer almost always moves.
//                              Counters same_bucket / same_expiry: the share
//                              of arms that took the wheel's shortcut
//   rearm_nearby/Q/pending:N   mod_timer() of a random pending timer to within
//                              16 jiffies of the expiry it was filled with: a
//                              TCP-like re-arm on every ACK, where the wheels'
//                              shortcuts apply (same counters)
//   memory/Q/pending:N         node_B = bytes_per_timer(), rss_B = resident
//                              growth per timer while filling N timers,
//                              fill_ns = CPU time per arm of that fill
//   expire_spread/Q/pending:N  fill N timers (uniform delays), then tick one
//                              jiffy at a time (tick_to) until all have
//                              fired; manual time = the drain only.
//                              ns_per_timer = drain / N, cascade_moves =
//                              classic cascade moves per timer, ticks = jiffies
//                              ticked per drain, fill_ns as above
//   expire_burst/Q/pending:N   the same with all N timers on one expiry
//   arm_cancel, expire_spread  also for the seeds' designs (scheme1, scheme2,
//                              scheme4, scheme5, scheme6, netty, cog), at 10K
//                              and 1M pending; scheme1 and scheme2, O(n) per
//                              tick or per insertion, at 1K and 10K only
//   clock_reference/start|end  the clock speed the CPU ran at (GHz)
//   memory_latency/MiB:S       one dependent cache miss at working set S
//
// The arm, re-arm and memory benchmarks of one queue and size share one
// filled queue (filled_queue.hpp); the expiry benchmarks build their own per
// iteration, outside the timed region. Figures are this thread's CPU time
// (the CPU column; the manual time of the expiry benchmarks is CPU time too),
// so a build on the other core does not inflate them by descheduling the
// benchmark; it still competes for the shared cache and memory.
#include "bench/bench_hz.hpp"
#include "bench/clock_reference.hpp"
#include "bench/cpu_clock.hpp"
#include "bench/delay_tables.hpp"
#include "bench/filled_queue.hpp"
#include "bench/memory_latency.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme1_queue.hpp"
#include "wheel/seeds/scheme2_queue.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme5_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#ifndef TIMERSIM_BUILDTYPE
#define TIMERSIM_BUILDTYPE "unknown"
#endif

namespace timersim::bench {
namespace {

constexpr std::array<std::int64_t, 4> kPending = {1'000, 100'000, 1'000'000, 10'000'000};
constexpr Jiffies kBurstDelay = 1000; // 4 s at HZ=250: modern level 2, classic tv2
constexpr Jiffies kNearbySpread = 16; // rearm_nearby: new expiry = filled expiry + 0..15

std::size_t pending_arg(const benchmark::State& state) {
    return static_cast<std::size_t>(state.range(0));
}

// Table cursors that wrap without a division in the timed loop.
struct Cursor {
    std::size_t at = 0;
    std::size_t size;
    std::size_t next() noexcept {
        const std::size_t i = at;
        if (++at == size) at = 0;
        return i;
    }
};

template <TimerQueue Q>
void arm_cancel(benchmark::State& state) {
    auto& f = filled_queue<Q>(pending_arg(state));
    Q& q = f.queue();
    const TimerId id = f.spare();
    std::vector<Jiffies> expiry = log_uniform_delays(kDelayTableSize, 0x5eed'0002);
    for (auto& e : expiry) e += q.jiffies();
    Cursor c{0, expiry.size()};
    for (auto _ : state) {
        benchmark::DoNotOptimize(q.arm(id, expiry[c.next()]));
        benchmark::DoNotOptimize(q.cancel(id));
    }
    if (q.pending() != f.size()) state.SkipWithError("arm+cancel changed the pending count");
}

// Shortcut rates of the arms since `before`.
void report_shortcuts(benchmark::State& state, const QueueCounters& before,
                      const QueueCounters& after) {
    const double arms = static_cast<double>(after.arms - before.arms);
    if (arms == 0) return;
    state.counters["same_bucket"] =
        static_cast<double>(after.same_bucket_shortcuts - before.same_bucket_shortcuts) / arms;
    state.counters["same_expiry"] =
        static_cast<double>(after.same_expiry_shortcuts - before.same_expiry_shortcuts) / arms;
}

template <TimerQueue Q>
void rearm_random(benchmark::State& state) {
    auto& f = filled_queue<Q>(pending_arg(state));
    Q& q = f.queue();
    // The same distribution as the fill, so the queue's shape stays put.
    std::vector<Jiffies> expiry = uniform_delays(kDelayTableSize, 0x5eed'0003);
    for (auto& e : expiry) e += q.jiffies();
    std::vector<TimerId> pick(kPickTableSize);
    {
        const auto idx = uniform_indices(kPickTableSize, f.size(), 0x5eed'0004);
        for (std::size_t i = 0; i < pick.size(); ++i) pick[i] = f.ids()[idx[i]];
    }
    Cursor ce{0, expiry.size()};
    Cursor cp{0, pick.size()};
    const QueueCounters before = q.counters();
    for (auto _ : state) benchmark::DoNotOptimize(q.arm(pick[cp.next()], expiry[ce.next()]));
    report_shortcuts(state, before, q.counters());
    if (q.pending() != f.size()) state.SkipWithError("re-arm changed the pending count");
}

template <TimerQueue Q>
void rearm_nearby(benchmark::State& state) {
    auto& f = filled_queue<Q>(pending_arg(state));
    Q& q = f.queue();
    std::vector<Jiffies> jitter = uniform_delays(kDelayTableSize, 0x5eed'0005, 0, kNearbySpread - 1);
    std::vector<TimerId> pick(kPickTableSize);
    std::vector<Jiffies> base(kPickTableSize);
    {
        const auto idx = uniform_indices(kPickTableSize, f.size(), 0x5eed'0006);
        for (std::size_t i = 0; i < pick.size(); ++i) {
            pick[i] = f.ids()[idx[i]];
            base[i] = f.expires()[idx[i]];
        }
    }
    Cursor cj{0, jitter.size()};
    Cursor cp{0, pick.size()};
    const QueueCounters before = q.counters();
    for (auto _ : state) {
        const std::size_t p = cp.next();
        benchmark::DoNotOptimize(q.arm(pick[p], base[p] + jitter[cj.next()]));
    }
    report_shortcuts(state, before, q.counters());
    if (q.pending() != f.size()) state.SkipWithError("re-arm changed the pending count");
}

template <TimerQueue Q>
void memory(benchmark::State& state) {
    auto& f = filled_queue<Q>(pending_arg(state));
    for (auto _ : state) benchmark::DoNotOptimize(f.queue().pending());
    const double n = static_cast<double>(f.size());
    state.counters["node_B"] = static_cast<double>(f.queue().bytes_per_timer());
    state.counters["rss_B"] = static_cast<double>(f.resident_growth()) / n;
    state.counters["fill_ns"] = f.fill_seconds() * 1e9 / n;
}

// The jiffy at which the queue will have run every pending timer, if nothing
// changes: the latest bucket expiry (the wheels round up, the classic wheel
// adds slack).
template <TimerQueue Q>
Jiffies last_deadline(const Q& q, const std::vector<TimerId>& ids) {
    Jiffies last = q.jiffies();
    for (const TimerId id : ids) {
        const Jiffies at = q.placement(id).bucket_expiry;
        if (time_after(at, last)) last = at;
    }
    return last;
}

// One iteration: build a queue, arm N timers (timed separately, reported as
// fill_ns), then tick_to() the last deadline: the manual time, in thread CPU
// time like the other benchmarks' CPU column, less the cost of reading that
// clock. `delays` holds one delay per timer.
template <TimerQueue Q>
void expire(benchmark::State& state, const std::vector<Jiffies>& delays) {
    release_filled_queue();
    using clock = CpuClock;
    const std::size_t n = delays.size();
    std::vector<TimerId> ids(n);
    double fill_s = 0;
    double drain_s = 0;
    std::uint64_t cascade_moves = 0;
    std::uint64_t ticks = 0;
    std::uint64_t iterations = 0;
    CpuClock::reading_cost(); // calibrate before the first timed drain
    for (auto _ : state) {
        auto q = std::make_unique<Q>(typename Q::Config{.hz = kBenchHz});
        const Jiffies start = q->jiffies();
        const auto t0 = clock::now();
        for (std::size_t i = 0; i < n; ++i) {
            ids[i] = q->create();
            q->arm(ids[i], start + delays[i]);
        }
        const auto t1 = clock::now();
        const Jiffies end = last_deadline(*q, ids);
        const std::uint64_t moves_before = q->counters().cascade_moves;
        std::uint64_t fired = 0;
        const auto t2 = clock::now();
        tick_to(*q, end, [&fired](const FiredTimer&) { ++fired; });
        const auto t3 = clock::now();
        const double drain =
            std::chrono::duration<double>(t3 - t2 - CpuClock::reading_cost()).count();
        state.SetIterationTime(drain);
        drain_s += drain;
        fill_s += std::chrono::duration<double>(t1 - t0).count();
        cascade_moves += q->counters().cascade_moves - moves_before;
        ticks += end - start;
        ++iterations;
        if (fired != n || q->pending() != 0) {
            state.SkipWithError("not every timer fired by its last deadline");
            break;
        }
    }
    if (iterations == 0) return;
    const double timers = static_cast<double>(n) * static_cast<double>(iterations);
    state.counters["ns_per_timer"] = drain_s * 1e9 / timers;
    state.counters["fill_ns"] = fill_s * 1e9 / timers;
    state.counters["cascade_moves"] = static_cast<double>(cascade_moves) / timers;
    state.counters["ticks"] = static_cast<double>(ticks) / static_cast<double>(iterations);
    state.SetItemsProcessed(static_cast<std::int64_t>(timers));
}

template <TimerQueue Q>
void expire_spread(benchmark::State& state) {
    expire<Q>(state, uniform_delays(pending_arg(state), 0x5eed'0007));
}

template <TimerQueue Q>
void expire_burst(benchmark::State& state) {
    expire<Q>(state, std::vector<Jiffies>(pending_arg(state), kBurstDelay));
}

// Fixed iteration counts for the expiry benchmarks (each iteration fills and
// drains N timers): enough repeats at small N, one pass at 10M.
benchmark::IterationCount expire_iterations(std::int64_t n) {
    if (n <= 1'000) return 500;
    if (n <= 100'000) return 20;
    if (n <= 1'000'000) return 3;
    return 1;
}

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// The per-operation benchmarks are short, so each runs three times and the
// console shows the aggregates (median, min, ...); the JSON keeps every run.
// A build on the other core shows up as a spread between them.
void repeat(benchmark::internal::Benchmark* b) {
    b->MinTime(0.2)->Repetitions(3)->DisplayAggregatesOnly(true)->ComputeStatistics("min", min_of);
}

template <TimerQueue Q>
void register_queue_ops() {
    const std::string q(Q::name);
    for (const std::int64_t n : kPending) {
        repeat(benchmark::RegisterBenchmark(("arm_cancel/" + q).c_str(), arm_cancel<Q>)
                   ->ArgName("pending")->Arg(n));
        repeat(benchmark::RegisterBenchmark(("rearm_random/" + q).c_str(), rearm_random<Q>)
                   ->ArgName("pending")->Arg(n));
        repeat(benchmark::RegisterBenchmark(("rearm_nearby/" + q).c_str(), rearm_nearby<Q>)
                   ->ArgName("pending")->Arg(n));
        benchmark::RegisterBenchmark(("memory/" + q).c_str(), memory<Q>)
            ->ArgName("pending")->Arg(n)->Iterations(1);
    }
}

template <TimerQueue Q>
void register_queue_expiry() {
    const std::string q(Q::name);
    for (const std::int64_t n : kPending) {
        benchmark::RegisterBenchmark(("expire_spread/" + q).c_str(), expire_spread<Q>)
            ->ArgName("pending")->Arg(n)->UseManualTime()->Iterations(expire_iterations(n))
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("expire_burst/" + q).c_str(), expire_burst<Q>)
            ->ArgName("pending")->Arg(n)->UseManualTime()->Iterations(expire_iterations(n))
            ->Unit(benchmark::kMillisecond);
    }
}

// The seeds' designs: steady arm+cancel and a spread expiry, at `sizes`.
constexpr std::array<std::int64_t, 2> kSeedPending = {10'000, 1'000'000};
constexpr std::array<std::int64_t, 2> kListSchemePending = {1'000, 10'000};

// scheme1 drains in O(n) per tick for the 60000 ticks of the spread: a
// couple of iterations each.
template <TimerQueue Q>
void register_seed_queue(const std::array<std::int64_t, 2>& sizes, bool few_iterations = false) {
    const std::string q(Q::name);
    for (const std::int64_t n : sizes)
        repeat(benchmark::RegisterBenchmark(("arm_cancel/" + q).c_str(), arm_cancel<Q>)
                   ->ArgName("pending")->Arg(n));
    for (const std::int64_t n : sizes)
        benchmark::RegisterBenchmark(("expire_spread/" + q).c_str(), expire_spread<Q>)
            ->ArgName("pending")->Arg(n)->UseManualTime()
            ->Iterations(few_iterations ? 2 : expire_iterations(n))
            ->Unit(benchmark::kMillisecond);
}

} // namespace
} // namespace timersim::bench

int main(int argc, char** argv) {
    using namespace timersim;
    using namespace timersim::bench;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    // Queue by queue for the operations (each fill is reused by four
    // benchmarks), then the expiry benchmarks, which fill their own.
    register_clock_reference("start");
    register_memory_latency();
    register_queue_ops<ModernWheel>();
    register_queue_ops<ClassicWheel>();
    register_queue_ops<HeapQueue>();
    register_queue_expiry<ModernWheel>();
    register_queue_expiry<ClassicWheel>();
    register_queue_expiry<HeapQueue>();
    register_seed_queue<Scheme1Queue>(kListSchemePending, true);
    register_seed_queue<Scheme2Queue>(kListSchemePending, true);
    register_seed_queue<Scheme4Queue>(kSeedPending);
    register_seed_queue<Scheme5Queue>(kSeedPending);
    register_seed_queue<Scheme6Queue>(kSeedPending);
    register_seed_queue<NettyWheel>(kSeedPending);
    register_seed_queue<CogWheel>(kSeedPending);
    register_clock_reference("end");

    benchmark::AddCustomContext("timersim_buildtype", TIMERSIM_BUILDTYPE);
    benchmark::AddCustomContext("compiler_version", __VERSION__);
    benchmark::AddCustomContext("hz", "250");
    benchmark::AddCustomContext("fill_delays", "uniform 1..60000 jiffies");
    benchmark::AddCustomContext("arm_cancel_delays", "log-uniform 1..60000 jiffies");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
