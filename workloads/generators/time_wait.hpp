// time-wait: N connection slots whose connections close into TIME_WAIT. Each
// timewait socket's tw_timer is TIMER_PINNED and armed once for
// TCP_TIMEWAIT_LEN (60 s) by __inet_twsk_schedule(); in 4.1-4.7 that was
// mod_timer_pinned(), so the classic wheel applies no slack (reference
// section 6.2). It fires once and the socket is freed.
//
//   slot cycle  a connection lives an exponential time (mean
//               `lifetime_ms`), closes (the timer is armed), and its
//               TIME_WAIT socket holds the slot until the timer fires; then
//               the next connection opens.
//   port reuse  with probability `port_reuse_fraction` a new SYN for the same
//               4-tuple arrives (uniform) within the 60 s: the timewait socket
//               is killed early (inet_twsk_deschedule_put() -> del_timer_sync)
//               and the next connection opens at once.
//
// Per slot: one timer, ~24 bytes of state, at most one pending action.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/tcp_constants.hpp"

#include <cstdint>

namespace timersim {

struct TimeWaitConfig {
    std::uint32_t connections = 10000; // slots
    std::uint64_t seed = 1;
    double lifetime_ms = 10000;        // mean connection lifetime before it closes
    double time_wait_s = tcp::kTimewaitLenS;
    double port_reuse_fraction = 0.05;
};

// Stops scheduling after `ticks` ticks.
WorkloadFactory time_wait_workload(const TimeWaitConfig& config, std::uint64_t ticks);

} // namespace timersim
