// Engine, the implementation of the event log's rows (format:
// sim/machine/event_log.hpp). Every function here runs only while a log is
// set (each call site checks events_ first), so a run without --events pays
// one predicted branch at the call sites and nothing else: the single-CPU
// arm()/cancel() fast path does not even have those (fast_ is off while
// logging). Included only by engine.cpp.
#pragma once

#include "sim/machine/engine_impl.hpp"

namespace timersim {

namespace engine_log {

// The clock a queue computed a placement from: 6.1 base->clk of the timer's
// base (after forward_timer_base()), 4.x base->timer_jiffies; none for the heap.
template <class Q>
std::optional<Jiffies> base_clock(const Q& q, const Placement& p) {
    if constexpr (requires { q.timer_jiffies(); })
        return q.timer_jiffies();
    else if constexpr (requires { q.base(Q::base_def).clk; })
        return q.base(p.deferrable_base ? Q::base_def : Q::base_std).clk;
    else
        return std::nullopt;
}

// Where a queue had the timer before it fired or was cancelled.
template <class Q>
std::optional<Placement> last_placement(const Q& q, TimerId node) {
    if constexpr (requires { q.last_placement(node); })
        return q.last_placement(node);
    else
        return std::nullopt;
}

} // namespace engine_log

template <TimerQueue Q>
void Engine<Q>::set_event_log(EventLog* log, std::string_view design) {
    events_ = log;
    design_ = std::string(design);
    fast_ = single_ && !events_ && config_.group_by == GroupBy::function;
    if (!events_) {
        names_.clear();
        labels_.clear();
    }
    for (CpuState& c : cpus_)
        if constexpr (requires { c.queue->observe_cascades(&Engine::log_cascade, this); })
            c.queue->observe_cascades(events_ ? &Engine::log_cascade : nullptr, this);
}

template <TimerQueue Q>
void Engine<Q>::name_timer(TimerId id, std::string_view name, std::string_view label) {
    if (!events_) return;
    if (id >= names_.size()) {
        names_.resize(std::size_t{id} + 1);
        labels_.resize(std::size_t{id} + 1);
    }
    names_[id] = std::string(name);
    labels_[id] = std::string(label);
}

template <TimerQueue Q>
EventRow Engine<Q>::timer_row(TimerEvent e, unsigned cpu, TimerId id) const {
    EventRow r{.event = e, .cpu = cpu, .time_ns = now_ns(), .jiffies = jiffies_, .timer = id};
    if (id < names_.size()) {
        r.name = names_[id];
        r.label = labels_[id];
    }
    return r;
}

template <TimerQueue Q>
EventRow Engine<Q>::placed_row(TimerEvent e, unsigned cpu, TimerId id, const Placement& p) const {
    EventRow r = timer_row(e, cpu, id);
    r.expires = p.expires;
    if (kHasBuckets) {
        r.level = p.level;
        r.idx = p.slot;
    }
    r.bucket_expiry = p.bucket_expiry;
    return r;
}

template <TimerQueue Q>
void Engine<Q>::log_enqueue(unsigned cpu, TimerId id, TimerId node) {
    const Q& q = *cpus_[cpu].queue;
    const Placement p = q.placement(node);
    EventRow r = placed_row(TimerEvent::enqueue, cpu, id, p);
    r.clk = engine_log::base_clock(q, p);
    events_->add(design_, r);
}

template <TimerQueue Q>
void Engine<Q>::log_cancel(unsigned cpu, TimerId id, const Placement& was) {
    events_->add(design_, placed_row(TimerEvent::cancel, cpu, id, was));
}

template <TimerQueue Q>
void Engine<Q>::log_fire(const CpuState& c) {
    EventRow r = timer_row(TimerEvent::fire, index_of(c), c.running_timer);
    r.expires = c.fired.expires;
    r.clk = c.fired.base_clk;
    if (c.fired_placement) {
        r.level = c.fired_placement->level;
        r.idx = c.fired_placement->slot;
    }
    events_->add(design_, r);
}

// Where the timer was when the softirq took it off, read then: another
// CPU's mod_timer() may queue it again before its callback runs.
template <TimerQueue Q>
void Engine<Q>::note_fired_placement(CpuState& c) {
    const Q& q = c.remote_cpu == kNoRemoteCpu ? *c.queue : *cpus_[c.remote_cpu].queue;
    c.fired_placement = engine_log::last_placement(q, c.fired.id);
}

template <TimerQueue Q>
void Engine<Q>::log_softirq(const CpuState& c, TimerEvent e) {
    EventRow r{.event = e, .cpu = index_of(c), .time_ns = c.clock_ns, .jiffies = jiffies_};
    if (e == TimerEvent::softirq_end) {
        const QueueCounters& k = c.queue->counters();
        r.expired = k.expired - c.run_expired_before;
        r.cascade_moves = k.cascade_moves - c.run_moves_before;
        r.cost_ns = c.clock_ns - c.run_start_ns;
    }
    events_->add(design_, r);
}

// Called by a classic wheel's cascade() (ClassicWheel::observe_cascades())
// inside the softirq step of the CPU being processed (current_cpu_): the
// timer is already in its new list.
template <TimerQueue Q>
void Engine<Q>::log_cascade(void* engine, TimerId node, unsigned from_array, unsigned from_slot) {
    auto& e = *static_cast<Engine*>(engine);
    const unsigned cpu = e.current_cpu_;
    const CpuState& c = e.cpus_[cpu];
    const Placement p = c.queue->placement(node);
    EventRow r = e.placed_row(TimerEvent::cascade, cpu, e.single_ ? node : c.timer_of[node], p);
    // The step's own time: its work (this cascade included) is charged to
    // the softirq's clock only when the step ends, and another CPU's events
    // up to then may come before that.
    r.time_ns = e.time_ns_;
    r.clk = engine_log::base_clock(*c.queue, p);
    r.from_level = from_array;
    r.from_idx = from_slot;
    e.events_->add(e.design_, r);
}

} // namespace timersim
