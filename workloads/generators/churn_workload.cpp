#include "workloads/generators/churn_workload.hpp"

#include <vector>

namespace timersim {

namespace {

// Nominal time of tick n, as sim/machine/engine.hpp tick_time_ns().
std::uint64_t tick_ns(std::uint64_t n, unsigned hz) {
    return n / hz * 1'000'000'000ull + n % hz * 1'000'000'000ull / hz;
}

// Messages are looked up one ahead, so an idle CPU (NOHZ) is only woken when
// one arrives. The calls into ConnectionChurn (pop, then draw the timeout)
// come in the same order as in the queue-level comparison, so a seed means
// the same messages.
class ChurnWorkload final : public Workload {
public:
    ChurnWorkload(const ConnectionChurnConfig& config, Sim& sim, std::uint64_t ticks, std::uint64_t after_tick_ns)
        : churn_(config, sim.start_jiffies()), start_(sim.start_jiffies()), last_(sim.start_jiffies() + ticks),
          probe_(sim.start_jiffies()), after_tick_ns_(after_tick_ns) {
        const std::uint32_t n = churn_.connections();
        sim.reserve_timers(n);
        ids_.resize(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            ids_[c] = sim.create_timer(TimerFlags{});
            sim.label_timer(ids_[c], to_string(churn_.kind(c)));
        }
        schedule_next(sim);
    }

    void on_action(Sim& sim, std::uint64_t) override {
        sim.arm(ids_[conn_], sim.jiffies() + timeout_);
        schedule_next(sim);
    }

private:
    void schedule_next(Sim& sim) {
        for (; !time_after(probe_, last_); ++probe_) {
            if (const auto conn = churn_.pop_message(probe_)) {
                conn_ = *conn;
                timeout_ = churn_.draw_timeout(conn_);
                sim.schedule_action(tick_ns(probe_ - start_, sim.hz()) + after_tick_ns_, Action{});
                return;
            }
        }
    }

    ConnectionChurn churn_;
    std::vector<TimerId> ids_;
    Jiffies start_;
    Jiffies last_;  // no messages after the run's last tick
    Jiffies probe_; // the jiffy whose messages are being looked up
    std::uint64_t after_tick_ns_;
    std::uint32_t conn_ = 0; // the next message: its connection and timeout
    Jiffies timeout_ = 0;
};

} // namespace

WorkloadFactory churn_workload(const ConnectionChurnConfig& config, std::uint64_t ticks,
                               std::uint64_t after_tick_ns) {
    return [=](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<ChurnWorkload>(config, sim, ticks, after_tick_ns);
    };
}

} // namespace timersim
