// tcp-retransmit: N connections sending flights of segments, each with the
// retransmission timer (icsk_retransmit_timer) as Linux 6.1 runs it
// (reference section 6.2):
//
//   send      a flight of `segments_per_send` segments when nothing is in
//             flight: tcp_event_new_data_sent() -> tcp_rearm_rto() arms
//             jiffies + icsk_rto (TCP_TIMEOUT_INIT before the first RTT
//             sample) with mod_timer() (sk_reset_timer).
//   ACK       one per two segments (the receiver's delayed ACK), one RTT
//             after the send (the connection's RTT times a 0..25 % per-flight
//             jitter), spread over a tenth of that RTT. Each ACK that
//             advances while data is still in flight re-arms jiffies + rto
//             (tcp_rearm_rto()). The ACK that acks everything only clears
//             icsk_pending (inet_csk_clear_xmit_timer(): the timer is NOT
//             deleted), so the timer stays queued and later expires doing
//             nothing, unless the next send re-arms it first.
//   RTT       RFC 6298 smoothing (srtt, rttvar) of every ACK's sample except
//             for retransmitted flights (Karn), and Linux's floor: the
//             variance term is at least TCP_RTO_MIN (6.1 tcp_rtt_estimator()
//             keeps mdev_max_us >= tcp_rto_min_us, __tcp_set_rto() is srtt +
//             rttvar), so rto = srtt + max(4 rttvar, rto_min), rounded up to
//             jiffies and capped at TCP_RTO_MAX. A valid sample resets the
//             backoff (6.1 tcp_ack_update_rtt()).
//   loss      each segment is lost with probability `loss`; the ACKs stop at
//             the first lost one (no fast retransmit: the case where only
//             the RTO recovers), and the flight waits for the timer.
//   timeout   the callback (6.1 tcp_write_timer_handler()): nothing if
//             icsk_pending was cleared; re-arm to icsk_timeout if that is
//             still ahead; else tcp_retransmit_timer(): retransmit the head,
//             rto = min(2 rto, TCP_RTO_MAX), re-arm from the callback. The
//             retransmission is lost with probability `loss` too; if it gets
//             through, one ACK an RTT later acks the whole flight. After
//             `max_retransmits` (tcp_retries2) the connection is reset and a
//             new one (rto back to TCP_TIMEOUT_INIT) starts after a send gap.
//   gaps      the next flight starts an exponential gap (mean
//             `send_interval_ms`) after the previous one is fully acked.
//
// Per connection: one timer, ~64 bytes of state, at most one pending action.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/tcp_constants.hpp"

#include <cstdint>

namespace timersim {

struct TcpRetransmitConfig {
    std::uint32_t connections = 10000;
    std::uint64_t seed = 1;
    double send_interval_ms = 5000;    // mean idle gap before the next flight
    std::uint32_t segments_per_send = 4;
    double rtt_ms = 50;                // median per-connection RTT
    double rtt_spread = 4;             // per-connection RTT log-uniform in [rtt/spread, rtt*spread]
    double loss = 0.01;                // probability that a segment or retransmission is lost
    double initial_rto_ms = tcp::kTimeoutInitMs;
    double rto_min_ms = tcp::kRtoMinMs;
    double rto_max_ms = tcp::kRtoMaxMs;
    std::uint32_t max_retransmits = tcp::kRetries2;
};

// Stops scheduling after `ticks` ticks.
WorkloadFactory tcp_retransmit_workload(const TcpRetransmitConfig& config, std::uint64_t ticks);

} // namespace timersim
