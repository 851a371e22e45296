// delayed-ack: N receiving connections and their delayed-ACK timer
// (icsk_delack_timer) as Linux 6.1 runs it (reference section 6.2):
//
//   segment      tcp_event_data_recv() adapts ato to the gap since the last
//                segment (<= ATO_MIN/2: ato/2 + ATO_MIN/2; < ato: ato/2 + gap;
//                capped at the RTO). Then __tcp_ack_snd_check(): a second
//                unacked segment is ACKed at once; otherwise
//                tcp_send_delayed_ack(): ato bounded (above TCP_DELACK_MIN) by
//                HZ/2, by TCP_DELACK_MAX in pingpong mode, by max(srtt,
//                TCP_DELACK_MIN), and by icsk_delack_max = TCP_DELACK_MAX;
//                if the timer is pending and due within ato/4 the ACK goes
//                now, else the earlier of the two timeouts is kept; then
//                sk_reset_timer() (mod_timer).
//   any ACK      sent (at once, or piggybacked on a reply) only clears
//                ICSK_ACK_TIMER (inet_csk_clear_xmit_timer(DACK)): the timer
//                is NOT deleted, and later expires doing nothing.
//   expiry       6.1 tcp_delack_timer_handler(): nothing if cleared; re-arm
//                to the timeout if it is still ahead; else send the ACK and,
//                in pingpong mode leave it and reset ato to ATO_MIN, or
//                otherwise double ato (capped by the RTO).
//
// Two kinds of connection:
//   bulk         segments arrive as a Poisson process (mean
//                `segment_interval_ms`): every other one is ACKed at once,
//                the odd one waits for the timer or the next segment.
//   interactive  (`interactive_fraction`) request/response: a request
//                segment arrives, the application replies after an
//                exponential delay (mean `reply_delay_ms`), the reply carries
//                the ACK; a reply within ato of the request enters pingpong
//                mode (6.1 tcp_event_data_sent()). The next request comes an
//                exponential gap (mean `segment_interval_ms`) after the reply.
// Not modelled: quickack mode at connection start, PUSHED segments.
//
// Per connection: one timer, ~48 bytes of state, one pending action.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/tcp_constants.hpp"

#include <cstdint>

namespace timersim {

struct DelayedAckConfig {
    std::uint32_t connections = 10000;
    std::uint64_t seed = 1;
    double segment_interval_ms = 2000; // mean gap between segments (bulk) or requests (interactive)
    double interactive_fraction = 0.5;
    double reply_delay_ms = 20;       // mean time the application takes to reply
    double rtt_ms = 50;               // median per-connection RTT (bounds ato by srtt)
    double rtt_spread = 4;
    double delack_min_ms = tcp::kDelackMinMs; // also TCP_ATO_MIN
    double delack_max_ms = tcp::kDelackMaxMs;
    double rto_min_ms = tcp::kRtoMinMs;       // the RTO (srtt + rto_min) caps ato
};

// How the ACKs went, for tests and reports.
struct DelayedAckStats {
    std::uint64_t acks_at_once = 0;   // a second unacked segment, or the timer about to expire
    std::uint64_t acks_on_reply = 0;  // piggybacked on an interactive reply
    std::uint64_t acks_by_timer = 0;  // the delayed-ACK timer sent it
    std::uint64_t dead_expiries = 0;  // the timer expired after an ACK had cleared it
    std::uint64_t rearms = 0;         // expired early (timeout moved on): re-armed
};

// Stops scheduling after `ticks` ticks. `stats`, if given, receives the last
// run's counts.
WorkloadFactory delayed_ack_workload(const DelayedAckConfig& config, std::uint64_t ticks,
                                     DelayedAckStats* stats = nullptr);

} // namespace timersim
