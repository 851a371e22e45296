// Callbacks as the recording ran them (the recorded machine's default,
// ReplayCallbackCosts::as_recorded): how long each of the kernel's timer
// callbacks took, from its timer_expire_entry to its _exit, and across how
// many of the kernel's jiffies. A TCG vCPU the host stalls inside a
// callback (or right after it, within the same run) lets jiffies move on
// before the run's next timer: 6.1 __run_timers() reads jiffies afresh for
// every bucket, and the trace shows the next fire at a later `now`. A
// replay whose callbacks take the model's 200 ns fires that next timer a
// jiffy early.
//
//   std::optional<RecordedCallback> r = recorded_callback(fire, &clock);  // kept by KernelFireIndex
//   std::uint64_t ns = callback_on_grid(*r, fire_ns, start_jiffies, fired_jiffies, hz);
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"

#include <cstdint>
#include <optional>

namespace timersim {

// One callback of the kernel's: at jiffy `now`, for `ns`, across `ticks`
// jiffies (the `now` of the next fire of the same run less this one's;
// without one, the kernel clock's jiffies at the exit less `now`; none
// without either).
struct RecordedCallback {
    Jiffies now = 0;
    std::uint64_t ns = 0;
    std::optional<std::uint64_t> ticks;
};

// A fire's callback, if the trace shows its entry/exit pair; `clock`
// counts the jiffies of one without a next fire of its run.
std::optional<RecordedCallback> recorded_callback(const KernelFire& fire, const KernelClock* clock);

// A recorded callback's length on the replay's tick grid (tick n at
// tick_time_ns(n, hz), jiffy start_jiffies + n), started at `start_ns` in
// jiffy `jiffies`: as long as it was, clamped so that it ends as many
// jiffies later as the kernel's did, and a sixteenth of a tick before the
// tick after that (room for the run's own work). The replay's jiffies are
// not the kernel's (a TCG vCPU's run unevenly; the replay's come every
// 1/HZ): a 4 ms callback the kernel ran within one jiffy must not cross the
// replay's next tick, nor one that crossed it stop short.
std::uint64_t callback_on_grid(const RecordedCallback& callback, std::uint64_t start_ns, Jiffies start_jiffies,
                               Jiffies jiffies, unsigned hz);

} // namespace timersim
