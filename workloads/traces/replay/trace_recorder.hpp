// Recording a workload as a timersim trace (format v1): a factory wrapper
// whose workload runs the inner one through a Sim that writes every arm and
// cancel to a TraceWriter before passing it on to the machine.
//
// What is written, at the simulated time it happens:
//   * arm/modify T at=EXPIRES: absolute jiffies, so a replay asks for exactly
//     the same expiry; `modify` for mod_timer_pending() (written only when
//     the timer was pending, i.e. when the call did something);
//   * cancel T;
//   * flags=deferrable on a timer's first event (TIMER_DEFERRABLE is fixed at
//     timer_setup()), flags=pinned on every mod_timer_pinned()/add_timer_on()
//     (no classic slack);
//   * cpu= the CPU the call runs on (or add_timer_on()'s CPU) when the
//     machine has more than one;
//   * cb=X when the call is made inside timer X's callback.
// Timers are named by their TimerId on the recorded machine.
//
// Actions the workload schedules are recorded at their scheduled time (an
// action that had to wait for a softirq runs late, and a replay makes it
// wait the same way), never before an event already written. A replay
// applies consecutive events of one time and CPU as one step, and those of
// time 0 while it is built: an action that would merge with the one written
// before it is written 1 ns later, and one due at time 0 at 1 ns.
#pragma once

#include "workloads/traces/layouts/trace_writer.hpp"
#include "workloads/workload.hpp"

namespace timersim {

// `writer` must outlive every workload the factory builds; its header must
// match the machine's clock (hz, start jiffies).
WorkloadFactory recording(WorkloadFactory inner, TraceWriter& writer);

} // namespace timersim
