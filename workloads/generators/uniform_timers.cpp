#include "workloads/generators/uniform_timers.hpp"

#include "wheel/core/timer_pool.hpp"
#include "workloads/generators/generator_support.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

struct Timer {
    SeededRandom rng;
    std::uint64_t next_ns = 0;
};

class Uniform final : public Workload {
public:
    Uniform(const UniformConfig& config, Sim& sim, std::uint64_t ticks)
        : config_(config), end_(ticks, sim.hz()), min_(gen::ms_to_jiffies(config.timeout_min_ms, sim.hz())),
          max_(gen::ms_to_jiffies(config.timeout_max_ms, sim.hz())) {
        sim.reserve_timers(config.timers);
        timers_.resize(config.timers);
        for (std::uint32_t i = 0; i < config.timers; ++i) {
            const TimerId id = sim.create_timer();
            sim.label_timer(id, "uniform");
            if (i == 0) first_timer_ = id;
            if (id != first_timer_ + i) throw std::logic_error("uniform: timer ids must be consecutive");
            timers_[i].rng = SeededRandom::for_stream(config.seed, i);
            schedule_next(sim, i, 0);
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t i = gen::tag_connection(tag);
        Timer& t = timers_[i];
        if (t.rng.chance(config_.cancel_fraction))
            sim.cancel(first_timer_ + i);
        else
            sim.arm(first_timer_ + i, sim.jiffies() + min_ + t.rng.below(max_ - min_ + 1));
        schedule_next(sim, i, t.next_ns);
    }

    void prefetch_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t i = gen::tag_connection(tag);
        if (i >= timers_.size()) return;
        __builtin_prefetch(&timers_[i], 1);
        sim.prefetch_timer(first_timer_ + i);
    }

private:
    void schedule_next(Sim& sim, std::uint32_t i, std::uint64_t after_ns) {
        Timer& t = timers_[i];
        const std::uint64_t at = after_ns + static_cast<std::uint64_t>(t.rng.exponential(config_.op_interval_ms * 1e6));
        if (end_.schedule(sim, at, i, 0)) t.next_ns = at;
    }

    UniformConfig config_;
    gen::RunEnd end_;
    Jiffies min_;
    Jiffies max_;
    TimerId first_timer_ = 0;
    HugePageVector<Timer> timers_;
};

} // namespace

WorkloadFactory uniform_workload(const UniformConfig& config, std::uint64_t ticks) {
    return gen::factory_of<Uniform>(config, ticks);
}

} // namespace timersim
