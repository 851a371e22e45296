// CpuClock: this thread's CPU time (user + system), for the benchmarks that
// time a phase themselves (the expiry drain, the fill). Unlike a wall clock
// it does not count time the thread spent descheduled, which matters on a
// small machine where builds run beside the benchmark; Google Benchmark's own
// "CPU" column measures the same way.
//
// Reading it is a system call (about 1.4 us on the 2-core VM the figures in
// docs/performance.md come from), so an interval between two readings holds
// one reading's cost too; `reading_cost()` is that bias, calibrated once, for
// timed phases short enough to care (a 1K-timer drain takes a few us).
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>

namespace timersim::bench {

struct CpuClock {
    using duration = std::chrono::nanoseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<CpuClock>;
    static constexpr bool is_steady = true;

    static time_point now() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
    }

    // The shortest interval measured around nothing, over a few hundred tries.
    static duration reading_cost() noexcept {
        static const duration cost = [] {
            duration best = duration::max();
            for (int i = 0; i < 256; ++i) {
                const time_point a = now();
                const time_point b = now();
                best = std::min(best, b - a);
            }
            return best;
        }();
        return cost;
    }
};

} // namespace timersim::bench
