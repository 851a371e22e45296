// What a timer_cancel line means. The kernel traces timer_cancel from
// detach_timer() (6.1 kernel/time/timer.c), which three different things
// call, and the line does not say which:
//
//   expiry_detach  the run loop detaching a timer it is about to fire
//                  (6.1 expire_timers(), 3.6 __run_timers()): the timer's
//                  next event is its timer_expire_entry on the same CPU.
//                  Other events of that CPU may come between: the base lock
//                  is dropped with interrupts enabled before call_timer_fn(),
//                  and the softirq may be preempted there;
//   requeue        mod_timer() of a pending timer moving it to another
//                  bucket (6.1 __mod_timer(): detach_if_pending(), then
//                  enqueue_timer() under the same lock, interrupts off):
//                  the same CPU's very next event is that timer's
//                  timer_start, and no other CPU's event of the timer
//                  comes between, at another idx= than the timer was queued
//                  at. At the same idx, mod_timer() would have found it in
//                  its bucket and traced nothing (`idx ==
//                  timer_get_idx(timer)`): the pair was del_timer() then
//                  add_timer(), as workqueue's mod_delayed_work() does, and
//                  the timer goes to the adding CPU's base;
//   del_timer      anything else: a user's cancel (a del_timer() leaves the
//                  timer idle: it cannot expire before a timer_start).
//
// Every replay of a kernel trace (run, compare, step through the import;
// validate; the import's timers armed before the trace and the recorded
// machine's held CPUs) reads a cancel by these rules, so they agree on which
// cancels are a user's.
//
//   switch (cancel_meaning(cancel, next_on_cpu, next_of_timer)) ...
#pragma once

#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>

namespace timersim {

enum class CancelMeaning : std::uint8_t { expiry_detach, requeue, del_timer };

// How long after a timer_cancel its timer's expire_entry still makes it the
// detach. In expire_timers() the two are microseconds apart unless the
// softirq is preempted between them (the committed 6.1 capture has one
// 18.7 ms apart); a second. Past that the cancel is a del_timer.
inline constexpr std::uint64_t kDetachReachNs = 1'000'000'000;
// How long the requeue's two lines may be apart: they are traced under one
// lock with interrupts off, microseconds apart. A start traced later is a
// new arm after a del_timer().
inline constexpr std::uint64_t kRequeueReachNs = 10'000'000;

// The part of a timer event the rules read.
struct CancelNeighbour {
    FtraceEventType type = FtraceEventType::timer_init;
    std::uint64_t timer = 0;
    std::uint64_t timestamp_ns = 0;
    std::uint32_t cpu = 0; // the CPU that printed it
    // A timer_start's idx=; a timer_cancel's, the idx= its timer was
    // queued at (its last timer_start's, if pending); kNoIdx if unknown.
    std::uint16_t idx = kNoIdx;
    static constexpr std::uint16_t kNoIdx = 0xFFFF;
};

// How far apart each pair may be (the kernel's, above, unless a test or
// the fuzzer narrows them).
struct CancelReach {
    std::uint64_t detach_ns = kDetachReachNs;
    std::uint64_t requeue_ns = kRequeueReachNs;
};

namespace cancel_detail {
// A next line stamped before the cancel (a clock that stepped back) is no
// gap, not 2^64 ns.
inline std::uint64_t gap(const CancelNeighbour& from, const CancelNeighbour& to) noexcept {
    return to.timestamp_ns > from.timestamp_ns ? to.timestamp_ns - from.timestamp_ns : 0;
}
} // namespace cancel_detail

// `next_of_timer`, the timer's next event (any CPU), shows the cancel was
// the detach of its expiry.
inline bool detaches_for(const CancelNeighbour& cancel, const CancelNeighbour& next_of_timer,
                         CancelReach reach = {}) noexcept {
    return next_of_timer.type == FtraceEventType::timer_expire_entry && next_of_timer.timer == cancel.timer &&
           next_of_timer.cpu == cancel.cpu && cancel_detail::gap(cancel, next_of_timer) <= reach.detach_ns;
}

// `next_on_cpu`, the next timer event the cancel's CPU printed, shows it was
// the first half of a requeue.
inline bool requeues_with(const CancelNeighbour& cancel, const CancelNeighbour& next_on_cpu,
                          CancelReach reach = {}) noexcept {
    const bool same_bucket = cancel.idx != CancelNeighbour::kNoIdx && cancel.idx == next_on_cpu.idx;
    return next_on_cpu.type == FtraceEventType::timer_start && next_on_cpu.timer == cancel.timer &&
           next_on_cpu.cpu == cancel.cpu && cancel_detail::gap(cancel, next_on_cpu) <= reach.requeue_ns &&
           !same_bucket;
}

// `cancel` is a timer_cancel; `next_on_cpu`, the next timer event its CPU
// printed if that is also the timer's next event (else null), and
// `next_of_timer`, its timer's next event, each null if there is none (or
// none is known within reach).
inline CancelMeaning cancel_meaning(const CancelNeighbour& cancel, const CancelNeighbour* next_on_cpu,
                                    const CancelNeighbour* next_of_timer, CancelReach reach = {}) noexcept {
    if (next_on_cpu && requeues_with(cancel, *next_on_cpu, reach)) return CancelMeaning::requeue;
    if (next_of_timer && detaches_for(cancel, *next_of_timer, reach)) return CancelMeaning::expiry_detach;
    return CancelMeaning::del_timer;
}

} // namespace timersim
