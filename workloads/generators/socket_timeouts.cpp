#include "workloads/generators/socket_timeouts.hpp"

#include "wheel/core/timer_pool.hpp"
#include "workloads/generators/generator_support.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

enum Step : std::uint8_t { kMessage = 0 };

struct Connection {
    SeededRandom rng;
    std::uint64_t next_ns = 0; // the next message
    float mean_gap_ns = 0;     // this connection's mean gap between messages
    bool reader = false;       // a reader blocks in recv() with SO_RCVTIMEO
    bool open = false;
};

class SocketTimeouts final : public Workload {
public:
    SocketTimeouts(const SocketTimeoutsConfig& config, Sim& sim, std::uint64_t ticks)
        : end_(ticks, sim.hz()), idle_(gen::ms_to_jiffies(config.idle_timeout_s * 1000, sim.hz())),
          receive_(gen::ms_to_jiffies(config.receive_timeout_ms, sim.hz())) {
        const std::uint32_t n = config.connections;
        sim.reserve_timers(std::size_t{n} * 2);
        conns_.resize(n);
        // Timer 2c is connection c's idle timer, 2c + 1 its receive timer.
        for (std::uint32_t c = 0; c < n; ++c) {
            const TimerId idle = sim.create_timer();
            const TimerId receive = sim.create_timer();
            // The idle timeout is the protocol's own sk_timer; a receive
            // timeout is schedule_timeout()'s on-stack timer (6.1 process_timeout).
            sim.label_timer(idle, "sk_idle_timer");
            sim.label_timer(receive, "process_timeout");
            if (c == 0) first_timer_ = idle;
            if (idle != first_timer_ + 2 * c || receive != idle + 1)
                throw std::logic_error("socket-timeouts: timer ids must be consecutive");
            Connection& conn = conns_[c];
            conn.rng = SeededRandom::for_stream(config.seed, c);
            const double activity = conn.rng.log_uniform(1 / config.activity_spread, config.activity_spread);
            conn.mean_gap_ns = static_cast<float>(config.message_interval_ms * 1e6 * activity);
            conn.reader = conn.rng.chance(config.reader_fraction);
            schedule_next(sim, conn, c, 0);
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t c = gen::tag_connection(tag);
        Connection& conn = conns_[c];
        const TimerId idle = first_timer_ + 2 * c;
        conn.open = true;
        sim.arm(idle, sim.jiffies() + idle_);
        if (conn.reader) {
            // The blocked reader wakes: schedule_timeout() deletes its timer,
            // then recv() is called again and sleeps with a new one.
            sim.cancel(idle + 1);
            sim.arm(idle + 1, sim.jiffies() + receive_, ArmCall::mod_timer_pinned);
        }
        schedule_next(sim, conn, c, conn.next_ns);
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        const std::uint32_t offset = fired.id - first_timer_;
        Connection& conn = conns_[offset / 2];
        if (offset % 2 == 0) {
            // Idle timeout: the connection is closed, its reader woken with an error.
            conn.open = false;
            if (conn.reader) sim.cancel(fired.id + 1);
        } else if (conn.open) {
            // EAGAIN; the reader calls recv() again at once (no classic slack).
            sim.arm(fired.id, sim.jiffies() + receive_, ArmCall::mod_timer_pinned);
        }
    }

private:
    void schedule_next(Sim& sim, Connection& conn, std::uint32_t c, std::uint64_t after_ns) {
        const std::uint64_t at = after_ns + static_cast<std::uint64_t>(conn.rng.exponential(conn.mean_gap_ns));
        if (end_.schedule(sim, at, c, kMessage)) conn.next_ns = at;
    }

    gen::RunEnd end_;
    Jiffies idle_;
    Jiffies receive_;
    TimerId first_timer_ = 0;
    HugePageVector<Connection> conns_;
};

} // namespace

WorkloadFactory socket_timeouts_workload(const SocketTimeoutsConfig& config, std::uint64_t ticks) {
    return gen::factory_of<SocketTimeouts>(config, ticks);
}

} // namespace timersim
