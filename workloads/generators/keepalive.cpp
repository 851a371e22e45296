#include "workloads/generators/keepalive.hpp"

#include "wheel/core/timer_pool.hpp"
#include "workloads/generators/generator_support.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

enum Step : std::uint8_t { kClose = 0, kOpen = 1 };

constexpr std::uint64_t kProbeAnswerNs = 50 * gen::kNsPerMs;

struct Connection {
    SeededRandom rng;
    Jiffies last_rcv = 0;            // rcv_tstamp / lrcvtime
    std::uint64_t next_rcv_ns = 0;  // the next segment (drawn lazily); UINT64_MAX: none
    std::uint32_t probes_out = 0;   // icsk_probes_out
    bool dead_peer = false;
    bool close_pending = false;     // the slot's next close is scheduled
};

class Keepalive final : public Workload {
public:
    Keepalive(const KeepaliveConfig& config, Sim& sim, std::uint64_t ticks)
        : config_(config), end_(ticks, sim.hz()), hz_(sim.hz()),
          time_(gen::ms_to_jiffies(config.keepalive_time_s * 1000, sim.hz())),
          interval_(gen::ms_to_jiffies(config.keepalive_interval_s * 1000, sim.hz())) {
        const std::uint32_t n = config.connections;
        sim.reserve_timers(n);
        conns_.resize(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            const TimerId id = sim.create_timer();
            sim.label_timer(id, "tcp_keepalive_timer"); // 6.1 sk_timer's callback for TCP
            if (c == 0) first_timer_ = id;
            if (id != first_timer_ + c) throw std::logic_error("keepalive: timer ids must be consecutive");
            conns_[c].rng = SeededRandom::for_stream(config.seed, c);
        }
        // The run starts in steady state: each connection has been idle for
        // a uniform part of keepalive_time already (its timer was armed that
        // long ago), and is set up by an action in the first second, on its CPU.
        for (std::uint32_t c = 0; c < n; ++c) end_.schedule(sim, conns_[c].rng.below(gen::kNsPerS), c, kOpen);
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t c = gen::tag_connection(tag);
        // A normal close (or the first open): inet_csk_delete_keepalive_timer(), then a new connection.
        Connection& conn = conns_[c];
        conn.close_pending = false;
        if (gen::tag_kind(tag) == kClose) {
            sim.cancel(first_timer_ + c);
            open(sim, c, sim.now_ns(), 0);
        } else {
            open(sim, c, sim.now_ns(), conn.rng.below(time_));
        }
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        const std::uint32_t c = fired.id - first_timer_;
        Connection& conn = conns_[c];
        const std::uint64_t now = sim.now_ns();
        // Segments that arrived since the last look.
        while (conn.next_rcv_ns <= now) {
            conn.last_rcv = jiffies_at(sim, conn.next_rcv_ns);
            conn.probes_out = 0; // tcp_ack() on anything received
            draw_next_segment(conn);
        }
        // keepalive_time_elapsed(): jiffies since the last segment (0 while a
        // probe's answer is still on its way).
        const Jiffies idle = time_after(sim.jiffies(), conn.last_rcv) ? sim.jiffies() - conn.last_rcv : 0;
        if (idle < time_) {
            sim.arm(fired.id, sim.jiffies() + (time_ - idle));
            return;
        }
        if (conn.probes_out >= config_.probes) {
            // tcp_send_active_reset(), tcp_write_err(): closed; a new connection takes the slot.
            open(sim, c, now, 0);
            return;
        }
        ++conn.probes_out;
        if (!conn.dead_peer) {
            // The peer's ACK of the probe comes back one RTT later.
            conn.last_rcv = jiffies_at(sim, now + kProbeAnswerNs);
        }
        sim.arm(fired.id, sim.jiffies() + interval_);
    }

private:
    Jiffies jiffies_at(const Sim& sim, std::uint64_t t) const {
        return sim.start_jiffies() + t / gen::kNsPerS * hz_ + t % gen::kNsPerS * hz_ / gen::kNsPerS;
    }

    void draw_next_segment(Connection& conn) {
        if (config_.traffic_interval_s <= 0 || conn.dead_peer) {
            conn.next_rcv_ns = UINT64_MAX;
            return;
        }
        conn.next_rcv_ns += static_cast<std::uint64_t>(conn.rng.exponential(config_.traffic_interval_s * 1e9)) + 1;
    }

    // tcp_finish_connect() -> inet_csk_reset_keepalive_timer(keepalive_time),
    // for a connection idle for `age` jiffies already.
    void open(Sim& sim, std::uint32_t c, std::uint64_t now, Jiffies age) {
        Connection& conn = conns_[c];
        conn.last_rcv = sim.jiffies() - age;
        conn.probes_out = 0;
        conn.dead_peer = conn.rng.chance(config_.dead_peer_fraction);
        conn.next_rcv_ns = now;
        draw_next_segment(conn);
        sim.arm(first_timer_ + c, sim.jiffies() + (time_ - age));
        // One close per slot at a time: a connection reset by keepalive
        // leaves the slot's pending close to its successor.
        if (config_.lifetime_s > 0 && !conn.close_pending)
            conn.close_pending = end_.schedule(
                sim, now + static_cast<std::uint64_t>(conn.rng.exponential(config_.lifetime_s * 1e9)), c, kClose);
    }

    KeepaliveConfig config_;
    gen::RunEnd end_;
    unsigned hz_;
    Jiffies time_;
    Jiffies interval_;
    TimerId first_timer_ = 0;
    HugePageVector<Connection> conns_;
};

} // namespace

WorkloadFactory keepalive_workload(const KeepaliveConfig& config, std::uint64_t ticks) {
    return gen::factory_of<Keepalive>(config, ticks);
}

} // namespace timersim
