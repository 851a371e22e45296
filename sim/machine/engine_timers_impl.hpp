// Engine, the implementation of its timers: arm, cancel and arm_on (the
// one-CPU fast path and the general one that moves a timer between CPUs),
// timers' nodes and groups, the kick of a sleeping CPU, and the prefetch
// hints of the coming actions and fires. The rules are those of
// engine_impl.hpp's opening comment. Included only by engine.cpp.
#pragma once

#include "sim/machine/engine_impl.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace timersim {

// The queue's arm() as one inlined body where the queue offers it (the
// kernel wheels' arm_inlined()): Engine::arm is flattened, so a frame of the
// queue's own would only add a call.
template <TimerQueue Q>
[[gnu::always_inline]] inline ArmOutcome arm_queue(Q& q, TimerId id, Jiffies expires, ArmCall call) {
    if constexpr (requires { q.arm_inlined(id, expires, call); }) return q.arm_inlined(id, expires, call);
    else return q.arm(id, expires, call);
}

// The call that queues a timer arm_detach() took off another CPU, or
// arm_on() queues on one: no slack (classic applied it, or add_timer_on()
// applies none), so mod_timer_pinned; where the call picks the base (6.9+:
// TIMER_PINNED picks BASE_LOCAL), the original call, a pending one's as a
// mod_timer() (the timer was pending, or it would not move).
template <TimerQueue Q>
ArmCall moved_call(ArmCall call) {
    if constexpr (requires { Q::kPinnedPicksBase; })
        return call == ArmCall::mod_timer_pending ? ArmCall::mod_timer : call;
    else return ArmCall::mod_timer_pinned;
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm(TimerId id, Jiffies expires, ArmCall call) {
    if (fast_) [[likely]] {
        // One CPU and no event log: the id is the node's and the queue
        // checks it; no lookup on the way (every single-CPU run's hot path).
        if (id >= timers_.size()) [[unlikely]] no_such_timer(id);
        CpuState& c = cpus_[0];
        ++c.metrics.arms;
        const bool was_pending = c.queue->is_pending(id);
        const ArmOutcome outcome = arm_queue(*c.queue, id, expires, call);
        if (outcome != ArmOutcome::not_pending) books_[id].set_requested(expires);
        if (was_pending && outcome == ArmOutcome::queued) {
            ++c.metrics.rearm_dequeues;
            c.extra_ns += config_.costs.dequeue_ns;
        }
        ++groups_[books_[id].group].metrics.arms; // by function: fast_ is only set then
        return outcome;
    }
    return arm_general(id, expires, call);
}

template <TimerQueue Q>
bool Engine<Q>::cancel(TimerId id) {
    if (fast_) [[likely]] {
        if (id >= timers_.size()) [[unlikely]] no_such_timer(id);
        CpuState& c = cpus_[0];
        const bool removed = c.queue->cancel(id);
        if (removed) {
            ++c.metrics.cancelled;
            ++groups_[books_[id].group].metrics.cancelled;
        }
        return removed;
    }
    return cancel_general(id);
}

// The engine's own record of timer `id` that an arm, cancel or fire reads:
// its requested expiry and its group (TimerBook).
template <TimerQueue Q>
void Engine<Q>::prefetch_records(TimerId id) const noexcept {
    const char* book = reinterpret_cast<const char*>(&books_[id]);
    __builtin_prefetch(book, 1);
    __builtin_prefetch(book + sizeof(TimerBook) - 1, 1);
}

// Only the one-CPU path, where the timer's id is its node's: with several
// CPUs the node is found through the timer's slot, itself a miss.
template <TimerQueue Q>
void Engine<Q>::prefetch_timer(TimerId id) {
    if (!fast_ || id >= books_.size()) return;
    prefetch_records(id);
    if constexpr (requires(const Q& q) { q.prefetch(id); }) cpus_[0].queue->prefetch(id);
}

// A fire a few expiries on (FiredTimer::ahead): what run_callback() and the
// workload's on_fire will read for it, fetched now so that those misses
// overlap this fire's work. One CPU only, where the queue's id is the
// timer's. Hints only: nothing here changes the run.
template <TimerQueue Q>
void Engine<Q>::prefetch_fire(TimerId id) {
    if (!single_ || id >= books_.size()) return;
    prefetch_records(id);
    if (workload_) workload_->prefetch_fire(id);
}

template <TimerQueue Q>
void Engine<Q>::prefetch_action(const QueuedAction& action) {
    switch (action.kind) {
    case Action::Kind::arm:
    case Action::Kind::cancel: prefetch_timer(action.timer); break;
    case Action::Kind::call:
        if (workload_) workload_->prefetch_action(*this, action.tag());
        break;
    }
}

// An arm counts in the group the timer is in after it: by function its
// label's; by cpu the base that holds it (`base`); by level the level its
// node `node` was queued at (an arm that left it idle: the group it had).
// By function (every run's default) this is two loads and an increment
// (arm()'s fast path has it inline); the others move the timer's group
// first, out of line.
template <TimerQueue Q>
inline void Engine<Q>::count_arm(TimerId id, unsigned base, TimerId node) {
    if (config_.group_by != GroupBy::function) [[unlikely]] regroup(id, base, node);
    ++groups_[books_[id].group].metrics.arms;
}

template <TimerQueue Q>
void Engine<Q>::regroup(TimerId id, unsigned base, TimerId node) {
    if (config_.group_by == GroupBy::cpu) {
        books_[id].group = base;
        return;
    }
    if (config_.group_by == GroupBy::base) {
        // 6.9 get_timer_cpu_base(): the base the arm left it on.
        if constexpr (requires(const Q& q) { q.base_of(node); }) {
            books_[id].group = cpus_[base].queue->base_of(node);
        } else {
            // One base but 6.1's BASE_DEF; an arm that left it idle keeps
            // the deferrable group it had, else it is the standard base's.
            const Placement p = cpus_[base].queue->placement(node);
            const bool deferrable = p.pending ? p.deferrable_base : books_[id].group == kBaseDeferrable;
            books_[id].group = deferrable ? kBaseDeferrable : kBaseGlobal;
        }
        return;
    }
    const Placement p = cpus_[base].queue->placement(node);
    if (p.pending) books_[id].group = p.level;
}

template <TimerQueue Q>
TimerId Engine<Q>::create_timer(TimerFlags flags) {
    if (single_) {
        // One CPU: the node now, and its id is the timer's.
        const TimerId id = cpus_[0].queue->create(flags);
        if (id >= timers_.size()) {
            timers_.resize(std::size_t{id} + 1);
            books_.resize(std::size_t{id} + 1);
        }
        timers_[id] = TimerSlot{.node = id, .cpu = 0, .deferrable = flags.deferrable, .live = true};
        books_[id] = TimerBook{};
        return id;
    }
    if (timers_.size() >= kNoTimer) throw std::length_error("too many timers");
    const auto id = static_cast<TimerId>(timers_.size());
    timers_.push_back(TimerSlot{.deferrable = flags.deferrable, .live = true});
    books_.emplace_back();
    return id;
}

template <TimerQueue Q>
void Engine<Q>::label_timer(TimerId id, std::string_view label) {
    slot(id); // throws for no such timer
    if (config_.group_by != GroupBy::function) return;
    // Generators label their timers one after another with the same name:
    // the last one is tried before the map.
    std::uint32_t g = 0;
    if (label_names_.size() > 1 && label_names_.back() == label) {
        g = static_cast<std::uint32_t>(label_names_.size() - 1);
    } else {
        const auto [it, added] = label_groups_.try_emplace(std::string(label), static_cast<std::uint32_t>(label_names_.size()));
        if (added) {
            label_names_.emplace_back(label);
            groups_.emplace_back();
        }
        g = it->second;
    }
    books_[id].group = g;
}

template <TimerQueue Q>
GroupTable Engine<Q>::group_table() const {
    GroupTable t;
    t.by = config_.group_by;
    t.no_levels = config_.group_by == GroupBy::level && !kHasBuckets;
    std::uint64_t softirq_ns = 0;
    for (const CpuState& c : cpus_) softirq_ns += c.metrics.softirq_work_ns;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        const GroupMetrics m = groups_[g].result();
        softirq_ns -= m.softirq_ns;
        if (m.empty()) continue;
        std::string name;
        switch (config_.group_by) {
        case GroupBy::function: name = label_names_[g]; break;
        case GroupBy::cpu: name = std::to_string(g); break;
        case GroupBy::level:
            // The queue's own numbering: classic tv1..tv5, modern level 0..8.
            name = !kHasBuckets                         ? std::string("none (heap)")
                   : Q::name == std::string_view("classic") ? "tv" + std::to_string(g)
                                                            : "level " + std::to_string(g);
            break;
        case GroupBy::base:
            if constexpr (requires(const Q& q) { q.base_of(TimerId{}); })
                name = g == kBaseLocal ? "local (pinned)" : g == kBaseGlobal ? "global" : "deferrable";
            else
                name = g == kBaseDeferrable ? "deferrable" : "standard";
            break;
        }
        t.names.push_back(std::move(name));
        t.groups.push_back(m);
    }
    t.unattributed_softirq_ns = softirq_ns;
    return t;
}

template <TimerQueue Q>
void Engine<Q>::reserve_timers(std::size_t n) {
    timers_.reserve(n);
    books_.reserve(n);
    if (single_) cpus_[0].queue->reserve(n); // with one CPU every node lives there
}

template <TimerQueue Q>
TimerId Engine<Q>::home_on(TimerId id, unsigned cpu) {
    TimerSlot& t = timers_[id];
    if (t.node != kNoTimer) {
        if (t.cpu == cpu) return t.node;
        cpus_[t.cpu].queue->destroy(t.node); // not pending: only frees the slot
    }
    CpuState& c = cpus_[cpu];
    t.node = c.queue->create(TimerFlags{.deferrable = t.deferrable});
    t.cpu = static_cast<std::uint16_t>(cpu);
    if (t.node >= c.timer_of.size()) c.timer_of.resize(std::size_t{t.node} + 1, kNoTimer);
    c.timer_of[t.node] = id;
    return t.node;
}

template <TimerQueue Q>
void Engine<Q>::maybe_kick(unsigned cpu, TimerId id) {
    CpuState& d = cpus_[cpu];
    if (!config_.nohz_idle || !d.tick_stopped || d.in_softirq || timers_[id].deferrable) return;
    // 6.1 only kicks when the timer is the base's new first event; the
    // engine asks whether it comes before the sleeping CPU's wakeup.
    const Jiffies at = d.queue->placement(timers_[id].node).bucket_expiry;
    if (d.next_tick_ns != UINT64_MAX && !time_before(at, start_jiffies_ + d.next_tick_index)) return;
    ++d.metrics.wakeups_by_remote;
    d.now_ns = std::max(d.now_ns, now_ns());
    nohz_wake(d);
    nohz_idle_enter(d);
    update_key(cpu);
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm_in_place(unsigned base, TimerId id, TimerId node, Jiffies expires, ArmCall call) {
    CpuState& home = cpus_[base];
    CpuState& me = cpus_[current_cpu_];
    const bool was_pending = home.queue->is_pending(node);
    const Placement was = events_ && was_pending ? home.queue->placement(node) : Placement{};
    const ArmOutcome outcome = remote(home, [&] { return home.queue->arm(node, expires, call); });
    if (outcome != ArmOutcome::not_pending) books_[id].set_requested(expires);
    if (was_pending && outcome == ArmOutcome::queued) {
        ++me.metrics.rearm_dequeues;
        me.extra_ns += config_.costs.dequeue_ns;
    }
    // Outside the softirq the work is charged lazily (to task work) when the
    // next softirq starts or the metrics are read.
    if (events_ && outcome == ArmOutcome::queued) {
        if (was_pending) log_cancel(base, id, was);
        log_enqueue(base, id, node);
    }
    count_arm(id, base, node);
    return outcome;
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm_general(TimerId id, Jiffies expires, ArmCall call) {
    if (single_) {
        if (id >= timers_.size()) no_such_timer(id);
        ++cpus_[0].metrics.arms;
        return arm_in_place(0, id, id, expires, call);
    }
    TimerSlot& t = slot(id);
    const unsigned cpu = current_cpu_;
    CpuState& me = cpus_[cpu];
    ++me.metrics.arms;
    if (t.node == kNoTimer) home_on(id, cpu); // first arm: the node is made here
    CpuState& home = cpus_[t.cpu];
    sync(home);
    // Stays where it is: on this CPU already, or its callback is running there.
    // (A remote expiry's callback runs on the migrator, the timer stays on
    // the idle CPU's base: 6.9 __mod_timer() checks base->running_timer.)
    if (t.cpu == cpu || home.running_timer == id || home.remote_running == id)
        return arm_in_place(t.cpu, id, t.node, expires, call);
    // On another CPU: its own base decides whether it stays (shortcuts),
    // otherwise it leaves that base and is queued on this one.
    const TimerId node = t.node;
    const bool was_pending = home.queue->is_pending(node);
    const Placement was = events_ && was_pending ? home.queue->placement(node) : Placement{};
    Jiffies e = expires;
    const ArmOutcome first = remote(home, [&] { return home.queue->arm_detach(node, e, call); });
    if (first != ArmOutcome::queued) {
        if (first != ArmOutcome::not_pending) books_[id].set_requested(expires);
        count_arm(id, t.cpu, node);
        return first;
    }
    if (was_pending) {
        ++me.metrics.rearm_dequeues;
        me.extra_ns += config_.costs.dequeue_ns;
        if (events_) log_cancel(t.cpu, id, was);
    }
    const TimerId here = home_on(id, cpu);
    sync(me);
    me.queue->arm(here, e, moved_call<Q>(call)); // slack already applied
    books_[id].set_requested(expires);
    if (events_) log_enqueue(cpu, id, here);
    count_arm(id, cpu, here);
    return ArmOutcome::queued;
}

template <TimerQueue Q>
ArmOutcome Engine<Q>::arm_on(TimerId id, Jiffies expires, unsigned cpu, ArmCall call) {
    if (cpu >= cpus_.size())
        throw std::invalid_argument("arm_on: no CPU " + std::to_string(cpu) + " on a machine with " +
                                    std::to_string(cpus_.size()) + " CPUs");
    TimerSlot& t = slot(id);
    ++cpus_[current_cpu_].metrics.arms;
    // add_timer_on() BUG()s on a pending timer; a caller would del_timer() first.
    if (t.node != kNoTimer && cpus_[t.cpu].queue->is_pending(t.node)) cancel(id);
    const TimerId node = home_on(id, cpu);
    CpuState& target = cpus_[cpu];
    sync(target);
    // 4.x and 6.1 add_timer_on(): internal_add_timer() on that base, no
    // slack. 6.9+: the call picks the base (Sim::arm_on()).
    const ArmOutcome outcome = remote(target, [&] { return target.queue->arm(node, expires, moved_call<Q>(call)); });
    books_[id].set_requested(expires);
    if (events_) log_enqueue(cpu, id, node);
    count_arm(id, cpu, node);
    if (cpu != current_cpu_) maybe_kick(cpu, id);
    return outcome;
}

template <TimerQueue Q>
bool Engine<Q>::cancel_general(TimerId id) {
    TimerId node = id;
    unsigned base = 0;
    if (!single_) {
        const TimerSlot& t = slot(id);
        if (t.node == kNoTimer) return false;
        node = t.node;
        base = t.cpu;
    } else if (id >= timers_.size()) [[unlikely]] {
        no_such_timer(id);
    }
    CpuState& home = cpus_[base];
    sync(home);
    const Placement was = events_ && home.queue->is_pending(node) ? home.queue->placement(node) : Placement{};
    const bool removed = remote(home, [&] { return home.queue->cancel(node); });
    if (removed) {
        ++cpus_[current_cpu_].metrics.cancelled;
        ++groups_[books_[id].group].metrics.cancelled;
        if (events_) log_cancel(base, id, was);
    }
    return removed;
}

} // namespace timersim
