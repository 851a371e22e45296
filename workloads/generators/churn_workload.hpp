// Connection churn (workloads/generators/connection_churn.hpp) as a workload of the
// simulated machine: each message is an action on CPU 0 that re-arms its
// connection's timer relative to the jiffies it actually runs at.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/connection_churn.hpp"

#include <cstdint>

namespace timersim {

// Messages stop after `ticks` ticks from the start. Each runs `after_tick_ns`
// after the tick of its jiffy (the engine's tick jitter bound, so a message
// never overtakes its own tick).
WorkloadFactory churn_workload(const ConnectionChurnConfig& config, std::uint64_t ticks,
                               std::uint64_t after_tick_ns);

} // namespace timersim
