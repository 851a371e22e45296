// Which of the replay's wheels model which kernel timer base
// (kernel_replay.cpp). Internal to sim/validate.
//
// 6.1 (and 6.9+ before its trace proves it): one ModernWheel per CPU, whose
// own two bases are the kernel's BASE_STD and BASE_DEF. Wheel c is CPU c.
//
// 6.9+: every CPU has three bases, each with its own clk and next_expiry,
// and the softirq runs them in a fixed order with the remote expiry of
// idle CPUs' global bases after them. Each base is one single-base
// ModernWheel (deferrable_base off: every base's wheel code is the same,
// deferrable only decides which base a timer goes to), so wheel 3c+b is
// base b of CPU c. A ModernWheel runs its standard base before its
// deferrable one, and LOCAL, GLOBAL, DEF cannot be laid out that way on
// two wheels per CPU without running GLOBAL after DEF.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace timersim::validate {

// A CPU number that names no CPU (Event::remote_cpu when not remote).
inline constexpr std::uint32_t kNoCpu = static_cast<std::uint32_t>(-1);

// The wheels one softirq run goes through, in order.
struct RunWheels {
    std::array<unsigned, 3> wheel{};
    unsigned count = 0;
    bool contains(unsigned w) const noexcept {
        for (unsigned i = 0; i < count; ++i)
            if (wheel[i] == w) return true;
        return false;
    }
};

class BaseLayout {
public:
    // 6.9 kernel/time/timer.c: BASE_LOCAL 0, BASE_GLOBAL 1, BASE_DEF 2.
    enum Base : unsigned { local = 0, global = 1, def = 2 };

    BaseLayout(bool three_bases, unsigned cpus) : three_(three_bases), cpus_(cpus) {}

    bool three_bases() const noexcept { return three_; }
    unsigned wheels() const noexcept { return three_ ? 3 * cpus_ : cpus_; }
    unsigned cpu_of(unsigned wheel) const noexcept { return three_ ? wheel / 3 : wheel; }
    // Does the wheel's own deferrable base stand for BASE_DEF (6.1)?
    bool wheel_deferrable_base() const noexcept { return !three_; }

    // The wheel a timer_start with cpu= `cpu` queues the timer on: 6.1 the
    // CPU's (ModernWheel picks the base); 6.9 get_timer_cpu_base(): DEF for
    // TIMER_DEFERRABLE (NO_HZ_COMMON, pinned or not), else LOCAL for
    // TIMER_PINNED, else GLOBAL.
    unsigned start_wheel(unsigned cpu, bool deferrable, bool pinned) const noexcept {
        if (!three_) return cpu;
        return 3 * cpu + (deferrable ? def : pinned ? local : global);
    }

    // The wheels CPU c's own softirq runs: 6.9 run_timer_softirq() runs
    // run_timer_base(BASE_LOCAL), then BASE_GLOBAL, then BASE_DEF.
    RunWheels local_run(unsigned cpu) const noexcept {
        if (!three_) return RunWheels{{cpu, 0, 0}, 1};
        return RunWheels{{3 * cpu + local, 3 * cpu + global, 3 * cpu + def}, 3};
    }
    // The wheel another CPU runs for idle CPU `cpu` after its own bases:
    // 6.9 tmigr_handle_remote() -> timer_expire_remote() -> __run_timer_base()
    // of that CPU's BASE_GLOBAL only.
    RunWheels remote_run(unsigned cpu) const noexcept { return RunWheels{{3 * cpu + global, 0, 0}, 1}; }
    RunWheels run_of(unsigned cpu, std::uint32_t remote_cpu) const noexcept {
        return remote_cpu == kNoCpu || !three_ ? local_run(cpu) : remote_run(remote_cpu);
    }

    // A wheel for a report: "CPU 1", or "CPU 1 global base" with three bases.
    std::string describe(unsigned wheel) const {
        if (!three_) return fmt::format("CPU {}", wheel);
        static constexpr std::array<const char*, 3> names{"local", "global", "deferrable"};
        return fmt::format("CPU {} {} base", wheel / 3, names[wheel % 3]);
    }

private:
    bool three_;
    unsigned cpus_;
};

} // namespace timersim::validate
