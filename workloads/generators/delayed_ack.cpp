#include "workloads/generators/delayed_ack.hpp"

#include "wheel/core/timer_pool.hpp"
#include "workloads/generators/generator_support.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

enum Step : std::uint8_t { kSegment = 0, kReply = 1 };

struct Connection {
    SeededRandom rng;
    std::uint64_t next_ns = 0;
    Jiffies timeout = 0;         // icsk_ack.timeout
    Jiffies lrcvtime = 0;        // icsk_ack.lrcvtime
    std::uint32_t ato = 0;       // icsk_ack.ato, jiffies (0: no segment yet)
    std::uint32_t srtt = 0;      // jiffies
    std::uint32_t rto = 0;       // jiffies
    std::uint8_t unacked = 0;    // segments received and not ACKed
    bool timer_pending = false;  // ICSK_ACK_TIMER
    bool pingpong = false;
    bool interactive = false;
};

class DelayedAck final : public Workload {
public:
    DelayedAck(const DelayedAckConfig& config, Sim& sim, std::uint64_t ticks, DelayedAckStats* stats)
        : config_(config), stats_(stats ? stats : &own_stats_), end_(ticks, sim.hz()),
          ato_min_(static_cast<std::uint32_t>(gen::ms_to_jiffies(config.delack_min_ms, sim.hz()))),
          delack_max_(static_cast<std::uint32_t>(gen::ms_to_jiffies(config.delack_max_ms, sim.hz()))),
          max_ato_(static_cast<std::uint32_t>(gen::ms_to_jiffies(tcp::kMaxAtoMs, sim.hz()))) {
        const std::uint32_t n = config.connections;
        *stats_ = DelayedAckStats{};
        const std::uint32_t rto_min = static_cast<std::uint32_t>(gen::ms_to_jiffies(config.rto_min_ms, sim.hz()));
        sim.reserve_timers(n);
        conns_.resize(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            const TimerId id = sim.create_timer();
            sim.label_timer(id, "tcp_delack_timer"); // 6.1 icsk_delack_timer's callback
            if (c == 0) first_timer_ = id;
            if (id != first_timer_ + c) throw std::logic_error("delayed-ack: timer ids must be consecutive");
            Connection& conn = conns_[c];
            conn.rng = SeededRandom::for_stream(config.seed, c);
            const double rtt_ms = conn.rng.log_uniform(config.rtt_ms / config.rtt_spread, config.rtt_ms * config.rtt_spread);
            conn.srtt = static_cast<std::uint32_t>(gen::ms_to_jiffies(rtt_ms, sim.hz()));
            conn.rto = conn.srtt + rto_min;
            conn.interactive = conn.rng.chance(config.interactive_fraction);
            schedule(sim, conn, c, gap(conn, config.segment_interval_ms), kSegment);
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t c = gen::tag_connection(tag);
        Connection& conn = conns_[c];
        const std::uint64_t now = conn.next_ns;
        const Jiffies j = sim.jiffies();
        if (gen::tag_kind(tag) == kSegment) {
            data_received(conn, j);
            if (++conn.unacked >= 2) {
                send_ack(conn); // __tcp_ack_snd_check(): more than one full segment unacked
                ++stats_->acks_at_once;
            } else
                send_delayed_ack(sim, conn, c, j);
            if (conn.interactive)
                schedule(sim, conn, c, now + gap(conn, config_.reply_delay_ms), kReply);
            else
                schedule(sim, conn, c, now + gap(conn, config_.segment_interval_ms), kSegment);
            return;
        }
        // The reply: 6.1 tcp_event_data_sent() counts a reply within ato of
        // the request towards pingpong mode; the segment carries the ACK.
        if (j - conn.lrcvtime < conn.ato) conn.pingpong = true;
        if (conn.unacked) {
            send_ack(conn);
            ++stats_->acks_on_reply;
        }
        schedule(sim, conn, c, now + gap(conn, config_.segment_interval_ms), kSegment);
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        Connection& conn = conns_[fired.id - first_timer_];
        // 6.1 tcp_delack_timer_handler()
        if (!conn.timer_pending) { // cleared by an ACK: expires doing nothing
            ++stats_->dead_expiries;
            return;
        }
        if (time_after(conn.timeout, sim.jiffies())) {
            sim.arm(fired.id, conn.timeout);
            ++stats_->rearms;
            return;
        }
        conn.timer_pending = false;
        if (!conn.unacked) return;
        ++stats_->acks_by_timer;
        if (!conn.pingpong) {
            conn.ato = std::min(conn.ato << 1, conn.rto); // delayed ACK missed: inflate ato
        } else {
            conn.pingpong = false; // leave pingpong mode, deflate ato
            conn.ato = ato_min_;
        }
        send_ack(conn);
    }

private:
    std::uint64_t gap(Connection& conn, double mean_ms) {
        return static_cast<std::uint64_t>(conn.rng.exponential(mean_ms * 1e6));
    }

    void schedule(Sim& sim, Connection& conn, std::uint32_t c, std::uint64_t at_ns, Step step) {
        if (end_.schedule(sim, at_ns, c, step)) conn.next_ns = at_ns;
    }

    // tcp_event_data_recv(): ato follows the gaps between segments.
    void data_received(Connection& conn, Jiffies now) {
        if (conn.ato == 0) {
            conn.ato = ato_min_;
        } else {
            const Jiffies m = now - conn.lrcvtime;
            if (m <= ato_min_ / 2)
                conn.ato = conn.ato / 2 + ato_min_ / 2;
            else if (m < conn.ato)
                conn.ato = std::min(conn.ato / 2 + static_cast<std::uint32_t>(m), conn.rto);
        }
        conn.lrcvtime = now;
    }

    // tcp_send_ack() -> tcp_event_ack_sent() -> inet_csk_clear_xmit_timer(DACK):
    // the timer is not deleted.
    static void send_ack(Connection& conn) {
        conn.unacked = 0;
        conn.timer_pending = false;
    }

    void send_delayed_ack(Sim& sim, Connection& conn, std::uint32_t c, Jiffies now) {
        std::uint32_t ato = conn.ato;
        if (ato > ato_min_) {
            std::uint32_t max_ato = conn.pingpong ? delack_max_ : max_ato_;
            const std::uint32_t rtt = std::max(conn.srtt, ato_min_);
            if (rtt < max_ato) max_ato = rtt;
            ato = std::min(ato, max_ato);
        }
        ato = std::min(ato, delack_max_); // icsk_delack_max
        Jiffies timeout = now + ato;
        if (conn.timer_pending) {
            if (time_before_eq(conn.timeout, now + (ato >> 2))) { // about to expire: ACK now
                send_ack(conn);
                ++stats_->acks_at_once;
                return;
            }
            if (!time_before(timeout, conn.timeout)) timeout = conn.timeout;
        }
        conn.timer_pending = true;
        conn.timeout = timeout;
        sim.arm(first_timer_ + c, timeout);
    }

    DelayedAckConfig config_;
    DelayedAckStats own_stats_;
    DelayedAckStats* stats_;
    gen::RunEnd end_;
    std::uint32_t ato_min_;
    std::uint32_t delack_max_;
    std::uint32_t max_ato_;
    TimerId first_timer_ = 0;
    HugePageVector<Connection> conns_;
};

} // namespace

WorkloadFactory delayed_ack_workload(const DelayedAckConfig& config, std::uint64_t ticks, DelayedAckStats* stats) {
    return [=](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<DelayedAck>(config, sim, ticks, stats);
    };
}

} // namespace timersim
