// The state validate's 4.8+ replay keeps (kernel_replay.cpp): each timer
// object of the trace, and our softirq run stepped one expiry at a time
// (what both replays keep: replay_ledger.hpp). Internal to sim/validate.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace timersim::validate {

// A timer object: one timer= value between two timer_inits (its names:
// ReplayLedger::names).
struct Incarnation {
    bool started = false;             // its first timer_start was replayed
    bool deferrable = false;          // from its first timer_start
    // Replay state.
    bool known = false;               // seen since its timer_init or timer_start
    std::optional<unsigned> wheel;    // the CPU wheel our model last queued it on
    TimerId timer = kNoTimer;         // its timer on that wheel (while it has one)
    bool requeued = false;            // its last timer_cancel was a requeue's detach (cancel_meaning.hpp)
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
// A run may go through several wheels in turn (timer_bases.hpp: 6.9's
// three bases, each its own wheel): one wheel's pass ends before the next
// starts, as each run_timer_base() returns before the next is called.
class SteppedRun {
public:
    explicit SteppedRun(ModernWheel& wheel) : wheels_{&wheel, nullptr, nullptr}, ids_{0, 0, 0}, count_(1) {}
    // `ids` are the replay's numbers of the wheels, in run order.
    SteppedRun(const std::array<ModernWheel*, 3>& wheels, const std::array<unsigned, 3>& ids, unsigned count)
        : wheels_(wheels), ids_(ids), count_(count) {}
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
    std::optional<FiredTimer> start() { return step(); }
    // Returns from the current callback: the next timer fired, or nothing.
    std::optional<FiredTimer> resume() {
        if (done_) return std::nullopt;
        return step();
    }
    // The replay's number of the wheel the last fire came from.
    unsigned current_wheel() const noexcept { return ids_[stage_ < count_ ? stage_ : count_ - 1]; }

private:
    std::optional<FiredTimer> step() {
        std::optional<FiredTimer> fired;
        const auto take = [&fired](const FiredTimer& f) { fired = f; };
        while (stage_ < count_) {
            ModernWheel& w = *wheels_[stage_];
            // true: stopped right after an expiry; false: nothing was due any more.
            const bool stopped = started_ ? w.resume_softirq(take, 1) : w.run_softirq(take, 1);
            started_ = true;
            if (stopped || fired) return fired;
            ++stage_;
            started_ = false;
        }
        done_ = true;
        return fired;
    }

    std::array<ModernWheel*, 3> wheels_;
    std::array<unsigned, 3> ids_;
    unsigned count_;
    unsigned stage_ = 0;
    bool started_ = false;
    bool done_ = false;
};

// A CPU's softirq in our model (its standing against the kernel:
// ReplayLedger::cpus).
struct CpuState {
    std::unique_ptr<SteppedRun> run;
    std::optional<FiredTimer> parked;     // fired by our run, not yet matched with a kernel expiry
    unsigned parked_wheel = 0;            // the wheel `parked` fired from
    // The idle CPU whose global base the run is the remote expiry of
    // (timer_bases.hpp), or kNoCpu: the CPU's own softirq.
    std::uint32_t run_remote = static_cast<std::uint32_t>(-1);
    std::optional<std::size_t> callback;  // incarnation whose kernel callback is running
    Jiffies run_jiffies = 0;
    std::uint64_t run_line = 0;
};

} // namespace timersim::validate
