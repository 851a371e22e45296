// keepalive: N connections with SO_KEEPALIVE and their keepalive timer
// (sk->sk_timer) as Linux 6.1 tcp_keepalive_timer() runs it (reference
// section 6.2):
//
//   open      inet_csk_reset_keepalive_timer(keepalive_time): mod_timer()
//             (sk_reset_timer) at jiffies + 7200 s.
//   segments  received segments push keepalive back the kernel's way: they
//             only update the receive timestamps; the timer is not touched.
//             Poisson arrivals (mean `traffic_interval_s`; 0: none), drawn
//             lazily when the timer fires, so they cost no events.
//   expiry    idle (time since the last segment) below keepalive_time:
//             re-arm for the rest (keepalive_time - idle). Otherwise, after
//             `probes` unanswered probes: reset, the connection closes and a
//             new one opens in its slot at once. Otherwise send a probe
//             (probes_out++) and re-arm for keepalive_interval. A live peer
//             answers a probe one RTT (50 ms) later, which counts as a
//             received segment; a dead peer (`dead_peer_fraction` of new
//             connections) never answers: 9 probes 75 s apart, then the
//             reset at 7200 + 9 * 75 = 7875 s.
//   close     connections also close normally after an exponential lifetime
//             (mean `lifetime_s`; 0: never): sk_stop_timer() deletes the
//             timer (inet_csk_delete_keepalive_timer()), and a new
//             connection opens in the slot at once.
//
// Per connection: one timer, ~40 bytes of state, at most one pending action.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/tcp_constants.hpp"

#include <cstdint>

namespace timersim {

struct KeepaliveConfig {
    std::uint32_t connections = 10000;
    std::uint64_t seed = 1;
    double keepalive_time_s = tcp::kKeepaliveTimeS;
    double keepalive_interval_s = tcp::kKeepaliveIntervalS;
    std::uint32_t probes = tcp::kKeepaliveProbes;
    double traffic_interval_s = 3600; // mean gap between received segments (0: no traffic)
    double dead_peer_fraction = 0.01;
    double lifetime_s = 4 * 3600;     // mean connection lifetime (0: forever)
};

// Stops scheduling after `ticks` ticks.
WorkloadFactory keepalive_workload(const KeepaliveConfig& config, std::uint64_t ticks);

} // namespace timersim
