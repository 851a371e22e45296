// socket-timeouts: the gateway case. N connections, each with an idle
// timeout that every message pushes back (mod_timer(jiffies + idle), the
// sk_reset_timer() way, so it almost never fires while traffic flows), and,
// on `reader_fraction` of them, a receive timeout in the SO_RCVTIMEO style:
// a reader blocked in recv() sleeps in schedule_timeout(), which arms an
// on-stack timer (no classic slack: it calls the internal __mod_timer(),
// reference section 2.4) and deletes it (del_timer_sync) when data wakes it.
//
//   message      Poisson arrivals per connection, mean gap
//                `message_interval_ms` times the connection's activity factor
//                (log-uniform in [1/activity_spread, activity_spread]: busy
//                and quiet connections, as on a real gateway). Each message
//                re-arms the idle timer and, for a reader, cancels its
//                pending receive timer and arms a new one (the reader
//                consumes the message and waits again).
//   idle fires   the connection is closed: its receive timer is deleted. The
//                next message opens a new connection in the slot (both timers
//                armed again), so the message stream does not depend on what
//                fired and every design sees the same messages.
//   rcv fires    recv() returns EAGAIN and the reader waits again at once:
//                the timer is re-armed from its callback.
//
// Per connection: two timers, ~32 bytes of state, one pending action.
#pragma once

#include "workloads/workload.hpp"

#include <cstdint>

namespace timersim {

struct SocketTimeoutsConfig {
    std::uint32_t connections = 10000;
    std::uint64_t seed = 1;
    double message_interval_ms = 10000; // mean gap between two messages of a connection (times its activity)
    double activity_spread = 10;       // per-connection activity log-uniform in [1/spread, spread]
    double idle_timeout_s = 60;
    double receive_timeout_ms = 5000;  // SO_RCVTIMEO
    double reader_fraction = 0.5;      // connections with a reader blocked in recv()
};

// Stops scheduling after `ticks` ticks.
WorkloadFactory socket_timeouts_workload(const SocketTimeoutsConfig& config, std::uint64_t ticks);

} // namespace timersim
