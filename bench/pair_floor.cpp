// How far the wheels' steady cancel+arm pair is from the floor of their own
// design, on one stream, in one process.
//
//   timersim_bench_pair_floor [PENDING] [WINDOWS] [PAIRS]   (default 1000000 6 2000000)
//
// The stream is ../shared/peers' steady workload: PENDING timers armed with
// its delay mix (70 % 50..500, 25 % 1K..60K, 5 % 60K..2M ticks), then windows
// of PAIRS pairs {cancel a random pending timer, arm it again with a new
// delay}, time standing still. Three queues take the same stream:
//   modern, classic  ModernWheel, ClassicWheel (slack off), as the peers
//                    harness builds them
//   floor            the least a bucket-array wheel does for the pair: the
//                    16-byte node read and written, the modern wheel's
//                    bucket computed (modern_levels.hpp), the handle appended
//                    to one of its bucket arrays and the buckets' live counts
//                    kept; no compaction (the arrays are preallocated), no
//                    counters, no validity or base checks, no next_expiry
// Each window prints this thread's CPU ns per pair (user and system: page
// faults count, as in the peers harness). The peers harness times only the
// first window after the fill; later windows show the steady regime.
//
// Why: on the VM of docs/performance.md a miss costs 130-250 ns and the
// out-of-order window, not the misses, sets the price of a pair: every
// instruction between two misses costs about a nanosecond at 10M pending
// (timersim_bench_miss_bound). The ratio wheel/floor is how much of the
// pair is the wheel's bookkeeping rather than its memory pattern.
#include "wheel/core/timer_pool.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_levels.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include "bench/bench_hz.hpp"
#include "bench/cpu_clock.hpp"
#include "bench/peers_delays.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

using timersim::Jiffies;
using timersim::TimerId;

struct Rng { // SplitMix64, as the peers harness draws
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }
};

struct Stream {
    std::vector<std::uint32_t> fill;
    std::vector<std::vector<std::uint32_t>> ids, delays; // per window
};

Stream make_stream(std::size_t pending, int windows, std::size_t pairs) {
    Stream s;
    Rng r{0x5eed0000ull + pending};
    s.fill.resize(pending);
    for (auto& d : s.fill) d = timersim::bench::draw_peers_delay(r);
    s.ids.assign(windows, std::vector<std::uint32_t>(pairs));
    s.delays.assign(windows, std::vector<std::uint32_t>(pairs));
    for (int w = 0; w < windows; ++w)
        for (std::size_t k = 0; k < pairs; ++k) {
            s.ids[w][k] = r.below(static_cast<std::uint32_t>(pending));
            s.delays[w][k] = timersim::bench::draw_peers_delay(r);
        }
    return s;
}

// The floor: a bucket-array wheel stripped to the pair's memory pattern.
class Floor {
public:
    // Each array is a ring of kRing entries on huge pages: appends wrap
    // around instead of growing or compacting (the floor never fires, so
    // what it overwrites does not matter), so an append writes its bucket's
    // hot tail line and nothing else, without page faults.
    explicit Floor(std::size_t pending) : nodes_(pending), rings_(kRing * kBuckets) {
        for (std::size_t b = 0; b < kBuckets; ++b) arrays_[b].ids = rings_.data() + b * kRing;
    }
    // Time stands still at 0, as in the harness: the expiry is the delay.
    void arm(TimerId id, std::uint32_t delay) {
        const Jiffies expires = delay;
        Node& n = nodes_[id];
        const auto wi = timersim::modern::place_at_level(expires, timersim::modern::level_of_delta(expires));
        Array& a = arrays_[wi.idx];
        n.expires = expires;
        n.ticket = a.size;
        n.idx = static_cast<std::uint16_t>(wi.idx);
        n.pending = true;
        a.ids[a.size++ % kRing] = id;
        ++a.live;
    }
    void cancel(TimerId id) {
        Node& n = nodes_[id];
        if (!n.pending) return;
        n.pending = false;
        --arrays_[n.idx].live;
    }
    std::size_t pending() const {
        std::size_t p = 0;
        for (const Array& a : arrays_) p += a.live;
        return p;
    }

private:
    struct Node {
        Jiffies expires = 0;
        TimerId ticket = 0;
        std::uint16_t idx = 0;
        bool pending = false;
    };
    struct Array {
        TimerId* ids = nullptr;
        std::uint32_t size = 0, live = 0;
    };
    static constexpr std::size_t kBuckets = timersim::modern::wheel_size(timersim::modern::kMaxDepth);
    static constexpr std::size_t kRing = 16384;
    timersim::HugePageVector<Node> nodes_;
    timersim::HugePageVector<TimerId> rings_;
    std::array<Array, kBuckets> arrays_;
};

timersim::ClassicWheel::Config classic_config() {
    // No slack, as the peers harness: queue mechanics only.
    return {.hz = timersim::bench::kBenchHz, .slack = std::nullopt};
}

// Fills q, runs the windows, prints one line; returns the per-window ns.
template <class Q>
std::vector<double> run(const char* name, Q& q, const Stream& s) {
    for (std::size_t i = 0; i < s.fill.size(); ++i) q.arm(static_cast<TimerId>(i), s.fill[i]);
    std::vector<double> ns;
    std::printf("%-8s", name);
    for (std::size_t w = 0; w < s.ids.size(); ++w) {
        const auto& ids = s.ids[w];
        const auto& delays = s.delays[w];
        const auto t0 = timersim::bench::CpuClock::now();
        for (std::size_t k = 0; k < ids.size(); ++k) {
            q.cancel(ids[k]);
            q.arm(ids[k], delays[k]);
        }
        const std::chrono::duration<double, std::nano> t = timersim::bench::CpuClock::now() - t0;
        ns.push_back(t.count() / static_cast<double>(ids.size()));
        std::printf(" %6.1f", ns.back());
    }
    if (q.pending() != s.fill.size()) {
        std::fprintf(stderr, "%s: %zu pending, expected %zu\n", name, q.pending(), s.fill.size());
        std::exit(1);
    }
    std::printf("\n");
    return ns;
}

// The wheels take absolute expiries; time stands still at their start.
template <class W>
struct AtStart {
    W w;
    explicit AtStart(std::size_t pending, W wheel) : w(std::move(wheel)) {
        w.reserve(pending);
        for (std::size_t i = 0; i < pending; ++i) w.create();
    }
    void arm(TimerId id, std::uint32_t delay) { w.arm(id, w.jiffies() + delay); }
    void cancel(TimerId id) { w.cancel(id); }
    std::size_t pending() const { return w.pending(); }
};

double median_after_first(std::vector<double> v) {
    if (v.size() > 1) v.erase(v.begin());
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    std::size_t pending = 1000000, pairs = 2000000;
    int windows = 6;
    try {
        if (argc > 1) pending = std::stoull(argv[1]);
        if (argc > 2) windows = std::stoi(argv[2]);
        if (argc > 3) pairs = std::stoull(argv[3]);
    } catch (const std::exception&) {
        pending = 0; // reported below
    }
    // Handles are 32-bit: PENDING stays below kNoTimer.
    if (argc > 4 || pending == 0 || pending >= timersim::kNoTimer || windows < 1 || pairs == 0) {
        std::fprintf(stderr, "usage: timersim_bench_pair_floor [PENDING>0] [WINDOWS>0] [PAIRS>0]\n");
        return 2;
    }
    const Stream s = make_stream(pending, windows, pairs);
    std::printf("%zu pending, %d windows of %zu pairs: CPU ns per pair in each window\n", pending, windows, pairs);
    std::vector<double> floor_ns, modern_ns, classic_ns;
    {
        Floor q(pending);
        floor_ns = run("floor", q, s);
    }
    {
        AtStart<timersim::ModernWheel> q(pending, timersim::ModernWheel({.hz = timersim::bench::kBenchHz}));
        modern_ns = run("modern", q, s);
    }
    {
        AtStart<timersim::ClassicWheel> q(pending, timersim::ClassicWheel{classic_config()});
        classic_ns = run("classic", q, s);
    }
    const double f = median_after_first(floor_ns);
    std::printf("first window / floor: modern %.2f, classic %.2f; later windows (median) / floor: modern %.2f, classic %.2f\n",
                modern_ns.front() / floor_ns.front(), classic_ns.front() / floor_ns.front(),
                median_after_first(modern_ns) / f, median_after_first(classic_ns) / f);
    return 0;
}
