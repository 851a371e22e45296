// timersim_bench_replay: trace lines per second, parsing alone and parsing
// plus simulating (workloads/traces/replay/trace_replay.hpp on the machine of
// sim/machine/engine_run.hpp). Figures in docs/performance.md ("Replay").
//
//   parse              TraceReader over the trace: every line tokenised,
//                      checked and its timer interned; no simulation
//   replay/D           run_machine() on design D (classic, modern, heap)
//                      replaying the trace: parsing, scheduling each step,
//                      the queue's work, ticks, softirq, metrics
//
//   validate           replay_kernel_trace() (`timersim validate`) over the
//                      committed real 6.1 capture
//                      (tests/data/kernel/capture-6.1-hz250.trace.xz, 8,382
//                      lines): parsing, our wheels, both checks
//
// Counter lines_per_s: trace lines per second of this thread's CPU time.
//
// The trace (written once to a temporary file, 4M events, 40 s simulated at
// HZ=250) looks like `timersim gen` output for a connection workload: 10K or
// 100K timers (/timers:N); a step every 10 us on average arms (60 %), re-arms (25 %) or
// cancels (15 %) a timer picked at random, with absolute expiries (at=)
// 1..60000 jiffies ahead (a third of them within 64 jiffies, so they fire);
// and one in ten fires comes back as a callback block (cb=) re-arming its
// own timer, as a retransmit does.
#include "bench/cpu_clock.hpp"
#include "sim/machine/engine_run.hpp"
#include "sim/validate/kernel_replay.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <unistd.h>

#ifndef TIMERSIM_BUILDTYPE
#define TIMERSIM_BUILDTYPE "unknown"
#endif

namespace {

using namespace timersim;

constexpr unsigned kHz = 250;
constexpr std::uint64_t kEvents = 4'000'000;
constexpr Jiffies kStart = 4294892296ull;

struct Trace {
    std::string path;
    std::uint64_t lines = 0;
    std::uint64_t last_ns = 0;
    Trace() = default;
    Trace(Trace&& o) noexcept : path(std::move(o.path)), lines(o.lines), last_ns(o.last_ns) { o.path.clear(); }
    Trace& operator=(Trace&& o) noexcept {
        path = std::move(o.path);
        o.path.clear();
        lines = o.lines;
        last_ns = o.last_ns;
        return *this;
    }
    ~Trace() {
        if (!path.empty()) std::filesystem::remove(path);
    }
};

// The trace with `timers` timers (10K or 100K), written at first use.
const Trace& trace(std::uint32_t timers) {
    static std::map<std::uint32_t, Trace> traces;
    const auto found = traces.find(timers);
    if (found != traces.end()) return found->second;
    const Trace& made = traces[timers] = [timers] {
        Trace t;
        t.path = (std::filesystem::temp_directory_path() /
                  fmt::format("timersim-bench-replay-{}-{}.trace", ::getpid(), timers))
                     .string();
        std::FILE* f = std::fopen(t.path.c_str(), "wb");
        if (!f) throw std::runtime_error("cannot write " + t.path);
        TraceWriter w(f, TraceHeader{.hz = kHz, .start_jiffies = kStart});
        std::mt19937_64 rng(1);
        std::uint64_t now = 0;
        TraceEvent e;
        for (std::uint64_t i = 0; i < kEvents; ++i) {
            now += 1 + rng() % 20'000;
            const std::uint32_t timer = static_cast<std::uint32_t>(rng() % timers);
            const unsigned what = static_cast<unsigned>(rng() % 100);
            const Jiffies j = jiffies_at(TraceHeader{kHz, kStart}, now);
            const Jiffies delta = rng() % 3 == 0 ? 1 + rng() % 64 : 1 + rng() % 60'000;
            e = TraceEvent{};
            e.time_ns = now;
            e.key = TimerKey{false, timer, {}};
            e.kind = what < 60 ? TraceEventKind::arm : what < 85 ? TraceEventKind::modify : TraceEventKind::cancel;
            if (e.kind != TraceEventKind::cancel) {
                e.expiry = ExpiryForm::at_jiffies;
                e.expiry_value = j + delta;
            }
            // A callback block: the timer re-armed from its own callback.
            if (what >= 97) e.cb_key = TimerKey{false, timer, {}};
            w.write(e);
            ++t.lines;
        }
        w.flush();
        std::fclose(f);
        t.last_ns = now;
        return t;
    }();
    return made;
}

double cpu_seconds() {
    return std::chrono::duration<double>(bench::CpuClock::now().time_since_epoch()).count();
}

void set_counters(benchmark::State& state, std::uint64_t lines, double cpu_s) {
    state.SetItemsProcessed(static_cast<std::int64_t>(lines));
    state.counters["lines_per_s"] = static_cast<double>(lines) / cpu_s;
}

void BM_parse(benchmark::State& state) {
    const Trace& t = trace(static_cast<std::uint32_t>(state.range(0)));
    std::uint64_t lines = 0;
    double cpu_s = 0;
    for (auto _ : state) {
        const double start = cpu_seconds();
        std::FILE* f = std::fopen(t.path.c_str(), "rb");
        TraceReader reader(f, t.path);
        TraceEvent e;
        std::uint64_t n = 0;
        while (reader.next(e)) ++n;
        std::fclose(f);
        benchmark::DoNotOptimize(n);
        cpu_s += cpu_seconds() - start;
        lines += n;
    }
    set_counters(state, lines, cpu_s);
}

void BM_replay(benchmark::State& state, Design design) {
    const Trace& t = trace(static_cast<std::uint32_t>(state.range(0)));
    MachineConfig m;
    m.hz = kHz;
    m.start_jiffies = kStart;
    m.ticks = ticks_at(kHz, t.last_ns) + 1;
    std::uint64_t lines = 0;
    double cpu_s = 0;
    for (auto _ : state) {
        const double start = cpu_seconds();
        TraceReplayStats stats;
        const WorkloadSpec spec{.name = "trace", .description = "trace",
                                .factory = trace_replay(t.path, TraceKind::timersim,
                                                        TraceHeader{.hz = kHz, .start_jiffies = kStart}, &stats)};
        const RunResult r = run_machine(design, m, spec);
        benchmark::DoNotOptimize(r.total.fired);
        cpu_s += cpu_seconds() - start;
        // Blocks whose fire does not come before the run ends are counted,
        // not applied; both were read.
        lines += stats.events + stats.callback_events_unmatched;
        if (stats.events + stats.callback_events_unmatched != t.lines)
            state.SkipWithError("the replay did not read every event");
    }
    set_counters(state, lines, cpu_s);
}

// The committed capture, decompressed once (xz -dc: a benchmark's fixture).
const std::string& kernel_capture() {
    static const std::string text = [] {
        const std::string path = std::string(TIMERSIM_SOURCE_ROOT) + "/tests/data/kernel/capture-6.1-hz250.trace.xz";
        std::FILE* p = ::popen(("xz -dc -- '" + path + "'").c_str(), "r");
        std::string out;
        char buf[65536];
        for (std::size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        if (!p || ::pclose(p) != 0) out.clear();
        return out;
    }();
    return text;
}

void BM_validate(benchmark::State& state) {
    const std::string& text = kernel_capture();
    if (text.empty()) {
        state.SkipWithError("cannot read tests/data/kernel/capture-6.1-hz250.trace.xz (xz -dc)");
        return;
    }
    const auto per_replay = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
    std::uint64_t lines = 0;
    double cpu_s = 0;
    for (auto _ : state) {
        const double start = cpu_seconds();
        const ReplayResult r = replay_kernel_trace(text, "capture-6.1-hz250.trace");
        benchmark::DoNotOptimize(r.expiry.agree);
        cpu_s += cpu_seconds() - start;
        lines += per_replay;
        if (r.idx.disagree + r.expiry.disagree != 0) state.SkipWithError("the capture no longer agrees 100%");
    }
    set_counters(state, lines, cpu_s);
}

} // namespace

BENCHMARK(BM_validate)->Name("validate")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(50);
BENCHMARK(BM_parse)->Name("parse")->ArgName("timers")->Arg(10'000)->Arg(100'000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_replay, classic, Design::classic)->Name("replay/classic")->ArgName("timers")
    ->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK_CAPTURE(BM_replay, modern, Design::modern)->Name("replay/modern")->ArgName("timers")
    ->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK_CAPTURE(BM_replay, heap, Design::heap)->Name("replay/heap")->ArgName("timers")
    ->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    benchmark::AddCustomContext("build_type", TIMERSIM_BUILDTYPE);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
