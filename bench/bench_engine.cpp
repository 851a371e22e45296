// timersim_bench_engine: the simulated machine as a whole (sim/machine/engine.hpp on
// one CPU), as opposed to bench_queues.cpp's single queue operations.
// scripts/bench engine runs it; figures in docs/performance.md ("Engine").
//
//   engine_mixed+prefetch/Q    the same, the workload handing the engine its
//                              next timers (kLookAhead below) to prefetch
//   engine_mixed/Q/pending:N   a mixed workload (MixedWorkload below) on the
//                              engine: bursts of arms, re-arms and cancels
//                              from task context, expiries whose callbacks
//                              re-arm half of their timers, ticks and
//                              TIMER_SOFTIRQ with the default cost model.
//                              Counter ops_per_s: timer operations (arm and
//                              cancel calls plus expiries) per second of this
//                              thread's CPU time; sim_s_per_s: simulated
//                              seconds per CPU second
//   queue_mixed/Q/pending:N    the same operation mix straight on the queue,
//                              ticking it with tick_to(): no events, no
//                              softirq state machine, no metrics. The
//                              difference to engine_mixed is the engine's
//                              own cost per operation
//   queue_mixed+requested/Q, queue_mixed+metrics/Q
//                              queue_mixed plus, step by step, the engine's
//                              per-timer side vector and its per-fire
//                              histograms (Bookkeeping below)
//   calendar/pending:N         the engine's calendar alone under a generator's
//                              load: N pending actions, each pop scheduling
//                              the next (counter ns_per_event)
//   engine_memory/Q/pending:N  N timers created and armed through the engine
//                              (uniform delays up to 240 s), then 1000 ticks
//                              run: rss_GiB = the whole process's resident
//                              set, B_per_timer = its growth per timer
//
// MixedWorkload: every 100 us of simulated time a burst of 16 operations on
// timers picked uniformly from N: 50% mod_timer() to a new expiry (a pending
// timer moves or takes a shortcut, an idle one is armed), 25% del_timer(),
// 25% mod_timer() of a timer that may be idle. New expiries: 30% short
// (1..64 jiffies: delayed ACKs, they expire), 70% long (1..60000 jiffies:
// retransmit and keepalive-like, mostly moved or cancelled before expiry).
// A callback re-arms its timer half of the time, with a new short or long
// delay. The timers start pending with long delays, so about N are pending.
#include "bench/clock_reference.hpp"
#include "bench/cpu_clock.hpp"
#include "bench/resident_memory.hpp"
#include "sim/machine/engine.hpp"
#include "sim/machine/error_histogram.hpp"
#include "sim/machine/event_queue.hpp"
#include "sim/machine/log_histogram.hpp"
#include "sim/machine/queued_action.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "workloads/generators/seeded_random.hpp"
#include "workloads/workload.hpp"

#include <benchmark/benchmark.h>

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

constexpr unsigned kHz = 250;
constexpr std::uint64_t kBurstGapNs = 100'000; // one burst of task-context operations per 100 us
constexpr unsigned kBurstOps = 16;
constexpr std::uint64_t kSimulatedPerIteration = 1'000'000'000; // 1 s = 250 ticks
constexpr Jiffies kShortMax = 64;
constexpr Jiffies kLongMax = 60'000;

// xorshift64*: cheap and the same on every standard library.
struct Rng {
    std::uint64_t s;
    std::uint64_t next() noexcept {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545F4914F6CDD1Dull;
    }
    // Uniform in 0..n-1 (multiply-shift: no division).
    std::uint64_t below(std::uint64_t n) noexcept {
        return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
    }
};

// The operation mix, shared by the engine workload and the queue-only loop,
// so both make the same kinds of calls in the same proportions.
struct Mix {
    Rng rng;
    std::uint64_t arms = 0, cancels = 0, fires = 0;

    Jiffies delay() noexcept {
        const std::uint64_t r = rng.next();
        return (r & 1023) < 307 ? 1 + (r >> 32) % kShortMax : 1 + (r >> 32) % kLongMax;
    }
    // One task-context operation on timer `id`: calls arm or cancel.
    template <class Arm, class Cancel>
    void op(TimerId id, Jiffies now, Arm&& arm, Cancel&& cancel) {
        const std::uint64_t r = rng.next() & 3;
        if (r == 2) {
            ++cancels;
            cancel(id);
        } else {
            ++arms;
            arm(id, now + delay());
        }
    }
    // A callback: re-arm half of the time.
    template <class Arm>
    void fire(TimerId id, Jiffies now, Arm&& arm) {
        ++fires;
        if (rng.next() & 1) {
            ++arms;
            arm(id, now + delay());
        }
    }
    std::uint64_t ops() const noexcept { return arms + cancels + fires; }
};

// Look-ahead (engine_mixed+prefetch): the timers of the bursts are drawn
// kLookAhead operations ahead from their own stream, so the workload knows
// its next operations, as a generator's calendar does: a drawn index gets
// its ids_ entry fetched, the one kLookAhead / 2 places on is handed to
// Sim::prefetch_timer(). Without prefetching the same indices are drawn at
// the same points: both variants make the same calls.
constexpr std::size_t kLookAhead = 32;

template <bool Prefetch = false>
class MixedWorkload final : public Workload {
public:
    MixedWorkload(Sim& sim, std::size_t n, std::uint64_t seed) : mix_{Rng{seed}}, pick_{seed ^ 0x9E3779B97F4A7C15ull} {
        sim.reserve_timers(n);
        ids_.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            ids_.push_back(sim.create_timer());
            sim.arm(ids_.back(), sim.jiffies() + 1 + mix_.rng.below(kLongMax));
        }
        for (std::uint32_t& i : ahead_) i = static_cast<std::uint32_t>(pick_.below(n));
        sim.schedule_action(kBurstGapNs, Action{.kind = Action::Kind::call});
    }

    void on_action(Sim& sim, std::uint64_t) override {
        const Jiffies now = sim.jiffies();
        for (unsigned i = 0; i < kBurstOps; ++i) {
            // The ring holds the next kLookAhead timers' indices: take one, draw one.
            const TimerId id = ids_[ahead_[head_]];
            ahead_[head_] = static_cast<std::uint32_t>(pick_.below(ids_.size()));
            if constexpr (Prefetch) {
                __builtin_prefetch(&ids_[ahead_[head_]]);
                sim.prefetch_timer(ids_[ahead_[(head_ + kLookAhead / 2) % kLookAhead]]);
            }
            head_ = (head_ + 1) % kLookAhead;
            mix_.op(id, now, [&sim](TimerId t, Jiffies e) { sim.arm(t, e); }, [&sim](TimerId t) { sim.cancel(t); });
        }
        sim.schedule_action(sim.now_ns() + kBurstGapNs, Action{.kind = Action::Kind::call});
    }

    void on_fire(Sim& sim, const FireRecord& r) override {
        mix_.fire(r.id, sim.jiffies(), [&sim](TimerId id, Jiffies e) { sim.arm(id, e); });
    }

    const Mix& mix() const noexcept { return mix_; }

private:
    Mix mix_;
    Rng pick_; // which timers the bursts operate on
    std::vector<TimerId> ids_;
    std::array<std::uint32_t, kLookAhead> ahead_{};
    std::size_t head_ = 0;
};

template <class Q>
Q make_queue() {
    return Q(typename Q::Config{.hz = kHz});
}

template <TimerQueue Q, bool Prefetch = false>
void engine_mixed(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    Q queue = make_queue<Q>();
    Engine<Q> engine(queue, EngineConfig{.hz = kHz});
    MixedWorkload<Prefetch> workload(engine, n, 0x5eed'e001);
    engine.set_workload(&workload);
    engine.run_until(kSimulatedPerIteration); // warm up: the queue reaches its working shape
    const std::uint64_t ops_before = workload.mix().ops();
    const Mix before = workload.mix();
    std::uint64_t until = engine.now_ns();
    for (auto _ : state) {
        until += kSimulatedPerIteration;
        engine.run_until(until);
    }
    const Mix& after = workload.mix();
    const double ops = static_cast<double>(after.ops() - ops_before);
    state.counters["ops_per_s"] = benchmark::Counter(ops, benchmark::Counter::kIsRate);
    state.counters["ns_per_op"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsRate |
                                                                 benchmark::Counter::kInvert);
    state.counters["sim_s_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                       benchmark::Counter::kIsRate);
    const double total = ops > 0 ? ops : 1;
    state.counters["share_arm"] = static_cast<double>(after.arms - before.arms) / total;
    state.counters["share_fire"] = static_cast<double>(after.fires - before.fires) / total;
    state.counters["pending"] = static_cast<double>(engine.queue().pending());
    state.SetItemsProcessed(static_cast<std::int64_t>(ops));
}

// What queue_mixed adds of the engine's bookkeeping, to find where the
// engine's time goes (docs/performance.md, "Engine"):
//   none       the bare queue
//   requested  plus the engine's per-timer side vector (Engine's
//              CpuState::requested): written on every arm, read on every fire
//   metrics    plus that and the two per-fire histogram samples
//              (ErrorHistogram, a std::map; Log2Histogram)
enum class Bookkeeping { none, requested, metrics };

// The same mix on the bare queue: bursts every 100 us, a tick every 4 ms
// (tick_to), callbacks re-arming from run_softirq.
template <TimerQueue Q, Bookkeeping K = Bookkeeping::none>
void queue_mixed(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    Q q = make_queue<Q>();
    Mix mix{Rng{0x5eed'e001}};
    std::vector<TimerId> ids(n);
    q.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        ids[i] = q.create();
        q.arm(ids[i], q.jiffies() + 1 + mix.rng.below(kLongMax));
    }
    constexpr unsigned kBurstsPerTick = 1'000'000'000 / kHz / kBurstGapNs; // 40
    std::vector<Jiffies> requested(K == Bookkeeping::none ? 0 : n, 0);
    ErrorHistogram error_jiffies;
    Log2Histogram error_ns;
    auto arm = [&](TimerId id, Jiffies e) {
        q.arm(id, e);
        if constexpr (K != Bookkeeping::none) requested[id] = e;
    };
    auto cancel = [&q](TimerId id) { q.cancel(id); };
    auto on_fire = [&](const FiredTimer& f) {
        if constexpr (K != Bookkeeping::none) {
            const std::int64_t err = jiffies_diff(q.jiffies(), requested[f.id]);
            if constexpr (K == Bookkeeping::metrics) {
                error_jiffies.add(err);
                error_ns.add(err * 4'000'000);
            } else {
                benchmark::DoNotOptimize(err);
            }
        }
        mix.fire(f.id, q.jiffies(), arm);
    };
    auto run_ticks = [&](unsigned ticks) {
        for (unsigned t = 0; t < ticks; ++t) {
            for (unsigned b = 0; b < kBurstsPerTick; ++b) {
                const Jiffies now = q.jiffies();
                for (unsigned i = 0; i < kBurstOps; ++i) mix.op(ids[mix.rng.below(n)], now, arm, cancel);
            }
            tick_to(q, q.jiffies() + 1, on_fire);
        }
    };
    run_ticks(kHz); // warm up, as engine_mixed
    const std::uint64_t ops_before = mix.ops();
    for (auto _ : state) run_ticks(kHz);
    const double ops = static_cast<double>(mix.ops() - ops_before);
    state.counters["ops_per_s"] = benchmark::Counter(ops, benchmark::Counter::kIsRate);
    state.counters["ns_per_op"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsRate |
                                                                 benchmark::Counter::kInvert);
    state.counters["pending"] = static_cast<double>(q.pending());
    state.SetItemsProcessed(static_cast<std::int64_t>(ops));
}

// N timers through the engine, then 1000 ticks; the resident set of the
// whole process and its growth (after malloc_trim, resident_memory.hpp).
template <TimerQueue Q>
void engine_memory(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        const std::size_t before = resident_bytes();
        {
            auto queue = std::make_unique<Q>(typename Q::Config{.hz = kHz});
            Engine<Q> engine(*queue, EngineConfig{.hz = kHz});
            engine.reserve_timers(n);
            Rng rng{0x5eed'e002};
            for (std::size_t i = 0; i < n; ++i) {
                const TimerId id = engine.create_timer();
                engine.arm(id, engine.jiffies() + 1 + rng.below(kLongMax));
            }
            engine.run_ticks(1000);
            const std::size_t after = resident_bytes();
            state.counters["rss_GiB"] = static_cast<double>(after) / (1ull << 30);
            state.counters["B_per_timer"] =
                static_cast<double>(after > before ? after - before : 0) / static_cast<double>(n);
            state.counters["pending"] = static_cast<double>(engine.queue().pending());
        }
    }
}

// The engine's calendar (sim/machine/event_queue.hpp) alone, loaded as a
// generator loads it: N connections with one pending action each; popping
// one schedules that connection's next at an exponential gap (mean 1 s,
// SeededRandom as the generators draw it), as `run --workload uniform`
// does. The state a pop's connection reads is fetched kLookAhead pops
// early through peek(), as the engine does. Counter ns_per_event: one pop
// and one push, the draw included.
void calendar(benchmark::State& state) {
    const auto n = static_cast<std::uint32_t>(state.range(0));
    constexpr std::uint64_t kEvents = 10'000'000;
    constexpr std::size_t kLookAhead = 16;
    for (auto _ : state) {
        state.PauseTiming();
        std::vector<SeededRandom> draws(n);
        EventQueue<QueuedAction> q;
        for (std::uint32_t i = 0; i < n; ++i) {
            draws[i] = SeededRandom::for_stream(1, i);
            q.push(static_cast<std::uint64_t>(draws[i].exponential(1e9)), QueuedAction{.word = i});
        }
        state.ResumeTiming();
        std::uint64_t last = 0;
        for (std::uint64_t k = 0; k < kEvents; ++k) {
            const auto e = q.pop();
            if (const auto* ahead = q.peek(kLookAhead)) __builtin_prefetch(&draws[ahead->payload.word], 1);
            if (e.time_ns < last) state.SkipWithError("the calendar popped an event before the previous one");
            last = e.time_ns;
            SeededRandom& r = draws[e.payload.word];
            q.push(e.time_ns + static_cast<std::uint64_t>(r.exponential(1e9)), e.payload);
        }
        state.PauseTiming();
        q = EventQueue<QueuedAction>{};
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kEvents));
    state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(state.iterations() * kEvents),
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

template <TimerQueue Q>
void register_queue() {
    const std::string q(Q::name);
    for (const std::int64_t n : {10'000, 100'000, 1'000'000}) {
        benchmark::RegisterBenchmark(("engine_mixed/" + q).c_str(), engine_mixed<Q>)
            ->ArgName("pending")->Arg(n)->MinTime(0.5)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("engine_mixed+prefetch/" + q).c_str(), engine_mixed<Q, true>)
            ->ArgName("pending")->Arg(n)->MinTime(0.5)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("queue_mixed/" + q).c_str(), queue_mixed<Q>)
            ->ArgName("pending")->Arg(n)->MinTime(0.5)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("queue_mixed+requested/" + q).c_str(),
                                     queue_mixed<Q, Bookkeeping::requested>)
            ->ArgName("pending")->Arg(n)->MinTime(0.5)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("queue_mixed+metrics/" + q).c_str(), queue_mixed<Q, Bookkeeping::metrics>)
            ->ArgName("pending")->Arg(n)->MinTime(0.5)->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("engine_memory/" + q).c_str(), engine_memory<Q>)
        ->ArgName("pending")->Arg(10'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);
}

} // namespace
} // namespace timersim::bench

int main(int argc, char** argv) {
    using namespace timersim;
    using namespace timersim::bench;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    register_clock_reference("start");
    for (const std::int64_t n : {100'000, 1'000'000})
        benchmark::RegisterBenchmark("calendar", calendar)
            ->ArgName("pending")->Arg(n)->Iterations(1)->Unit(benchmark::kMillisecond);
    register_queue<ModernWheel>();
    register_queue<ClassicWheel>();
    register_queue<HeapQueue>();
    register_clock_reference("end");

    benchmark::AddCustomContext("timersim_buildtype", TIMERSIM_BUILDTYPE);
    benchmark::AddCustomContext("compiler_version", __VERSION__);
    benchmark::AddCustomContext("hz", "250");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
