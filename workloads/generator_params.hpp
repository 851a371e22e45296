// Every generator's parameters in one place: what the workload options fill
// from the command line and what `mixed` hands to its parts. The count and
// the seed are common: each generator gets `connections` connections (burst:
// `burst.size` timers) and its own seed derived from `seed` and its name.
#pragma once

#include "workloads/burst.hpp"
#include "workloads/delayed_ack.hpp"
#include "workloads/keepalive.hpp"
#include "workloads/socket_timeouts.hpp"
#include "workloads/tcp_retransmit.hpp"
#include "workloads/time_wait.hpp"
#include "workloads/uniform_timers.hpp"

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
    double churn_message_interval_ms = 1000; // connection-churn (workloads/connection_churn.hpp)
};

} // namespace timersim
