#include "sim/machine/machine_stepper.hpp"

#include "sim/machine/engine.hpp"

#include <stdexcept>
#include <string>

namespace timersim {

// The tick-0 arms (one call action per timer, on its CPU's task) and, while
// a shown tick runs, every fire, on the CPU whose softirq ran it.
class MachineStepper::Arms final : public Workload {
public:
    Arms(const StepWorkload& w, unsigned cpus) : places_(w.places), fired_(cpus), start_arms_(cpus) {
        for (std::size_t t = 0; t < w.timeouts.size(); ++t) {
            if (places_.size() <= t) places_.emplace_back();
            if (places_[t].cpu >= cpus)
                throw std::invalid_argument("timer " + std::to_string(t) + " on CPU " +
                                            std::to_string(places_[t].cpu) + " of a machine with " +
                                            std::to_string(cpus) + " CPUs");
        }
        timeouts_ = w.timeouts;
    }

    void start(Engine<Modern69Wheel>& engine) {
        engine_ = &engine;
        for (std::size_t t = 0; t < timeouts_.size(); ++t) {
            ids_.push_back(engine.create_timer());
            engine.schedule_action(0, Action{.kind = Action::Kind::call, .cpu = places_[t].cpu, .tag = t});
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        const auto t = static_cast<std::uint32_t>(tag);
        const Jiffies expires = sim.start_jiffies() + timeouts_[t];
        const ArmOutcome outcome = sim.arm(ids_[t], expires, places_[t].call());
        start_arms_[sim.current_cpu()].push_back({t, expires, outcome, engine_->placement(ids_[t])});
    }

    // Timer ids are the engine's, handed out in order from 0: the timer's
    // number. The timer stays on its base while its callback runs (6.9
    // base->running_timer), so a base on another CPU than the one running
    // the callback is a remote expiry (6.9 timer_expire_remote()).
    void on_fire(Sim&, const FireRecord& f) override {
        if (!recording) return;
        Fired fired{static_cast<std::uint32_t>(f.id), f.requested, f.expires};
        const unsigned base = engine_->timer_cpu(f.id);
        if (base != f.cpu) fired.remote_for = base;
        fired_[f.cpu].push_back(fired);
    }

    bool recording = false;
    std::vector<std::vector<Fired>>& fired() { return fired_; }
    const std::vector<std::vector<Armed>>& start_arms() const { return start_arms_; }

private:
    std::vector<TimeoutPlace> places_;
    std::vector<Jiffies> timeouts_;
    std::vector<TimerId> ids_;
    Engine<Modern69Wheel>* engine_ = nullptr;
    std::vector<std::vector<Fired>> fired_;      // by CPU, the tick being shown
    std::vector<std::vector<Armed>> start_arms_; // by CPU
};

struct MachineStepper::Machine {
    Machine(const MachineStepConfig& c, const StepWorkload& w)
        : queues(make_queues(c)), arms(w, c.cpus),
          engine(std::span<Modern69Wheel>(queues),
                 EngineConfig{.hz = c.hz, .nohz_idle = c.nohz_idle, .numa_nodes = c.numa_nodes}, &arms) {}

    static std::vector<Modern69Wheel> make_queues(const MachineStepConfig& c) {
        if (c.cpus < 2 || c.cpus > kMaxStepCpus)
            throw std::invalid_argument("step shows 2.." + std::to_string(kMaxStepCpus) + " CPUs");
        std::vector<Modern69Wheel> q;
        q.reserve(c.cpus);
        for (unsigned i = 0; i < c.cpus; ++i)
            q.emplace_back(Modern69Wheel::Config{.hz = c.hz, .start_jiffies = c.start_jiffies});
        return q;
    }

    std::vector<Modern69Wheel> queues; // the engine's CPUs' bases: they outlive it
    Arms arms;
    Engine<Modern69Wheel> engine;
};

MachineStepper::MachineStepper(const MachineStepConfig& config, const StepWorkload& w)
    : config_(config), machine_(std::make_unique<Machine>(config, w)) {
    machine_->arms.start(machine_->engine);
    machine_->engine.run_until(0); // the arms, and each arming CPU's idle decision after them
}

MachineStepper::~MachineStepper() = default;

const Modern69Wheel& MachineStepper::queue(unsigned cpu) const { return machine_->queues.at(cpu); }

CpuTick MachineStepper::state_of(unsigned cpu) const {
    const Engine<Modern69Wheel>& e = machine_->engine;
    CpuTick r;
    r.report.tick = tick_;
    r.report.jiffies = config_.start_jiffies + tick_;
    r.idle = e.tick_stopped(cpu);
    if (r.idle && e.next_tick_index(cpu) != UINT64_MAX) r.wakeup = config_.start_jiffies + e.next_tick_index(cpu);
    for (unsigned b = 0; b < Modern69Wheel::kBases; ++b)
        r.pending[b] = e.queue(cpu).wheel(static_cast<Modern69Wheel::BaseIndex>(b)).pending();
    return r;
}

std::vector<CpuTick> MachineStepper::start_frame() const {
    std::vector<CpuTick> frame;
    for (unsigned c = 0; c < config_.cpus; ++c) {
        CpuTick r = state_of(c);
        r.report.start = true;
        if (tick_ == 0) r.report.armed = machine_->arms.start_arms()[c];
        frame.push_back(std::move(r));
    }
    return frame;
}

std::vector<CpuTick> MachineStepper::step() {
    Engine<Modern69Wheel>& e = machine_->engine;
    std::vector<std::uint64_t> ticks, raised;
    std::vector<bool> stopped;
    for (unsigned c = 0; c < config_.cpus; ++c) {
        ticks.push_back(e.ticks(c));
        raised.push_back(e.metrics(c).ticks_raised);
        stopped.push_back(e.tick_stopped(c));
    }
    machine_->arms.recording = true;
    e.run_ticks(++tick_);
    machine_->arms.recording = false;
    std::vector<CpuTick> frame;
    for (unsigned c = 0; c < config_.cpus; ++c) {
        CpuTick r = state_of(c);
        r.ticked = e.ticks(c) != ticks[c];
        r.woke = r.ticked && stopped[c];
        r.report.softirq = e.metrics(c).ticks_raised != raised[c];
        r.report.fired = std::move(machine_->arms.fired()[c]);
        machine_->arms.fired()[c].clear();
        frame.push_back(std::move(r));
    }
    return frame;
}

void MachineStepper::skip(std::uint64_t ticks) {
    tick_ += ticks;
    machine_->engine.run_ticks(tick_);
}

} // namespace timersim
