// The kernel's jiffies through a trace, and the replay time that lands an
// event on them. Every timer_start tells the jiffies at its call (expires -
// timeout) and every timer_expire_entry its `now`; between two such samples
// jiffies advance at HZ, never past the next sample. An event replayed at
// its trace time from one anchor would drift off the kernel's jiffies (the
// committed 6.1 capture's jiffies ran 13 ahead of its timestamps by 2.7 s);
// replayed at replay_time() it lands on the jiffy the kernel was at.
//
//   KernelClock clock(samples, hz);   // samples: HzResolution::clock_samples, or any that show jiffies
//   Jiffies j = clock.jiffies_at(timestamp_ns);
//   ReplayTimes times(clock, first_timestamp_ns);
//   std::uint64_t t = times.next(timestamp_ns);   // in event order: non-decreasing, on jiffy j
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace timersim {

class KernelClock {
public:
    KernelClock() = default;
    // Samples in any order (CPUs print with skew); jiffies never go back.
    KernelClock(std::vector<JiffiesSample> samples, unsigned hz);
    bool empty() const noexcept { return samples_.empty(); }
    unsigned hz() const noexcept { return hz_; }
    // The jiffies at `timestamp_ns`: the last sample at or before it,
    // advanced at HZ for the time since, at most the next sample's. Before
    // the first sample, that sample's less the ticks between.
    Jiffies jiffies_at(std::uint64_t timestamp_ns) const noexcept;

private:
    std::vector<JiffiesSample> samples_; // by time; jiffies non-decreasing
    unsigned hz_ = 0;
};

// Replay times on the machine's tick grid (tick n at floor(n * 1e9 / HZ),
// time 0 the first event): an event at trace timestamp t is replayed inside
// the tick of the jiffy the kernel was at, the jiffy's first event an
// eighth of the way through it (past that tick's softirq), the others
// spaced as in the trace and kept in its order, each at least 1 ns after
// the one before (up to the jiffy's last nanosecond). Successive calls
// must come in event order.
class ReplayTimes {
public:
    ReplayTimes(const KernelClock& clock, std::uint64_t first_timestamp_ns);
    Jiffies start_jiffies() const noexcept { return start_; }
    // `known`: the jiffies the event itself tells (a timer_start's expires -
    // timeout), which win over the fit at its timestamp: a mod_timer()
    // replayed at its detach's time still lands on its enqueue's jiffy.
    std::uint64_t next(std::uint64_t timestamp_ns, std::optional<Jiffies> known = std::nullopt) noexcept;

private:
    static std::uint64_t settle(std::uint64_t begin, std::uint64_t end) noexcept;
    const KernelClock* clock_;
    Jiffies start_;
    std::uint64_t last_tick_ = 0;
    std::uint64_t last_time_ = 0;      // replay time given last
    std::uint64_t tick_first_ts_ = 0;  // trace timestamp of the first event in last_tick_
    bool any_ = false;
};

} // namespace timersim
