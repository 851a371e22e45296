#include "workloads/generators/tcp_retransmit.hpp"

#include "wheel/core/timer_pool.hpp"
#include "workloads/generators/generator_support.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

enum Step : std::uint8_t { kSend = 0, kAck = 1 };

struct Connection {
    SeededRandom rng;
    std::uint64_t next_ns = 0; // when the pending action is due
    std::uint64_t send_ns = 0; // when the current flight was sent
    Jiffies timeout = 0;       // icsk_timeout
    std::uint32_t rtt_us = 0;        // the connection's RTT
    std::uint32_t flight_rtt_us = 0; // this flight's RTT (with jitter)
    std::uint32_t srtt_us = 0;       // 0: no sample yet
    std::uint32_t rttvar_us = 0;
    std::uint32_t rto = 0;           // icsk_rto, jiffies
    std::uint16_t flight = 0;        // segments in the current flight
    std::uint16_t acked = 0;         // of them acked
    std::uint16_t reach = 0;         // delivered before the first loss
    std::uint8_t retransmits = 0;    // icsk_retransmits (the backoff exponent)
    bool pending = false;            // icsk_pending == ICSK_TIME_RETRANS
    bool action_pending = false;     // a send or ACK is scheduled
    bool retransmitted = false;      // Karn: no RTT samples from this flight
    bool recover_all = false;        // the next ACK acks the whole flight
};

class TcpRetransmit final : public Workload {
public:
    TcpRetransmit(const TcpRetransmitConfig& config, Sim& sim, std::uint64_t ticks)
        : config_(config), end_(ticks, sim.hz()), hz_(sim.hz()),
          rto_max_(static_cast<std::uint32_t>(gen::ms_to_jiffies(config.rto_max_ms, sim.hz()))),
          initial_rto_(std::min<std::uint32_t>(
              static_cast<std::uint32_t>(gen::ms_to_jiffies(config.initial_rto_ms, sim.hz())), rto_max_)),
          rto_min_us_(config.rto_min_ms * 1000.0), send_gap_ns_(config.send_interval_ms * 1e6) {
        const std::uint32_t n = config.connections;
        sim.reserve_timers(n);
        conns_.resize(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            const TimerId id = sim.create_timer();
            sim.label_timer(id, "tcp_write_timer"); // 6.1 icsk_retransmit_timer's callback
            if (c == 0) first_timer_ = id;
            if (id != first_timer_ + c) throw std::logic_error("tcp-retransmit: timer ids must be consecutive");
            Connection& conn = conns_[c];
            conn.rng = SeededRandom::for_stream(config.seed, c);
            const double rtt_ms = conn.rng.log_uniform(config.rtt_ms / config.rtt_spread, config.rtt_ms * config.rtt_spread);
            conn.rtt_us = static_cast<std::uint32_t>(std::max(1.0, rtt_ms * 1000.0));
            conn.rto = initial_rto_;
            schedule(sim, conn, c, static_cast<std::uint64_t>(conn.rng.exponential(send_gap_ns_)), kSend);
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t c = gen::tag_connection(tag);
        Connection& conn = conns_[c];
        conn.action_pending = false;
        if (gen::tag_kind(tag) == kSend)
            send(sim, conn, c);
        else
            ack(sim, conn, c);
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        const std::uint32_t c = fired.id - first_timer_;
        Connection& conn = conns_[c];
        // 6.1 tcp_write_timer_handler(): a cleared timer expires doing nothing.
        if (!conn.pending) return;
        if (time_after(conn.timeout, sim.jiffies())) {
            sim.arm(first_timer_ + c, conn.timeout);
            return;
        }
        conn.pending = false;
        if (conn.acked >= conn.flight) return;
        // tcp_retransmit_timer(): retransmit the head, back off, re-arm.
        if (++conn.retransmits > config_.max_retransmits) {
            // tcp_write_err(): the connection is reset; a new one starts later.
            reset(conn);
            if (!conn.action_pending)
                schedule(sim, conn, c, sim.now_ns() + static_cast<std::uint64_t>(conn.rng.exponential(send_gap_ns_)),
                         kSend);
            return;
        }
        conn.rto = std::min(conn.rto * 2, rto_max_);
        rearm(sim, conn, c);
        conn.retransmitted = true;
        // With an ACK already on its way the timeout was spurious; otherwise
        // the retransmission, if it gets through, brings one ACK for all.
        if (!conn.action_pending && !conn.rng.chance(config_.loss)) {
            conn.recover_all = true;
            schedule(sim, conn, c, sim.now_ns() + std::uint64_t{conn.flight_rtt_us} * 1000, kAck);
        }
    }

private:
    void schedule(Sim& sim, Connection& conn, std::uint32_t c, std::uint64_t at_ns, Step step) {
        if (end_.schedule(sim, at_ns, c, step)) {
            conn.next_ns = at_ns;
            conn.action_pending = true;
        }
    }

    void rearm(Sim& sim, Connection& conn, std::uint32_t c) {
        // inet_csk_reset_xmit_timer(): icsk_timeout = jiffies + when, sk_reset_timer().
        conn.timeout = sim.jiffies() + conn.rto;
        conn.pending = true;
        sim.arm(first_timer_ + c, conn.timeout);
    }

    void reset(Connection& conn) {
        conn.flight = conn.acked = conn.reach = 0;
        conn.srtt_us = conn.rttvar_us = 0;
        conn.rto = initial_rto_;
        conn.retransmits = 0;
        conn.pending = conn.retransmitted = conn.recover_all = false;
    }

    std::uint64_t ack_spacing_ns(const Connection& conn) const {
        // A flight's ACKs spread over a tenth of its RTT.
        const std::uint64_t acks = (conn.flight + 1u) / 2;
        return std::uint64_t{conn.flight_rtt_us} * 100 / acks;
    }

    void send(Sim& sim, Connection& conn, std::uint32_t c) {
        const std::uint64_t now = conn.next_ns;
        conn.flight = static_cast<std::uint16_t>(config_.segments_per_send);
        conn.acked = 0;
        conn.reach = 0;
        while (conn.reach < conn.flight && !conn.rng.chance(config_.loss)) ++conn.reach;
        conn.retransmitted = conn.recover_all = false;
        conn.send_ns = now;
        conn.flight_rtt_us = static_cast<std::uint32_t>(conn.rtt_us * (1.0 + 0.25 * conn.rng.uniform01()));
        // Nothing was in flight: tcp_event_new_data_sent() -> tcp_rearm_rto().
        rearm(sim, conn, c);
        if (conn.reach > 0) schedule(sim, conn, c, now + std::uint64_t{conn.flight_rtt_us} * 1000, kAck);
    }

    void ack(Sim& sim, Connection& conn, std::uint32_t c) {
        const std::uint64_t now = conn.next_ns;
        if (conn.acked >= conn.flight) { // the connection was reset while this ACK was on its way
            schedule(sim, conn, c, now + static_cast<std::uint64_t>(conn.rng.exponential(send_gap_ns_)), kSend);
            return;
        }
        conn.acked = conn.recover_all ? conn.flight : std::min<std::uint16_t>(conn.acked + 2, conn.reach);
        if (!conn.retransmitted) sample_rtt(conn, now - conn.send_ns);
        if (conn.acked < conn.flight) {
            rearm(sim, conn, c); // tcp_rearm_rto(): forward progress, data still in flight
            if (conn.acked < conn.reach) schedule(sim, conn, c, now + ack_spacing_ns(conn), kAck);
            return;
        }
        // All acked: inet_csk_clear_xmit_timer(sk, ICSK_TIME_RETRANS) only
        // clears icsk_pending; the timer stays queued.
        conn.pending = false;
        conn.retransmits = 0;
        schedule(sim, conn, c, now + static_cast<std::uint64_t>(conn.rng.exponential(send_gap_ns_)), kSend);
    }

    void sample_rtt(Connection& conn, std::uint64_t sample_ns) {
        const double m = std::max(1.0, static_cast<double>(sample_ns) / 1000.0);
        double srtt = conn.srtt_us, rttvar = conn.rttvar_us;
        if (conn.srtt_us == 0) {
            srtt = m;
            rttvar = m / 2;
        } else {
            rttvar = (3 * rttvar + std::fabs(srtt - m)) / 4;
            srtt = (7 * srtt + m) / 8;
        }
        conn.srtt_us = static_cast<std::uint32_t>(std::max(1.0, srtt));
        conn.rttvar_us = static_cast<std::uint32_t>(rttvar);
        const double rto_us = conn.srtt_us + std::max(4.0 * conn.rttvar_us, rto_min_us_);
        const double rto = std::ceil(rto_us * hz_ / 1e6); // usecs_to_jiffies() rounds up
        conn.rto = rto >= rto_max_ ? rto_max_ : static_cast<std::uint32_t>(rto);
        conn.retransmits = 0; // tcp_ack_update_rtt(): a valid sample resets the backoff
    }

    TcpRetransmitConfig config_;
    gen::RunEnd end_;
    unsigned hz_;
    std::uint32_t rto_max_;
    std::uint32_t initial_rto_;
    double rto_min_us_;
    double send_gap_ns_;
    TimerId first_timer_ = 0;
    HugePageVector<Connection> conns_;
};

} // namespace

WorkloadFactory tcp_retransmit_workload(const TcpRetransmitConfig& config, std::uint64_t ticks) {
    return gen::factory_of<TcpRetransmit>(config, ticks);
}

} // namespace timersim
