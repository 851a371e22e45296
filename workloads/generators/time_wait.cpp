#include "workloads/generators/time_wait.hpp"

#include "wheel/core/timer_pool.hpp"
#include "workloads/generators/generator_support.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <stdexcept>
#include <vector>

namespace timersim {

namespace {

enum Step : std::uint8_t { kClose = 0, kReuse = 1 };

struct Slot {
    SeededRandom rng;
    std::uint64_t next_ns = 0;
    bool reuse_pending = false; // a SYN reusing the 4-tuple is on its way
};

class TimeWait final : public Workload {
public:
    TimeWait(const TimeWaitConfig& config, Sim& sim, std::uint64_t ticks)
        : config_(config), end_(ticks, sim.hz()),
          time_wait_(gen::ms_to_jiffies(config.time_wait_s * 1000, sim.hz())),
          time_wait_ns_(config.time_wait_s * 1e9) {
        const std::uint32_t n = config.connections;
        sim.reserve_timers(n);
        slots_.resize(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            const TimerId id = sim.create_timer();
            sim.label_timer(id, "tw_timer_handler"); // 6.1 inet_timewait_sock's tw_timer
            if (c == 0) first_timer_ = id;
            if (id != first_timer_ + c) throw std::logic_error("time-wait: timer ids must be consecutive");
            slots_[c].rng = SeededRandom::for_stream(config.seed, c);
            open(sim, c, 0);
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const std::uint32_t c = gen::tag_connection(tag);
        Slot& slot = slots_[c];
        const std::uint64_t now = slot.next_ns;
        if (gen::tag_kind(tag) == kClose) {
            // The active closer enters TIME_WAIT: __inet_twsk_schedule(), pinned, no classic slack.
            sim.arm(first_timer_ + c, sim.jiffies() + time_wait_, ArmCall::mod_timer_pinned);
            if (slot.rng.chance(config_.port_reuse_fraction))
                slot.reuse_pending = schedule(
                    sim, slot, c, now + static_cast<std::uint64_t>(slot.rng.uniform01() * time_wait_ns_), kReuse);
            return;
        }
        // A SYN reuses the 4-tuple: the timewait socket goes early.
        slot.reuse_pending = false;
        sim.cancel(first_timer_ + c);
        open(sim, c, now);
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        // TIME_WAIT over (tw_timer_handler()): the socket is freed, the slot's next connection opens.
        // (If a reusing SYN is on its way, it opens the next one.)
        const std::uint32_t c = fired.id - first_timer_;
        if (!slots_[c].reuse_pending) open(sim, c, sim.now_ns());
    }

private:
    bool schedule(Sim& sim, Slot& slot, std::uint32_t c, std::uint64_t at_ns, Step step) {
        if (!end_.schedule(sim, at_ns, c, step)) return false;
        slot.next_ns = at_ns;
        return true;
    }

    void open(Sim& sim, std::uint32_t c, std::uint64_t now) {
        Slot& slot = slots_[c];
        schedule(sim, slot, c, now + static_cast<std::uint64_t>(slot.rng.exponential(config_.lifetime_ms * 1e6)), kClose);
    }

    TimeWaitConfig config_;
    gen::RunEnd end_;
    Jiffies time_wait_;
    double time_wait_ns_;
    TimerId first_timer_ = 0;
    HugePageVector<Slot> slots_;
};

} // namespace

WorkloadFactory time_wait_workload(const TimeWaitConfig& config, std::uint64_t ticks) {
    return gen::factory_of<TimeWait>(config, ticks);
}

} // namespace timersim
