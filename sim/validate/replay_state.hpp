// The state validate's replay keeps (kernel_replay.cpp): each timer object
// of the trace, our softirq run stepped one expiry at a time, and each CPU's
// standing against the kernel (its history whole, lost or resynchronised).
// Internal to sim/validate.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace timersim::validate {

// A timer object: one timer= value between two timer_inits.
struct Incarnation {
    std::uint64_t timer = 0;
    std::string_view function;        // its last function= (ReplayInput::functions holds the text)
    bool deferrable = false;          // from its first timer_start
    // Replay state.
    bool known = false;               // seen since its timer_init or timer_start
    std::optional<unsigned> wheel;    // the CPU wheel our model last queued it on
    bool cancelled = false;           // a timer_cancel since its last timer_start
    std::uint64_t start_line = 0;     // its last timer_start that our model queued
    struct EarlyFire {
        std::uint64_t line;
        Jiffies jiffies;
        Jiffies base_clk;
    };
    std::optional<EarlyFire> model_fired; // our model fired it; the kernel has not shown that expiry yet
};

// Our run_timer_softirq() one expiry at a time: the wheel's budgeted pass
// (wheel/core/timer_queue.hpp) with a budget of one stops right after each
// expiry, and a pass run that way performs the same steps in the same order
// as the kernel's unbounded one. Between two steps the replay applies the
// events the kernel's callback produced (re-arms, cancels, on any CPU),
// exactly where that callback ran. No thread, no hand-off per callback.
class SteppedRun {
public:
    explicit SteppedRun(ModernWheel& wheel) : wheel_(wheel) {}
    SteppedRun(const SteppedRun&) = delete;
    SteppedRun& operator=(const SteppedRun&) = delete;
    // A run dropped before its end still expires what it had collected and
    // what is due, unseen, as a kernel softirq would go on without us
    // looking: the next run starts where the kernel's would.
    ~SteppedRun() {
        while (resume()) {
        }
    }

    // Starts the run: the first timer it fires, or nothing (then it is over).
    std::optional<FiredTimer> start() { return step(false); }
    // Returns from the current callback: the next timer fired, or nothing.
    std::optional<FiredTimer> resume() {
        if (done_) return std::nullopt;
        return step(true);
    }

private:
    std::optional<FiredTimer> step(bool resume) {
        std::optional<FiredTimer> fired;
        const auto take = [&fired](const FiredTimer& f) { fired = f; };
        // true: stopped right after an expiry; false: nothing was due any more.
        const bool stopped = resume ? wheel_.resume_softirq(take, 1) : wheel_.run_softirq(take, 1);
        if (!stopped) done_ = true;
        return fired;
    }

    ModernWheel& wheel_;
    bool done_ = false;
};

// Whether a CPU's wheel can be checked against the kernel's: its history is
// whole, lost (events missing: checks excluded), or lost and then pinned
// again by an agreeing expiry (checks counted apart).
enum class History : std::uint8_t { whole, lost, resynced };

struct CpuState {
    History history = History::whole;
    std::string lost_since; // why, and where
    std::unique_ptr<SteppedRun> run;
    std::optional<FiredTimer> parked;     // fired by our run, not yet matched with a kernel expiry
    std::optional<std::size_t> callback;  // incarnation whose kernel callback is running
    Jiffies run_jiffies = 0;
    std::uint64_t run_line = 0;
};

} // namespace timersim::validate
