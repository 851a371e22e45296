// How many bucket entries, live and dead, the kernel wheels hold per pending
// timer in a long churn: the memory side of wheel/core/bucket_arrays.hpp's
// compaction rule, which the peers benchmark's resident figure (taken right
// after the fill) does not see.
//
//     timersim_bench_bucket_churn [TIMERS [PAIRS]]   (default 1000000 8000000)
//
// Fills TIMERS timers with the delays of ../shared/peers' streams (70 %
// 50..500 jiffies, 25 % 1000..60000, 5 % up to 2M), then runs PAIRS steady
// pairs (cancel a random pending timer, arm it again with a fresh delay), as
// the peers' "steady" workload does; no tick, so nothing fires. Entries are
// counted every 1024 pairs; prints the average and the peak per pending
// timer and the bytes per timer they make with the node.
#include "bench/bench_hz.hpp"
#include "bench/peers_delays.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using namespace timersim;

struct Rng { // xorshift64*: the same stream for both wheels
    std::uint64_t s;
    std::uint32_t below(std::uint32_t n) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return static_cast<std::uint32_t>(((s * 0x2545F4914F6CDD1Dull) >> 32) % n);
    }
};

template <class Q>
void churn(std::size_t timers, std::size_t pairs) {
    Q q(typename Q::Config{.hz = bench::kBenchHz});
    q.reserve(timers);
    Rng r{0x5eed0000ull + timers};
    for (std::size_t i = 0; i < timers; ++i) q.arm(q.create(), q.jiffies() + bench::draw_peers_delay(r));
    const double after_fill = static_cast<double>(q.bucket_entries()) / static_cast<double>(timers);
    double sum = 0, peak = 0;
    std::size_t samples = 0;
    for (std::size_t k = 0; k < pairs; ++k) {
        const TimerId id = r.below(static_cast<std::uint32_t>(timers));
        q.cancel(id);
        q.arm(id, q.jiffies() + bench::draw_peers_delay(r));
        if (k % 1024 == 1023) {
            const double per = static_cast<double>(q.bucket_entries()) / static_cast<double>(q.pending());
            sum += per;
            peak = std::max(peak, per);
            ++samples;
        }
    }
    const double avg = samples ? sum / static_cast<double>(samples) : after_fill;
    const double entry = sizeof(TimerId);
    fmt::print("| {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.1f} | {:.1f} |\n", Q::name, sizeof(typename Q::Node),
               Q::bytes_per_timer(), after_fill, avg, peak, sizeof(typename Q::Node) + avg * entry,
               sizeof(typename Q::Node) + peak * entry);
}

} // namespace

int main(int argc, char** argv) {
    const std::size_t timers = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const std::size_t pairs = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 8000000;
    if (timers == 0) {
        fmt::print(stderr, "usage: timersim_bench_bucket_churn [TIMERS [PAIRS]]\n");
        return 2;
    }
    fmt::print("{} timers, {} cancel+arm pairs\n\n", timers, pairs);
    fmt::print("| wheel | node bytes | bytes_per_timer() | entries per timer after the fill | average in the churn | peak | "
               "bytes per timer, average | at the peak |\n|---|---|---|---|---|---|---|---|\n");
    churn<ModernWheel>(timers, pairs);
    churn<ClassicWheel>(timers, pairs);
}
