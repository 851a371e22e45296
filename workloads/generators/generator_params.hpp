// Every generator's parameters in one place: what the workload options fill
// from the command line and what `mixed` hands to its parts. The count and
// the seed are common: each generator gets `connections` connections (burst:
// `burst.size` timers) and its own seed derived from `seed` and its name.
#pragma once

#include "workloads/generators/burst.hpp"
#include "workloads/generators/delayed_ack.hpp"
#include "workloads/generators/keepalive.hpp"
#include "workloads/generators/socket_timeouts.hpp"
#include "workloads/generators/tcp_retransmit.hpp"
#include "workloads/generators/time_wait.hpp"
#include "workloads/generators/uniform_timers.hpp"

#include <cstdint>

namespace timersim {

struct GeneratorParams {
    std::uint32_t connections = 10000;
    std::uint64_t seed = 1;
    TcpRetransmitConfig tcp_retransmit;
    SocketTimeoutsConfig socket_timeouts;
    DelayedAckConfig delayed_ack;
    KeepaliveConfig keepalive;
    TimeWaitConfig time_wait;
    BurstConfig burst;
    UniformConfig uniform;
    double churn_message_interval_ms = 1000; // connection-churn (workloads/generators/connection_churn.hpp)
};

} // namespace timersim
