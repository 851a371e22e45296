// The model behind `timersim step --cpus N` (N > 1): the simulated machine
// of `timersim run` (Engine<Modern69Wheel>, sim/machine/engine.hpp) driven
// one tick at a time, and what each CPU did in each tick (CpuTick). Every
// rule (ticks, NOHZ idle, the 6.9+ pull model's migrators and remote
// expiries) is the engine's own: this only arms the --timeouts timers at
// tick 0 on their CPUs, runs the engine up to each tick, and reads off
// which CPUs ticked, raised TIMER_SOFTIRQ, fired what (a fire from another
// CPU's global base is a remote expiry), and went idle. The one-CPU view is
// Stepper (stepper.hpp); rendering is in sim/report/step_cpus_report.hpp.
#pragma once

#include "sim/machine/stepper.hpp"
#include "wheel/kernel/modern69_wheel.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace timersim {

// step shows at most this many CPUs (a line each per tick).
inline constexpr unsigned kMaxStepCpus = 8;

struct MachineStepConfig {
    unsigned hz = 0;
    Jiffies start_jiffies = 0;
    unsigned cpus = 2;       // 2..kMaxStepCpus
    unsigned numa_nodes = 1; // 1..cpus
    bool nohz_idle = false;
};

// One CPU in one tick: the one-CPU report (TickReport: softirq is whether
// the tick raised TIMER_SOFTIRQ; fired in the order its softirq ran them,
// a remote expiry's with Fired::remote_for; armed: the tick-0 arms of its
// task) and its tick's state.
struct CpuTick {
    TickReport report;
    bool ticked = false; // its tick ran at this jiffy
    bool woke = false;   // ... after a stopped stretch (NOHZ idle): woken by its timer event
    bool idle = false;   // its tick is stopped after this tick
    std::optional<Jiffies> wakeup; // idle: the jiffy it programmed its wakeup for; none: no timer to wake for
    std::size_t pending[Modern69Wheel::kBases] = {}; // its bases' pending timers, by Modern69Wheel::BaseIndex
};

class MachineStepper {
public:
    // Arms w.timeouts at tick 0 (w.places: their CPUs and calls), each from
    // its CPU's task. Throws std::invalid_argument for a place off the machine.
    MachineStepper(const MachineStepConfig& config, const StepWorkload& w);
    ~MachineStepper();
    MachineStepper(const MachineStepper&) = delete;
    MachineStepper& operator=(const MachineStepper&) = delete;

    unsigned cpus() const noexcept { return config_.cpus; }
    const Modern69Wheel& queue(unsigned cpu) const;

    // The frame before the first shown tick, one entry per CPU.
    std::vector<CpuTick> start_frame() const;
    // The next tick, one entry per CPU.
    std::vector<CpuTick> step();
    // Runs `ticks` ticks without recording them (--from).
    void skip(std::uint64_t ticks);

private:
    class Arms; // the workload: the tick-0 arms and the fires' recorder
    struct Machine;
    CpuTick state_of(unsigned cpu) const;

    MachineStepConfig config_;
    std::uint64_t tick_ = 0;
    std::unique_ptr<Machine> machine_;
};

} // namespace timersim
