#include "workloads/generators/burst.hpp"

#include "workloads/generators/generator_support.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

class Burst final : public Workload {
public:
    Burst(const BurstConfig& config, Sim& sim, std::uint64_t ticks)
        : end_(ticks, sim.hz()), timeout_(gen::ms_to_jiffies(config.timeout_ms, sim.hz())),
          interval_ns_(gen::ms_to_ns(config.interval_ms)), size_(config.size) {
        sim.reserve_timers(size_);
        for (std::uint32_t i = 0; i < size_; ++i) {
            const TimerId id = sim.create_timer();
            sim.label_timer(id, "burst");
            if (i == 0) first_timer_ = id;
            if (id != first_timer_ + i) throw std::logic_error("burst: timer ids must be consecutive");
        }
        // One action per CPU (the "connection" in the tag is the CPU).
        next_ns_.assign(std::min(sim.cpus(), size_), gen::ms_to_ns(config.start_ms));
        for (std::uint32_t cpu = 0; cpu < next_ns_.size(); ++cpu) end_.schedule(sim, next_ns_[cpu], cpu, 0);
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t cpu = gen::tag_connection(tag);
        const Jiffies deadline = sim.jiffies() + timeout_;
        for (std::uint32_t i = cpu; i < size_; i += sim.cpus()) sim.arm(first_timer_ + i, deadline);
        if (interval_ns_ > 0) {
            next_ns_[cpu] += interval_ns_;
            end_.schedule(sim, next_ns_[cpu], cpu, 0);
        }
    }

private:
    gen::RunEnd end_;
    Jiffies timeout_;
    std::uint64_t interval_ns_;
    std::uint32_t size_;
    TimerId first_timer_ = 0;
    std::vector<std::uint64_t> next_ns_; // by CPU: when its next burst is due
};

} // namespace

WorkloadFactory burst_workload(const BurstConfig& config, std::uint64_t ticks) {
    return gen::factory_of<Burst>(config, ticks);
}

} // namespace timersim
