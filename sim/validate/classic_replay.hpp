// validate for a kernel before 4.8 (docs/validation.md, "The classic
// era"): the trace's timer events replayed through ClassicWheel, one per
// CPU, checking every timer_expire_entry:
//
//   check expiry: when the kernel shows an expiry at now=N on CPU c, our
//                 wheel of CPU c, its __run_timers() caught up to N (with
//                 the cascades from tv2..tv5 on the way), fires that timer
//                 in that run, and in the kernel's order: the timers the
//                 kernel's run printed before it, ours fired before it too.
//
// These kernels print no idx (3.x timer_start: timer, function, expires;
// 4.2-4.7 add the flags word), so the idx check does not apply: timer_starts
// are counted, not checked. expires is printed after apply_slack(), so
// timers are queued with no slack. The target CPU is the flags word's
// (4.2-4.7), else the CPU that printed the timer_start. Slots run oldest
// first before 4.2 (ClassicWheel::SlotOrder), newest first from 4.2.
//
// Our softirq runs on CPU c where the trace shows an expiry on CPU c; in
// between, each wheel catches up jiffy by jiffy as a ticking CPU's would, up
// to the jiffy before its first due timer (that one waits for the trace to
// show its expiry). The classes are those of the 4.8+ replay
// (kernel_replay.hpp): agree, disagree with its cause, unknown history (an
// expiry of a timer the trace never showed armed: armed before it), lost
// history (a LOST EVENTS line, or an expiry of a timer our model never had
// pending: checks of that CPU excluded until one of its expiries agrees).
// Internal to sim/validate/.
#pragma once

#include "sim/validate/kernel_replay.hpp"
#include "sim/validate/replay_input.hpp"

namespace timersim::validate {

// Fills result's checks, causes, notes and replay counts from the events of
// `stream` (primed, result.kernel_classic set), numbered by `slots`.
void replay_classic_trace(ReplayStream& stream, IncarnationSlots& slots, ReplayResult& result,
                          const ReplayOptions& options);

} // namespace timersim::validate
