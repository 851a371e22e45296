// Which timers of a trace from a kernel before 4.2 were deferrable. Those
// kernels' timer_start prints no flags (4.2 added them), so the trace never
// says; what it shows is the flag's effect. 3.6 get_next_timer_interrupt()
// (__next_timer_interrupt() skips tbase_get_deferrable() timers) lets an
// idle CPU sleep past a deferrable timer's expiry: the timer runs at the
// CPU's next wakeup, late. A non-deferrable timer is what that wakeup is
// programmed for, and a ticking CPU runs every timer on its jiffy. So a
// timer that once fired kLateJiffies or more after the expires its last
// timer_start printed (or the jiffy of that call, if expires had passed) (3.6 prints it after apply_slack(): where the wheel
// queued it) is taken as deferrable, for all its starts.
//
//   DeferrableInference late;          // an FtraceObserver on the HZ pass
//   reader.set_observer(&late);  ... read the whole trace ...
//   importer.infer_deferrable(late.timers());  // only for a kernel before 4.2
//
// A fire made late by something else (a softirq pushed to ksoftirqd, a vCPU
// the host held) makes a false positive: that timer then waits for a run
// the recording shows instead of waking its CPU, which is where the kernel
// fired it on that occasion too. Only starts without flags= are looked at,
// so a trace of a later kernel costs nothing here.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace timersim {

class DeferrableInference final : public FtraceObserver {
public:
    // A fire this many jiffies after its expires, or more, is a deferral:
    // a ticking CPU runs a due timer on its jiffy or, from ksoftirqd, the
    // next.
    static constexpr Jiffies kLateJiffies = 2;

    void timer_event(const FtraceEvent& e) override;
    void timer_softirq(const FtraceTimerSoftirq&) override {}
    // The timer pointers seen late, ascending (binary_search them).
    std::vector<std::uint64_t> timers() const;

private:
    struct Timer {
        Jiffies due = 0;
        bool started = false; // a flagless timer_start since its last fire
        bool late = false;
    };
    std::unordered_map<std::uint64_t, Timer> timers_;
};

} // namespace timersim
