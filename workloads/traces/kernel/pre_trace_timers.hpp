// Timers armed before a kernel trace began, found by what the trace shows
// of them first: their expiry. A timer whose first event is its
// timer_expire_entry (or the timer_cancel of its expiry's detach, then the
// entry: 6.1 expire_timers() -> detach_timer() traces the cancel; which
// cancel is a detach, cancel_meaning.hpp says) was
// queued before the recording started; the trace never shows its arm.
//
//   PreTraceTimers pre;                 // an FtraceObserver on the HZ pass
//   reader.set_observer(&pre);  ... read the whole trace ...
//   importer.arm_before_trace(pre.fires());
//
// A replay that drops such a fire loses more than one fire: a timer that
// re-arms itself from its callback (a poll every jiffy, a watchdog) never
// starts its chain, since the events of its callback wait for a fire that
// never comes. The importer arms each of them at the trace's start, to
// expire where the kernel first fired it (ftrace_import.hpp).
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/cancel_meaning.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace timersim {

// The first fire of a timer armed before the trace: its timer_expire_entry.
struct PreTraceFire {
    std::uint64_t timer = 0; // the timer_list pointer as printed
    Jiffies now = 0;
    std::uint32_t cpu = 0;   // the CPU that fired it
    std::string function;    // function=, and its module, as the entry names them
    std::string module;
};

class PreTraceTimers final : public FtraceObserver {
public:
    void timer_event(const FtraceEvent& e) override;
    void timer_softirq(const FtraceTimerSoftirq&) override {}
    // In the order of their first fires.
    const std::vector<PreTraceFire>& fires() const noexcept { return fires_; }

private:
    // By pointer: decided (any first event but a cancel), or its first event
    // was a cancel (`cancel`), which the next event of the timer explains.
    struct First {
        bool decided = true;
        CancelNeighbour cancel;
    };
    std::unordered_map<std::uint64_t, First> seen_;
    std::vector<PreTraceFire> fires_;
};

} // namespace timersim
