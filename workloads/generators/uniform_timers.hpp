// uniform: N timers under a random mix of operations, the generic stress
// case. Each timer gets operations as a Poisson process (mean gap
// `op_interval_ms`); an operation is a cancel (del_timer) with probability
// `cancel_fraction`, else an arm (mod_timer: an add if idle, a modify if
// pending) with a timeout uniform in [timeout_min_ms, timeout_max_ms]. The
// callbacks do nothing.
#pragma once

#include "workloads/workload.hpp"

#include <cstdint>

namespace timersim {

struct UniformConfig {
    std::uint32_t timers = 10000;
    std::uint64_t seed = 1;
    double op_interval_ms = 1000;
    double timeout_min_ms = 10;
    double timeout_max_ms = 10000;
    double cancel_fraction = 0.2;
};

// Stops scheduling after `ticks` ticks.
WorkloadFactory uniform_workload(const UniformConfig& config, std::uint64_t ticks);

} // namespace timersim
