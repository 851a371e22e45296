// The event log: one CSV row per enqueue, fire, cancel, cascade move and
// softirq run, the record that teaching, debugging and external checks read
// (`run --events FILE`, `compare --events FILE`; docs/output.md has every
// column).
//
//   design,cpu,time_ns,jiffies,event,timer,expires,level,idx,bucket_expiry,
//   clk,name,label,from_level,from_idx,expired,cascade_moves,cost_ns
//
//   event          timer columns filled               softirq columns
//   enqueue        expires level idx bucket_expiry clk (clk: the base's clock)
//   fire           expires level idx clk               (clk: the bucket's clock)
//   cancel         expires level idx bucket_expiry     (where it was)
//   cascade        expires level idx bucket_expiry clk from_level from_idx
//   softirq_start  -                                   -
//   softirq_end    -                                   expired cascade_moves cost_ns
//
// level/idx are the placement: modern, the kernel's level and idx
// 0..64*depth-1 (what timer_start prints); classic, the tv array 1..5 and
// its slot; heap, empty. bucket_expiry is the jiffy the queue will run the
// timer at (heap: expires). clk is the base clock the placement was computed
// from (modern base->clk after forward_timer_base(), classic timer_jiffies;
// heap empty) on enqueue and cascade rows, and the clock of the bucket that
// ran the timer (the trace's baseclk) on fire rows. name and label are the
// workload's own name for the timer (a trace's timer key as written) and
// its label (a trace's label=, the kernel callback), empty without one. A
// re-arm into another bucket logs cancel then enqueue, as the kernel traces
// timer_cancel + timer_start; a re-arm that hits a mod_timer() shortcut logs
// nothing, as in the kernel.
//
// On the simulated machine (Engine::set_event_log(), run_machine()) rows come
// in simulated-time order; cpu is the CPU whose timer base the row is about
// (timer_start's cpu=: enqueue, the base it went to; cancel, the base it
// left; fire and cascade, the base that ran it; softirq rows, the CPU of the
// run), time_ns is the time of the CPU doing it (inside a softirq its clock,
// when the callback runs; a cascade row the time its softirq step began),
// jiffies the global jiffies, timer the engine's timer id. A timer moved to
// another CPU by a re-arm logs cancel on the old base, then enqueue on the
// new one.
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string_view>

namespace timersim {

enum class TimerEvent : std::uint8_t { enqueue, fire, cancel, cascade, softirq_start, softirq_end };

// One row; an empty optional is an empty field.
struct EventRow {
    TimerEvent event = TimerEvent::enqueue;
    unsigned cpu = 0;
    std::uint64_t time_ns = 0;
    Jiffies jiffies = 0;
    std::optional<std::uint64_t> timer;
    std::optional<Jiffies> expires;
    std::optional<unsigned> level, idx;
    std::optional<Jiffies> bucket_expiry, clk;
    std::string_view name, label;
    std::optional<unsigned> from_level, from_idx;
    std::optional<std::uint64_t> expired, cascade_moves, cost_ns;
};

class EventLog {
public:
    static constexpr std::string_view header =
        "design,cpu,time_ns,jiffies,event,timer,expires,level,idx,bucket_expiry,clk,name,label,from_level,from_idx,"
        "expired,cascade_moves,cost_ns\n";

    // Rows go to `out` (not owned), buffered.
    explicit EventLog(std::FILE* out);
    ~EventLog();
    EventLog(const EventLog&) = delete;
    EventLog& operator=(const EventLog&) = delete;

    void add(std::string_view design, const EventRow& row);
    void flush();

private:
    std::FILE* out_;
    fmt::memory_buffer buffer_;
};

} // namespace timersim
