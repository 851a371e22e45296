// What a timer_cancel line means. The kernel traces timer_cancel from
// detach_timer() (6.1 kernel/time/timer.c), which three different things
// call, and the line does not say which:
//
//   expiry_detach  the run loop detaching a timer it is about to fire
//                  (6.1 expire_timers(), 3.6 __run_timers()): the same CPU
//                  next traces that timer's timer_expire_entry;
//   requeue        mod_timer() of a pending timer moving it to another
//                  bucket (6.1 __mod_timer(): detach_if_pending(), then
//                  enqueue_timer() under the same lock, interrupts off):
//                  the same CPU next traces that timer's timer_start;
//   del_timer      anything else: a user's cancel.
//
// The meaning is read from the CPU's next timer event alone: nothing else
// that CPU traces can come between, and a replay that reads further (the
// timer's next event on any CPU) would take a cancel followed by another
// CPU's work on the timer for something it is not. Every replay of a kernel
// trace (run, compare, step through the import; validate) reads a cancel
// with cancel_meaning(), so they agree on which cancels are a user's.
//
//   const CancelMeaning m = cancel_meaning(cancel, next_on_cpu);
//   if (m == CancelMeaning::expiry_detach) ...  // not a cancel: an expiry follows
#pragma once

#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>

namespace timersim {

enum class CancelMeaning : std::uint8_t { expiry_detach, requeue, del_timer };

// How long after a timer_cancel its CPU's next event still tells what the
// cancel was. In expire_timers() the detach and the callback's
// timer_expire_entry are microseconds apart, but the softirq may be
// preempted between them (the committed 6.1 capture has one 18.7 ms
// apart); a second. A CPU silent for longer leaves the cancel a del_timer.
inline constexpr std::uint64_t kDetachReachNs = 1'000'000'000;
// How long the requeue's two lines may be apart: they are traced under one
// lock with interrupts off, microseconds apart. A start traced later is a
// new arm after a del_timer().
inline constexpr std::uint64_t kRequeueReachNs = 10'000'000;

// The part of a timer event the rule reads.
struct CancelNeighbour {
    FtraceEventType type = FtraceEventType::timer_init;
    std::uint64_t timer = 0;
    std::uint64_t timestamp_ns = 0;
};

// How far apart each pair may be (the kernel's, above, unless a test or
// the fuzzer narrows them).
struct CancelReach {
    std::uint64_t detach_ns = kDetachReachNs;
    std::uint64_t requeue_ns = kRequeueReachNs;
};

// `cancel` is a timer_cancel; `next_on_cpu`, the next timer event the same
// CPU traced, or null if it traced none (within reach.detach_ns, or at
// all).
inline CancelMeaning cancel_meaning(const CancelNeighbour& cancel, const CancelNeighbour* next_on_cpu,
                                    CancelReach reach = {}) noexcept {
    if (!next_on_cpu || next_on_cpu->timer != cancel.timer) return CancelMeaning::del_timer;
    const std::uint64_t gap =
        next_on_cpu->timestamp_ns > cancel.timestamp_ns ? next_on_cpu->timestamp_ns - cancel.timestamp_ns : 0;
    if (next_on_cpu->type == FtraceEventType::timer_expire_entry && gap <= reach.detach_ns)
        return CancelMeaning::expiry_detach;
    if (next_on_cpu->type == FtraceEventType::timer_start && gap <= reach.requeue_ns) return CancelMeaning::requeue;
    return CancelMeaning::del_timer;
}

} // namespace timersim
