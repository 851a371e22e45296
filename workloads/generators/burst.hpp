// burst: N timers armed together on one deadline (jiffies + timeout, the
// same jiffy for all), once or every `interval_ms`: the thundering herd a
// synchronised subsystem (a cache flush, a cgroup's periodic work, every
// connection of a restarted server) puts on one bucket, and what it does to
// one softirq. Timer i lives on CPU i % cpus; each CPU's share is armed by
// one action on that CPU. A repeat before the deadline re-arms (mod_timer)
// the still-pending timers.
#pragma once

#include "workloads/workload.hpp"

#include <cstdint>

namespace timersim {

struct BurstConfig {
    std::uint32_t size = 10000;  // timers per burst
    double timeout_ms = 1000;    // from arming to the deadline
    double interval_ms = 0;      // between bursts (0: one burst)
    double start_ms = 0;         // when the first burst is armed
};

// Stops scheduling after `ticks` ticks.
WorkloadFactory burst_workload(const BurstConfig& config, std::uint64_t ticks);

} // namespace timersim
