// Engine, the implementation of the tick, the softirq runs (start, one
// expiry step at a time, callbacks, the end of a run), the softirq cost
// series and NOHZ idle. The rules are those of engine_impl.hpp's opening
// comment. Included only by engine.cpp.
#pragma once

#include "sim/machine/engine_impl.hpp"

#include <algorithm>

namespace timersim {

template <TimerQueue Q>
void Engine<Q>::tick(CpuState& c) {
    const std::uint64_t n = c.next_tick_index;
    ++c.ticks;
    c.last_tick_ns = c.next_tick_ns;
    c.next_tick_index = n + 1;
    c.next_tick_ns = tick_at(c, n + 1);
    ++c.metrics.ticks;
    if (c.tick_stopped) {
        // The timer event programmed at idle entry: the tick runs again
        // (from here on every period, until the next idle decision).
        set_tick_stopped(c, false);
        ++c.metrics.wakeups_by_timer;
    }
    // tick_periodic()/tick_sched_do_timer(): jiffies moves to this tick (one
    // step while ticking, the whole stopped stretch after NOHZ idle), then
    // update_process_times() -> run_local_timers().
    advance_jiffies(c, start_jiffies_ + n);
    sync(c);
    // A bounded run's carry-over is due too (not the pass in progress: it
    // stops after every expiry only to let the other CPUs' events in).
    // 6.9+ run_local_timers() raises for the migration hierarchy's remote
    // work too (tmigr_requires_handle_remote()).
    const bool due = c.queue->softirq_due() || (!c.in_softirq && c.queue->carry_over()) || remote_work_due(c);
    bool raise = due;
    if (due && config_.recorded) {
        const std::optional<std::uint64_t> at = recorded_raise_time(c);
        raise = at && (*at <= c.last_tick_ns || c.in_softirq); // a run in progress takes it at once
        if (at && !raise) {
            c.raise_at_ns = std::min(c.raise_at_ns, *at);
            ++c.metrics.ticks_raised;
        }
    }
    if (raise) {
        c.softirq.raise(timer_softirq);
        ++c.metrics.ticks_raised;
    } else if (c.raise_at_ns == UINT64_MAX) {
        ++c.metrics.ticks_not_raised;
    }
    if (c.in_softirq) {
        ++c.metrics.ticks_in_softirq;
        return; // back into the interrupted softirq
    }
    if (c.softirq.irq_exit()) start_run(c, SoftirqContext::irq_exit, c.last_tick_ns);
}

template <TimerQueue Q>
std::size_t Engine<Q>::window_of(std::uint64_t t) {
    const std::uint64_t w = config_.series_window_ticks;
    const std::uint64_t n = tick_index_at(t, config_.hz);
    std::uint64_t index = n == 0 ? 0 : (n - 1) / w;
    if (config_.series_max_windows && index >= config_.series_max_windows) index = config_.series_max_windows - 1;
    while (series_.size() <= index)
        series_.push_back(SeriesPoint{.start_ns = tick_time_ns(series_.size() * w + 1, config_.hz)});
    return static_cast<std::size_t>(index);
}

template <TimerQueue Q>
void Engine<Q>::start_run(CpuState& c, SoftirqContext context, std::uint64_t start_ns) {
    charge_queue_work(c); // what task context did since the last softirq
    c.in_softirq = true;
    c.clock_ns = start_ns;
    c.run_start_ns = start_ns;
    c.started_by_end = start_ns <= end_ns_;
    if (c.started_by_end) ++runs_started_by_end_;
    c.ran_timers = false;
    c.run_expiries = 0;
    c.run_expired_before = c.queue->counters().expired;
    c.run_moves_before = c.queue->counters().cascade_moves;
    if (config_.series_window_ticks) c.run_window = window_of(start_ns);
    c.softirq.begin(jiffies_, context);
    start_pass(c);
}

template <TimerQueue Q>
void Engine<Q>::start_pass(CpuState& c) {
    const std::uint32_t mask = c.softirq.start_pass();
    if (mask & (1u << timer_softirq)) {
        if (events_ && !c.ran_timers) log_softirq(c, TimerEvent::softirq_start);
        c.ran_timers = true;
        // 6.1 run_timer_softirq() -> __run_timers() for each base, one
        // expiry at a time. With the bound spent the handler has nothing to do.
        charge(c, config_.costs.softirq_entry_ns);
        if constexpr (RemoteExpiry<Q>) {
            find_remote_targets(c, c.remote_targets);
            c.remote_next = 0;
            c.remote_cpu = kNoRemoteCpu;
        }
        const std::uint32_t bound = config_.max_expiries_per_softirq;
        if (bound == 0 || c.run_expiries < bound) {
            queue_step(c, false);
            return;
        }
    }
    c.phase = Phase::pass_end;
}

template <TimerQueue Q>
void Engine<Q>::queue_step(CpuState& c, bool resume) {
    // One expiry of the queue's pass: start it, or go on with the paused one.
    sync(c);
    c.step_start_ns = c.clock_ns;
    c.has_fired = false;
    const auto take = [&c](const FiredTimer& f) {
        c.fired = f;
        c.has_fired = true;
    };
    if (c.remote_cpu != kNoRemoteCpu) {
        remote_steps(c, take, resume);
    } else {
        if (resume)
            c.queue->resume_softirq(take, 1);
        else
            c.queue->run_softirq(take, 1);
        // Its own bases are done: 6.9 run_timer_softirq() -> tmigr_handle_remote().
        if (!c.has_fired) remote_steps(c, take, false);
    }
    after_queue_step(c);
}

// 6.9 tmigr_handle_remote() -> timer_expire_remote(): the idle CPUs'
// global bases, one after another, until one fires a timer (which then
// runs on this CPU) or none is left. Their work is this CPU's (remote()).
template <TimerQueue Q>
template <class Take>
void Engine<Q>::remote_steps(CpuState& c, Take& take, bool resume) {
    if constexpr (RemoteExpiry<Q>) {
        while (true) {
            if (c.remote_cpu == kNoRemoteCpu) {
                if (c.remote_next >= c.remote_targets.size()) return;
                c.remote_cpu = c.remote_targets[c.remote_next++];
                resume = false;
            }
            CpuState& idle = cpus_[c.remote_cpu];
            sync(idle);
            // As remote(), charging the current CPU for the work on idle's queue, read off
            // the counters a remote run changes (all the work it does).
            const std::uint64_t before = work_ns(idle.queue->remote_counters());
            if (resume)
                idle.queue->resume_remote_softirq(take, 1);
            else
                idle.queue->run_remote_softirq(take, 1);
            const std::uint64_t done = work_ns(idle.queue->remote_counters()) - before;
            idle.work_mark += done;
            cpus_[current_cpu_].extra_ns += done;
            if (c.has_fired) return;
            c.remote_cpu = kNoRemoteCpu;
        }
    } else {
        (void)c, (void)take, (void)resume;
    }
}

// Whose global base CPU c runs after its own in this TIMER softirq, into
// `out`. On the recorded machine, the ones the trace shows it ran then (its
// tmigr_handle_remote_cpu lines). On the simulated machine with NOHZ idle,
// a stand-in for the hierarchy (docs/machine.md), whose groups
// (hierarchy_, migration_hierarchy.hpp) are the kernel's for the CPUs and
// NUMA nodes. A group's migrator is its lowest-numbered CPU whose tick
// runs. At each level whose group CPU c is the migrator of, as 6.9
// tmigr_handle_remote() walks up, it runs the idle CPUs of that group's
// children that have no migrator of their own: at level 0 its group's idle
// CPUs, above it every CPU of a child group whose ticks are all stopped.
// Without NOHZ no CPU is idle.
template <TimerQueue Q>
void Engine<Q>::find_remote_targets(CpuState& c, std::vector<std::uint32_t>& out) {
    out.clear();
    const unsigned x = index_of(c);
    if (config_.recorded) {
        for (const RecordedMachine::RemoteRun& r : config_.recorded->remote_runs_at(x, jiffies_))
            if (r.cpu < cpus_.size() && r.cpu != x) out.push_back(r.cpu);
        return;
    }
    if (!config_.nohz_idle || hierarchy_.levels.empty()) return;
    const auto any_tick_runs = [&](unsigned first, unsigned end) {
        for (unsigned y = first; y < end; ++y)
            if (!cpus_[y].tick_stopped) return true;
        return false;
    };
    unsigned index = hierarchy_.group_of_cpu[x];
    for (unsigned l = 0; l < hierarchy_.levels.size(); ++l) {
        const MigrationGroup& g = hierarchy_.levels[l][index];
        if (any_tick_runs(g.first_cpu, x)) return; // a lower CPU whose tick runs is the migrator
        for (unsigned ch = g.first_child; ch < g.end_child; ++ch) {
            // A child's CPUs: itself at level 0, its span above.
            const MigrationGroup* child = l == 0 ? nullptr : &hierarchy_.levels[l - 1][ch];
            const unsigned first = child ? child->first_cpu : ch;
            const unsigned end = child ? child->end_cpu : ch + 1;
            if (x >= first && x < end) continue; // its own child: the levels below
            if (child && any_tick_runs(first, end)) continue; // that group's own migrator runs it
            for (unsigned y = first; y < end; ++y)
                if (cpus_[y].tick_stopped) out.push_back(y);
        }
        index = g.parent;
    }
}

// Is a global base CPU c would run remotely due now?
template <TimerQueue Q>
bool Engine<Q>::remote_work_due(CpuState& c) {
    if constexpr (RemoteExpiry<Q>) {
        if (!config_.recorded && !config_.nohz_idle) return false;
        find_remote_targets(c, c.remote_due_targets);
        for (const std::uint32_t y : c.remote_due_targets) {
            sync(cpus_[y]);
            if (cpus_[y].queue->remote_due()) return true;
        }
        return false;
    } else {
        (void)c;
        return false;
    }
}

template <TimerQueue Q>
void Engine<Q>::after_queue_step(CpuState& c) {
    // Everything the queue did to get here (scans, cascades, this expiry)
    // happened before the callback; ticks due by then interrupt first.
    charge_queue_work(c);
    if (c.has_fired) {
        if (c.fired.ahead != kNoTimer) prefetch_fire(c.fired.ahead);
        if (events_) note_fired_placement(c);
        c.phase = Phase::fire;
        // A remote expiry's node is the idle CPU's, and so is the timer
        // while its callback runs here.
        if (c.remote_cpu != kNoRemoteCpu) {
            CpuState& idle = cpus_[c.remote_cpu];
            c.running_timer = idle.timer_of[c.fired.id];
            idle.remote_running = c.running_timer;
        } else {
            c.running_timer = single_ ? c.fired.id : c.timer_of[c.fired.id];
        }
        // What it asked for when it was taken off: another CPU's mod_timer()
        // may arm it again before its callback runs.
        c.fired_requested = books_[c.running_timer].requested();
        ++c.run_expiries;
    } else {
        c.phase = Phase::pass_end;
    }
}

template <TimerQueue Q>
void Engine<Q>::softirq_step(CpuState& c) {
    if (c.phase == Phase::fire) {
        run_callback(c);
        const std::uint32_t bound = config_.max_expiries_per_softirq;
        if (bound != 0 && c.run_expiries >= bound) {
            // The bound: the rest stays collected for the next run.
            c.queue->hold_carry_over();
            if (c.remote_cpu != kNoRemoteCpu) {
                cpus_[c.remote_cpu].queue->hold_carry_over();
                c.remote_cpu = kNoRemoteCpu;
            }
            charge_queue_work(c);
            c.phase = Phase::pass_end;
            return;
        }
        // 6.1 __run_timers() reads jiffies at each turn of its loop: a
        // callback that ran past a tick (any CPU's: jiffies is global)
        // lets that tick in first, and the run goes on at the jiffies it
        // moved to, newly due buckets and the deferrable base included.
        if (tick_time_ns(jiffies_ - start_jiffies_ + 1, config_.hz) <= c.clock_ns) {
            c.phase = Phase::resume;
            return;
        }
        queue_step(c, true);
        return;
    }
    if (c.phase == Phase::resume) {
        queue_step(c, true);
        return;
    }
    // The pass has ended and the ticks up to its end have come.
    const SoftirqCpu::PassEnd end = c.softirq.end_pass(jiffies_, c.clock_ns);
    if (end == SoftirqCpu::PassEnd::restart) {
        start_pass(c);
        return;
    }
    finish_run(c);
}

template <TimerQueue Q>
void Engine<Q>::run_callback(CpuState& c) {
    const TimerId id = c.running_timer;
    const Jiffies requested = c.fired_requested;
    const Jiffies now_j = jiffies_;
    const std::int64_t error_j = jiffies_diff(now_j, requested);
    const std::int64_t error_ns = static_cast<std::int64_t>(c.clock_ns) - jiffy_time_ns(requested);
    CpuMetrics& m = c.metrics;
    ++m.fired;
    m.error_jiffies.add(error_j);
    m.error_ns.add(error_ns);
    if (error_j < 0) ++m.early;
    if (c.remote_cpu != kNoRemoteCpu) {
        // 6.9 timer_expire_remote(): an idle CPU's global timer, run here.
        ++m.remote_expiries;
        ++cpus_[c.remote_cpu].metrics.expired_by_remote;
    }
    if (config_.error_us_histogram) m.error_us.add(error_ns >= 0 ? error_ns / 1000 : -((999 - error_ns) / 1000));
    // Its group as of now: the callback may re-arm it into another.
    const std::uint32_t group = books_[id].group;
    {
        GroupAccumulator& g = groups_[group];
        ++g.metrics.fired;
        g.add_error(error_j);
        if (error_j < 0) ++g.metrics.early;
    }
    if (events_) log_fire(c);
    std::uint64_t callback_ns = config_.costs.callback_ns;
    if (workload_) {
        const FireRecord record{id,         requested,  c.fired.expires,
                                now_j,      c.clock_ns, error_ns,
                                index_of(c), c.remote_cpu != kNoRemoteCpu ? c.remote_cpu : index_of(c)};
        workload_->on_fire(*this, record);
        if (const auto ns = workload_->callback_cost_ns(record)) callback_ns = *ns;
    }
    c.running_timer = kNoTimer;
    if (c.remote_cpu != kNoRemoteCpu) cpus_[c.remote_cpu].remote_running = kNoTimer;
    // The callback's own work (its re-arms) is charged here rather than with
    // the next step, so that it counts in this timer's group; the clock and
    // every total come out the same.
    charge_queue_work(c);
    charge(c, callback_ns);
    groups_[group].metrics.softirq_ns += c.clock_ns - c.step_start_ns;
}

template <TimerQueue Q>
void Engine<Q>::finish_run(CpuState& c) {
    c.in_softirq = false;
    c.phase = Phase::idle;
    c.now_ns = std::max(c.now_ns, c.clock_ns);
    if (c.started_by_end) {
        c.started_by_end = false;
        --runs_started_by_end_;
    }
    if (!c.ran_timers) return;
    const std::uint64_t duration = c.clock_ns - c.run_start_ns;
    CpuMetrics& m = c.metrics;
    m.softirq_ns.add(static_cast<std::int64_t>(duration));
    m.max_softirq_ns = std::max(m.max_softirq_ns, duration);
    m.max_expired_per_softirq =
        std::max(m.max_expired_per_softirq, c.queue->counters().expired - c.run_expired_before);
    m.max_cascade_moves_per_softirq =
        std::max(m.max_cascade_moves_per_softirq, c.queue->counters().cascade_moves - c.run_moves_before);
    if (config_.series_window_ticks) {
        SeriesPoint& p = series_[c.run_window];
        p.max_softirq_ns = std::max(p.max_softirq_ns, duration);
        p.add_run(duration);
    }
    if (events_) log_softirq(c, TimerEvent::softirq_end);
}

template <TimerQueue Q>
void Engine<Q>::charge_queue_work(CpuState& c) {
    const QueueCounters& k = c.queue->counters();
    const std::uint64_t work = work_ns(k);
    const std::uint64_t ns = work - c.work_mark + c.extra_ns;
    c.work_mark = work;
    c.extra_ns = 0;
    if (c.in_softirq && !series_.empty()) {
        SeriesPoint& p = series_[c.run_window];
        p.expired += k.expired - c.expired_mark;
        p.cascade_moves += k.cascade_moves - c.moves_mark;
    }
    c.expired_mark = k.expired;
    c.moves_mark = k.cascade_moves;
    charge(c, ns);
}

template <TimerQueue Q>
void Engine<Q>::nohz_idle_enter(CpuState& c) {
    // Not idle: softirq work pending (6.1 tick_nohz_next_event() keeps the
    // tick for local_timer_softirq_pending()) or ksoftirqd waiting to run.
    if (c.in_softirq || c.softirq.pending() != 0 || c.softirq.ksoftirqd_runnable()) return;
    // 6.1 tick_nohz_next_event() -> get_next_timer_interrupt(basej, basem).
    sync(c);
    const std::optional<Jiffies> next = idle_next_event(c);
    const Jiffies basej = jiffies_;
    const std::uint64_t base_index = basej - start_jiffies_;
    if (next && time_before_eq(*next, basej + 1)) {
        // The next event is at most one tick away: keep (or restart) the
        // tick, on the grid: 6.1 tick_nohz_restart() forwards it by whole
        // periods past now.
        if (c.tick_stopped) {
            set_tick_stopped(c, false);
            if constexpr (requires(Q& q) { q.clear_idle(); }) c.queue->clear_idle(); // timer_clear_idle()
            c.next_tick_index = std::max(base_index, tick_index_at(c.now_ns, config_.hz)) + 1;
            c.next_tick_ns = tick_at(c, c.next_tick_index);
        }
        return;
    }
    if (!c.tick_stopped) {
        set_tick_stopped(c, true);
        ++c.metrics.tick_stops;
    }
    // Sleep until the tick of the next timer's jiffy (deferrable timers do
    // not count), or until an action if there is none.
    if (next) {
        c.next_tick_index = *next - start_jiffies_;
        c.next_tick_ns = tick_at(c, c.next_tick_index);
    } else {
        c.next_tick_index = UINT64_MAX;
        c.next_tick_ns = UINT64_MAX;
    }
}

template <TimerQueue Q>
void Engine<Q>::set_tick_stopped(CpuState& c, bool stopped) noexcept {
    if (c.tick_stopped == stopped) return;
    c.tick_stopped = stopped;
    stopped ? ++stopped_ticks_ : --stopped_ticks_;
}

// The jiffy an idle CPU programs its wakeup for: its queue's
// next_timer_interrupt(). 6.9+ on the simulated machine, the pull model's
// stand-in (docs/machine.md): 6.9 tmigr_cpu_deactivate() takes the global
// base's next event into the hierarchy, so the CPU wakes for its local
// timers only; to the last CPU going idle it returns the hierarchy's first
// event, the earliest global event of every idle CPU, and that CPU wakes
// for it too (6.9 timer_use_tmigr() in get_next_timer_interrupt()). Woken,
// it is the migrator of every group (find_remote_targets()).
template <TimerQueue Q>
std::optional<Jiffies> Engine<Q>::idle_next_event(CpuState& c) {
    if constexpr (RemoteExpiry<Q>) {
        if (!config_.recorded) {
            const auto [local, global] = c.queue->next_timer_events();
            // Another CPU's tick runs: it is the migrator, not c.
            const auto ticking = static_cast<unsigned>(cpus_.size()) - stopped_ticks_;
            if (ticking > (c.tick_stopped ? 0u : 1u)) return local;
            std::optional<Jiffies> next = local;
            const auto take = [&](const std::optional<Jiffies>& e) {
                if (e && (!next || time_before(*e, *next))) next = e;
            };
            take(global);
            for (const CpuState& y : cpus_)
                if (&y != &c) take(y.queue->global_next_event());
            return next;
        }
    }
    return c.queue->next_timer_interrupt();
}

// --machine recorded (recorded_machine.hpp): the recording's CPU ran its
// TIMER_SOFTIRQ at this jiffy, at the run's own time in it, or the design's
// own due timer wakes it. A timer that should wake the CPU (the design's
// next_timer_interrupt(), 6.1 get_next_timer_interrupt(): deferrable timers
// do not count) waits for a recorded run up to the recording's longest wake
// delay; with none in that window the CPU wakes for it after the
// recording's median wake delay, late in the jiffy: the recording shows
// the CPU ran no timer softirq in it, so whatever its tasks did there (a
// schedule_timeout() sleeper cancelling its timer on an early wakeup) came
// first. Nor does it wake where the recording shows it held (a due timer
// of the kernel's own went unfired there until cancelled). The time to raise at (the tick's: now), or none.
template <TimerQueue Q>
std::optional<std::uint64_t> Engine<Q>::recorded_raise_time(CpuState& c) {
    const RecordedMachine& rec = *config_.recorded;
    const auto cpu = static_cast<unsigned>(&c - cpus_.data());
    const Jiffies j = jiffies_;
    if (const RecordedMachine::Run* run = rec.run_at(cpu, j)) {
        c.wake_due_since.reset();
        return run->time_ns == RecordedMachine::kNoTime ? c.last_tick_ns : std::max(run->time_ns, c.last_tick_ns);
    }
    // The recording's remote expiry run on this CPU, with an idle CPU's
    // global timer due: it ran TIMER_SOFTIRQ then, whatever its own bases
    // held; after the idle CPU's own run in this jiffy where the trace shows
    // that run first (the two raced for its global base, and it won).
    if constexpr (RemoteExpiry<Q>) {
        const std::span<const RecordedMachine::RemoteRun> remote = rec.remote_runs_at(cpu, j);
        if (!remote.empty() && remote_work_due(c)) {
            std::uint64_t at = c.last_tick_ns;
            for (const RecordedMachine::RemoteRun& r : remote) {
                const RecordedMachine::Run* own = r.after_own_run ? rec.run_at(r.cpu, j) : nullptr;
                if (own && own->time_ns != RecordedMachine::kNoTime) at = std::max(at, own->time_ns + 1);
            }
            return at;
        }
    }
    // Not a peek: as 6.1 get_next_timer_interrupt() on idle entry, it refreshes a stale next_expiry and forwards clk.
    const std::optional<Jiffies> next = c.queue->next_timer_interrupt();
    if (!next || time_after(*next, j)) {
        c.wake_due_since.reset();
        return std::nullopt;
    }
    // A wait is only as old as the ticks that found a timer due without a
    // break: a tick with nothing due, or none at all (the tick stopped),
    // since the last one means that timer went otherwise (fired remotely by
    // a migrator, cancelled), and this one is due from now.
    if (c.wake_due_since && time_after(j, c.wake_due_seen + 1)) c.wake_due_since.reset();
    if (!c.wake_due_since) c.wake_due_since = j;
    c.wake_due_seen = j;
    const Jiffies due = *c.wake_due_since;
    const Jiffies window = cpu < rec.wake_window.size() ? rec.wake_window[cpu] : 0;
    const Jiffies delay = cpu < rec.wake_delay.size() ? rec.wake_delay[cpu] : 0;
    if (rec.runs_within(cpu, due, due + window)) return std::nullopt; // the recorded CPU woke for it then
    // 6.9+: or a migrator is still to run this idle CPU's global base then.
    if constexpr (RemoteExpiry<Q>) {
        const Jiffies remote_window = std::max(window, rec.remote_wake_window_of(cpu));
        if (rec.remote_expired_within(cpu, time_after(j, due) ? j : due, due + remote_window)) return std::nullopt;
    }
    if (time_before(j, due + delay) || rec.held_at(cpu, j)) return std::nullopt;
    c.wake_due_since.reset();
    // Late in the jiffy, after what the replay places in it (ReplayTimes
    // keeps a jiffy's events before its last eighth), early enough that the
    // run's own work ends before the next tick.
    if (c.next_tick_ns == UINT64_MAX) return c.last_tick_ns;
    return std::max(c.last_tick_ns, c.next_tick_ns - (c.next_tick_ns - c.last_tick_ns) / 16);
}

// The raise recorded_raise_time() put later in the jiffy: the CPU's
// interrupt exit runs the softirq, as the tick's would have.
template <TimerQueue Q>
void Engine<Q>::recorded_raise(CpuState& c) {
    c.raise_at_ns = UINT64_MAX;
    c.softirq.raise(timer_softirq);
    if (c.softirq.irq_exit()) start_run(c, SoftirqContext::irq_exit, c.now_ns);
}

template <TimerQueue Q>
void Engine<Q>::nohz_wake(CpuState& c) {
    // 6.1 tick_nohz_irq_enter() -> tick_nohz_update_jiffies(): jiffies catches
    // up with the time that passed while the tick was stopped.
    advance_jiffies(c, start_jiffies_ + tick_index_at(c.now_ns, config_.hz));
    // Leaving idle: timer_clear_idle(). The tick stays stopped until
    // nohz_idle_enter() decides again.
    sync(c);
    if constexpr (requires(Q& q) { q.clear_idle(); }) c.queue->clear_idle();
}

} // namespace timersim
