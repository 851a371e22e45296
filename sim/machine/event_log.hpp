// The per-timer event log: one CSV row per enqueue, fire and cancel, the
// record that teaching, debugging and external checks read.
//
//   design,cpu,time_ns,jiffies,event,timer,expires,level,idx,bucket_expiry
//
// event is enqueue|fire|cancel. level/idx are the placement: modern, the
// kernel's level and idx 0..64*depth-1 (what timer_start prints); classic,
// the tv array 1..5 and its slot; heap, empty. bucket_expiry is the jiffy the
// queue will run the timer at (heap: expires). A re-arm into another bucket
// logs cancel then enqueue, as the kernel traces timer_cancel + timer_start;
// a re-arm that hits a mod_timer() shortcut logs nothing, as in the kernel.
// expires is timer->expires: after the enqueue, when it fired, and (cancel)
// while it was pending.
//
// On the simulated machine (Engine::set_event_log(), run_machine()) rows come
// in simulated-time order; cpu is the CPU whose timer base the row is about
// (timer_start's cpu=: enqueue, the base it went to; cancel, the base it
// left; fire, the base that ran it), time_ns is the time of the CPU doing it
// (inside a softirq its clock, when the callback runs), jiffies the global
// jiffies, timer the engine's timer id. A timer moved to another CPU by a
// re-arm logs cancel on the old base, then enqueue on the new one.
#pragma once

#include "wheel/timer_queue.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string_view>

namespace timersim {

enum class TimerEvent : std::uint8_t { enqueue, fire, cancel };

class EventLog {
public:
    static constexpr std::string_view header =
        "design,cpu,time_ns,jiffies,event,timer,expires,level,idx,bucket_expiry\n";

    // Rows go to `out` (not owned), buffered.
    explicit EventLog(std::FILE* out);
    ~EventLog();
    EventLog(const EventLog&) = delete;
    EventLog& operator=(const EventLog&) = delete;

    // `placement` is the queue's view after an enqueue; ignored for other events.
    void add(std::string_view design, unsigned cpu, std::uint64_t time_ns, Jiffies jiffies, TimerEvent event,
             std::uint64_t timer, Jiffies expires, const Placement* placement, bool has_buckets);
    void flush();

private:
    std::FILE* out_;
    fmt::memory_buffer buffer_;
};

} // namespace timersim
