// timersim_bench_costs: the per-event costs behind softirq/cost_model.hpp,
// measured on our own queues (scripts/bench costs prints the table). Each
// benchmark isolates one kind of counted work (QueueCounters) and reports
// ns per counted event as the counter `ns_per_op` (thread CPU time, see
// cpu_clock.hpp). All queues at HZ=250, default configuration.
//
// "Cold" means what it would be in the kernel: the timer_list of an expiring
// or cascaded timer, or a list neighbour, belongs to an object nobody touched
// for seconds, so it is a cache miss; the node of the timer a caller arms or
// cancels was just touched by that caller (its socket, its request), so it
// is warm, while its list neighbours are not.
//
//   cost_dequeue/Q/pending:N   cancel K random pending timers of a queue
//                              holding N (uniform delays 1..60000 jiffies);
//                              the K nodes are read just before (the caller's
//                              touch), their list neighbours are cold
//   cost_enqueue/Q/pending:N   arm those K idle timers again with new uniform
//                              delays: the pushed-out bucket head is cold
//   cost_cascade_move/classic/pending:N
//                              N timers armed in random pool order into one
//                              tv2 slot; the one __run_timers() step that
//                              cascades them into tv1, per timer moved
//   cost_expiry/Q/pending:N    N timers on one deadline armed in random pool
//                              order; the softirq that expires them, per timer
//                              (the callback only counts)
//   cost_bucket_scan/classic   one far timer keeps the wheel non-empty; one
//                              softirq catches up 1M jiffies (NOHZ idle exit),
//                              per bucket scanned (steps + empty cascades)
//   cost_bucket_scan/modern    empty collects: a cancelled timer leaves
//                              next_expiry stale, so the tick raises and the
//                              softirq scans its levels and finds nothing;
//                              per bucket scanned (the search that follows is
//                              included: see the note in docs/performance.md)
//   cost_next_expiry_step/Q/pending:N
//                              (arm + cancel + next_timer_interrupt()) minus
//                              (arm + cancel), divided by the search steps
//                              that next_timer_interrupt() made
//   cost_softirq_entry         one tick's softirq machinery with nothing
//                              due: SoftirqCpu raise, irq_exit, begin,
//                              start_pass, the queue's run_softirq() that
//                              returns at once, end_pass (the engine's path)
#include "bench/bench_hz.hpp"
#include "bench/clock_reference.hpp"
#include "bench/cpu_clock.hpp"
#include "bench/delay_tables.hpp"
#include "bench/filled_queue.hpp"
#include "softirq/softirq.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#ifndef TIMERSIM_BUILDTYPE
#define TIMERSIM_BUILDTYPE "unknown"
#endif

namespace timersim::bench {
namespace {

constexpr std::array<std::int64_t, 2> kPending = {100'000, 1'000'000};
constexpr std::size_t kBatch = 16384; // timers per timed batch of enqueues/dequeues

std::size_t pending_arg(const benchmark::State& state) { return static_cast<std::size_t>(state.range(0)); }

double seconds(CpuClock::duration d) {
    const auto c = CpuClock::reading_cost();
    return std::chrono::duration<double>(d > c ? d - c : CpuClock::duration::zero()).count();
}

// A permutation of 0..n-1 from a fixed seed (std::shuffle's algorithm is the
// library's, so the order may differ between standard libraries; the
// figures do not depend on which random order it is).
std::vector<std::uint32_t> permutation(std::size_t n, std::uint64_t seed) {
    std::vector<std::uint32_t> p(n);
    std::iota(p.begin(), p.end(), 0u);
    std::mt19937_64 rng(seed);
    std::shuffle(p.begin(), p.end(), rng);
    return p;
}

void set_ns_per_op(benchmark::State& state, double total_s, double ops) {
    state.counters["ns_per_op"] = ops > 0 ? total_s * 1e9 / ops : 0;
    state.counters["ops"] = ops;
}

// cost_dequeue and cost_enqueue: one benchmark each, the same batches.
enum class ArmHalf { dequeue, enqueue };

// Between two isolated operations: wait until every earlier instruction has
// completed (x86 lfence), so one operation's cache misses cannot overlap the
// next one's. In the kernel, an arm or cancel is surrounded by the caller's
// own work, not by another arm: overlapping misses across a tight batch
// would understate what one operation costs there.
inline void serialize() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("lfence" ::: "memory");
#else
    asm volatile("" ::: "memory");
#endif
}

template <TimerQueue Q>
void arm_half(benchmark::State& state, ArmHalf half) {
    const bool isolated = state.range(1) != 0;
    auto& f = filled_queue<Q>(pending_arg(state));
    Q& q = f.queue();
    const std::vector<std::uint32_t> order = permutation(f.size(), 0x5eed'c001);
    const std::vector<Jiffies> delays = uniform_delays(kDelayTableSize, 0x5eed'c002);
    std::size_t at = 0;  // cursor in `order`
    std::size_t dat = 0; // cursor in `delays`
    double timed = 0;
    double ops = 0;
    CpuClock::reading_cost();
    for (auto _ : state) {
        std::array<TimerId, kBatch> batch;
        for (auto& id : batch) {
            id = f.ids()[order[at]];
            if (++at == order.size()) at = 0;
        }
        // The caller's touch of its own timer (untimed).
        std::size_t touched = 0;
        for (const TimerId id : batch) touched += q.is_pending(id);
        benchmark::DoNotOptimize(touched);
        const auto t0 = CpuClock::now();
        for (const TimerId id : batch) {
            benchmark::DoNotOptimize(q.cancel(id));
            if (isolated) serialize();
        }
        const auto t1 = CpuClock::now();
        for (const TimerId id : batch) {
            benchmark::DoNotOptimize(q.arm(id, q.jiffies() + delays[dat]));
            if (isolated) serialize();
            if (++dat == delays.size()) dat = 0;
        }
        const auto t2 = CpuClock::now();
        const double s = seconds(half == ArmHalf::dequeue ? t1 - t0 : t2 - t1);
        state.SetIterationTime(s);
        timed += s;
        ops += kBatch;
    }
    if (q.pending() != f.size()) state.SkipWithError("the pending count changed");
    set_ns_per_op(state, timed, ops);
}

template <TimerQueue Q>
void cost_dequeue(benchmark::State& state) { arm_half<Q>(state, ArmHalf::dequeue); }
template <TimerQueue Q>
void cost_enqueue(benchmark::State& state) { arm_half<Q>(state, ArmHalf::enqueue); }

// Creates n timers and arms them in a random order of their handles, so that
// a bucket's list runs through the pool in random memory order.
template <TimerQueue Q>
std::vector<TimerId> arm_shuffled(Q& q, std::size_t n, const std::vector<std::uint32_t>& order,
                                  auto&& expiry_of, ArmCall call = ArmCall::mod_timer) {
    std::vector<TimerId> ids(n);
    q.reserve(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = q.create();
    for (std::size_t i = 0; i < n; ++i) q.arm(ids[order[i]], expiry_of(i), call);
    return ids;
}

// 4.x cascade(): N timers in the tv2 slot that cascades at step C + 256,
// where C is the next multiple of 256 after T. Their expiries avoid C + 256
// itself (tv1 slot 0 runs in that same step, after the cascade).
void cost_cascade_move(benchmark::State& state) {
    release_filled_queue();
    const std::size_t n = pending_arg(state);
    const std::vector<std::uint32_t> order = permutation(n, 0x5eed'c003);
    const std::vector<Jiffies> offsets = uniform_delays(n, 0x5eed'c004, 257, 511);
    double timed = 0;
    double ops = 0;
    CpuClock::reading_cost();
    for (auto _ : state) {
        auto q = std::make_unique<ClassicWheel>(ClassicWheel::Config{.hz = kBenchHz});
        const Jiffies c = (q->timer_jiffies() | 255) + 1;
        arm_shuffled(*q, n, order, [&](std::size_t i) { return c + offsets[i]; }, ArmCall::mod_timer_pinned);
        std::uint64_t fired = 0;
        auto count = [&fired](const FiredTimer&) { ++fired; };
        tick_to(*q, c + 255, count); // untimed: up to the step before the cascade
        const std::uint64_t moves = q->counters().cascade_moves;
        const auto t0 = CpuClock::now();
        q->set_jiffies(c + 256);
        q->run_softirq(count);
        const auto t1 = CpuClock::now();
        const double s = seconds(t1 - t0);
        state.SetIterationTime(s);
        const std::uint64_t moved = q->counters().cascade_moves - moves;
        if (moved != n || fired != 0) {
            state.SkipWithError("expected one cascade of every timer and no expiry");
            break;
        }
        timed += s;
        ops += static_cast<double>(moved);
    }
    set_ns_per_op(state, timed, ops);
}

// N timers on one deadline 50 jiffies ahead: modern level 0 (one bucket),
// classic tv1, heap all equal. The ticks before it run untimed; the softirq
// that runs them is timed.
template <TimerQueue Q>
void cost_expiry(benchmark::State& state) {
    release_filled_queue();
    const std::size_t n = pending_arg(state);
    const std::vector<std::uint32_t> order = permutation(n, 0x5eed'c005);
    double timed = 0;
    double ops = 0;
    CpuClock::reading_cost();
    for (auto _ : state) {
        auto q = std::make_unique<Q>(typename Q::Config{.hz = kBenchHz});
        const Jiffies deadline = q->jiffies() + 50;
        const auto ids =
            arm_shuffled(*q, n, order, [&](std::size_t) { return deadline; }, ArmCall::mod_timer_pinned);
        // 6.1 calc_index() rounds up even on level 0: the modern wheel runs
        // them one jiffy after `deadline`.
        const Jiffies due = q->placement(ids[0]).bucket_expiry;
        std::uint64_t fired = 0;
        auto count = [&fired](const FiredTimer&) { ++fired; };
        tick_to(*q, due - 1, count);
        const std::uint64_t expired = q->counters().expired;
        const auto t0 = CpuClock::now();
        q->set_jiffies(due);
        q->run_softirq(count);
        const auto t1 = CpuClock::now();
        const double s = seconds(t1 - t0);
        state.SetIterationTime(s);
        if (fired != n || q->counters().expired - expired != n) {
            state.SkipWithError("expected every timer to expire in one softirq");
            break;
        }
        timed += s;
        ops += static_cast<double>(n);
    }
    set_ns_per_op(state, timed, ops);
}

// 4.x __run_timers() after a long NOHZ idle stretch: one softirq walks every
// missed jiffy. One timer far away (tv5) keeps all_timers non-zero.
void cost_bucket_scan_classic(benchmark::State& state) {
    constexpr Jiffies kWalk = 1'000'000;
    double timed = 0;
    double ops = 0;
    CpuClock::reading_cost();
    for (auto _ : state) {
        ClassicWheel q(ClassicWheel::Config{.hz = kBenchHz, .slack = std::nullopt});
        const TimerId far = q.create();
        q.arm(far, q.jiffies() + (Jiffies{1} << 30));
        std::uint64_t fired = 0;
        const std::uint64_t scanned = q.counters().buckets_scanned;
        const auto t0 = CpuClock::now();
        wake_at(q, q.jiffies() + kWalk, [&fired](const FiredTimer&) { ++fired; });
        const auto t1 = CpuClock::now();
        const double s = seconds(t1 - t0);
        state.SetIterationTime(s);
        timed += s;
        ops += static_cast<double>(q.counters().buckets_scanned - scanned);
        if (fired != 0) state.SkipWithError("the far timer fired");
    }
    set_ns_per_op(state, timed, ops);
}

// 6.1 __run_timers() with nothing to run: arm a timer into an empty level-0
// bucket and cancel it; next_expiry stays at that bucket (detach only flags
// it for recalculation), so at that jiffy the tick raises and the softirq
// collects nothing: it scans the due levels and searches the bitmap again.
// By difference: rounds of (arm, cancel, tick, softirq) minus rounds of
// (arm, cancel), per bucket scanned. Counter steps_per_scan: the
// next-expiry search steps that came with each scanned bucket (in the time).
void cost_bucket_scan_modern(benchmark::State& state) {
    constexpr int kRounds = 4096;
    ModernWheel q(ModernWheel::Config{.hz = kBenchHz});
    const TimerId far = q.create();
    const TimerId t = q.create();
    double with_s = 0;
    double without_s = 0;
    double ops = 0;
    double steps = 0;
    std::uint64_t fired = 0;
    auto count = [&fired](const FiredTimer&) { ++fired; };
    CpuClock::reading_cost();
    for (auto _ : state) {
        q.arm(far, q.jiffies() + 50'000); // level 4: the search finds something; never reached
        const auto t0 = CpuClock::now();
        for (int r = 0; r < kRounds; ++r) {
            q.arm(t, q.jiffies() + 1);
            benchmark::DoNotOptimize(q.placement(t).bucket_expiry);
            q.cancel(t);
        }
        const auto t1 = CpuClock::now();
        const std::uint64_t scanned = q.counters().buckets_scanned;
        const std::uint64_t stepped = q.counters().next_expiry_search_steps;
        const std::uint64_t empty = q.counters().empty_runs;
        for (int r = 0; r < kRounds; ++r) {
            q.arm(t, q.jiffies() + 1);
            const Jiffies due = q.placement(t).bucket_expiry; // 6.1 rounds level 0 up too
            q.cancel(t);
            q.set_jiffies(due);
            if (q.softirq_due()) q.run_softirq(count);
        }
        const auto t2 = CpuClock::now();
        const double a = seconds(t1 - t0);
        const double b = seconds(t2 - t1);
        state.SetIterationTime(b);
        without_s += a;
        with_s += b;
        ops += static_cast<double>(q.counters().buckets_scanned - scanned);
        steps += static_cast<double>(q.counters().next_expiry_search_steps - stepped);
        if (q.counters().empty_runs - empty != kRounds || fired != 0) {
            state.SkipWithError("expected one empty collect per round");
            break;
        }
    }
    state.counters["ns_per_op"] = ops > 0 ? std::max(0.0, with_s - without_s) * 1e9 / ops : 0;
    state.counters["ops"] = ops;
    state.counters["steps_per_scan"] = ops > 0 ? steps / ops : 0;
}

// The next-expiry search, by difference: the same arm+cancel pairs with and
// without a next_timer_interrupt() after each, divided by the search steps
// it made. The armed timer becomes the queue's earliest (modern: alone in a
// far bucket, so the cancel flags next_expiry for recalculation; classic:
// the cached next_timer, so the cancel makes it stale) and the call searches.
template <TimerQueue Q>
void cost_next_expiry_step(benchmark::State& state) {
    constexpr int kRounds = 16384;
    auto& f = filled_queue<Q>(pending_arg(state));
    Q& q = f.queue();
    const TimerId t = f.spare();
    // Modern: level 5 (from 258048 jiffies), empty in a fill of delays up to 60000. Classic: next
    // jiffy, ahead of (or tied with) every filled timer.
    const Jiffies delay = std::is_same_v<Q, ModernWheel> ? 300'000 : 1;
    double with_s = 0;
    double without_s = 0;
    double steps = 0;
    CpuClock::reading_cost();
    for (auto _ : state) {
        const auto t0 = CpuClock::now();
        for (int r = 0; r < kRounds; ++r) {
            q.arm(t, q.jiffies() + delay, ArmCall::mod_timer_pinned);
            q.cancel(t);
        }
        const auto t1 = CpuClock::now();
        const std::uint64_t stepped = q.counters().next_expiry_search_steps;
        for (int r = 0; r < kRounds; ++r) {
            q.arm(t, q.jiffies() + delay, ArmCall::mod_timer_pinned);
            q.cancel(t);
            benchmark::DoNotOptimize(q.next_timer_interrupt());
        }
        const auto t2 = CpuClock::now();
        steps += static_cast<double>(q.counters().next_expiry_search_steps - stepped);
        const double a = seconds(t1 - t0);
        const double b = seconds(t2 - t1);
        state.SetIterationTime(b);
        without_s += a;
        with_s += b;
    }
    state.counters["ns_per_op"] = steps > 0 ? std::max(0.0, with_s - without_s) * 1e9 / steps : 0;
    state.counters["steps_per_search"] = steps / (static_cast<double>(state.iterations()) * kRounds);
    state.counters["ops"] = steps;
}

// The engine's per-pass softirq path with nothing due (sim/machine/engine.hpp
// tick() -> run_softirqs()), minus the cost accounting: modern wheel, whose
// run_softirq() returns at once when next_expiry is not due.
void cost_softirq_entry(benchmark::State& state) {
    constexpr int kRounds = 1 << 16;
    ModernWheel q(ModernWheel::Config{.hz = kBenchHz});
    const TimerId far = q.create();
    q.arm(far, q.jiffies() + 50'000);
    SoftirqCpu cpu(SoftirqCpu::Config{.hz = kBenchHz});
    std::uint64_t fired = 0;
    auto count = [&fired](const FiredTimer&) { ++fired; };
    double timed = 0;
    double ops = 0;
    CpuClock::reading_cost();
    std::uint64_t now_ns = 0;
    for (auto _ : state) {
        const auto t0 = CpuClock::now();
        for (int r = 0; r < kRounds; ++r) {
            cpu.raise(timer_softirq);
            if (!cpu.irq_exit()) continue;
            cpu.begin(q.jiffies(), SoftirqContext::irq_exit);
            SoftirqCpu::PassEnd end;
            do {
                const std::uint32_t mask = cpu.start_pass();
                if (mask & (1u << timer_softirq)) q.run_softirq(count);
                end = cpu.end_pass(q.jiffies(), now_ns);
            } while (end == SoftirqCpu::PassEnd::restart);
            now_ns += 4'000'000;
        }
        const auto t1 = CpuClock::now();
        const double s = seconds(t1 - t0);
        state.SetIterationTime(s);
        timed += s;
        ops += kRounds;
    }
    if (fired != 0) state.SkipWithError("nothing should have fired");
    set_ns_per_op(state, timed, ops);
}

template <TimerQueue Q>
void register_arm_halves() {
    const std::string q(Q::name);
    for (const std::int64_t n : kPending) {
        for (const std::int64_t isolated : {1, 0}) {
            benchmark::RegisterBenchmark(("cost_dequeue/" + q).c_str(), cost_dequeue<Q>)
                ->ArgNames({"pending", "isolated"})->Args({n, isolated})->UseManualTime()->Iterations(64);
            benchmark::RegisterBenchmark(("cost_enqueue/" + q).c_str(), cost_enqueue<Q>)
                ->ArgNames({"pending", "isolated"})->Args({n, isolated})->UseManualTime()->Iterations(64);
        }
        if constexpr (!std::is_same_v<Q, HeapQueue>) // the heap has no search
            benchmark::RegisterBenchmark(("cost_next_expiry_step/" + q).c_str(), cost_next_expiry_step<Q>)
                ->ArgName("pending")->Arg(n)->UseManualTime()->Iterations(16);
    }
}

template <TimerQueue Q>
void register_expiry() {
    const std::string q(Q::name);
    for (const std::int64_t n : kPending)
        benchmark::RegisterBenchmark(("cost_expiry/" + q).c_str(), cost_expiry<Q>)
            ->ArgName("pending")->Arg(n)->UseManualTime()->Iterations(n <= 100'000 ? 10 : 3);
}

} // namespace
} // namespace timersim::bench

int main(int argc, char** argv) {
    using namespace timersim;
    using namespace timersim::bench;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    register_clock_reference("start");
    register_arm_halves<ModernWheel>();
    register_arm_halves<ClassicWheel>();
    register_arm_halves<HeapQueue>();
    for (const std::int64_t n : kPending)
        benchmark::RegisterBenchmark("cost_cascade_move/classic", cost_cascade_move)
            ->ArgName("pending")->Arg(n)->UseManualTime()->Iterations(n <= 100'000 ? 10 : 3);
    register_expiry<ModernWheel>();
    register_expiry<ClassicWheel>();
    register_expiry<HeapQueue>();
    benchmark::RegisterBenchmark("cost_bucket_scan/classic", cost_bucket_scan_classic)
        ->UseManualTime()->Iterations(5);
    benchmark::RegisterBenchmark("cost_bucket_scan/modern", cost_bucket_scan_modern)
        ->UseManualTime()->Iterations(64);
    benchmark::RegisterBenchmark("cost_softirq_entry", cost_softirq_entry)->UseManualTime()->Iterations(64);
    register_clock_reference("end");

    benchmark::AddCustomContext("timersim_buildtype", TIMERSIM_BUILDTYPE);
    benchmark::AddCustomContext("compiler_version", __VERSION__);
    benchmark::AddCustomContext("hz", "250");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
