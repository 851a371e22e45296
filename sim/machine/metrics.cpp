#include "sim/machine/metrics.hpp"

#include <algorithm>

namespace timersim {

void CpuMetrics::merge(const CpuMetrics& o) {
    error_jiffies.merge(o.error_jiffies);
    error_ns.merge(o.error_ns);
    early += o.early;
    error_us.merge(o.error_us);
    softirq_ns.merge(o.softirq_ns);
    max_softirq_ns = std::max(max_softirq_ns, o.max_softirq_ns);
    max_expired_per_softirq = std::max(max_expired_per_softirq, o.max_expired_per_softirq);
    max_cascade_moves_per_softirq = std::max(max_cascade_moves_per_softirq, o.max_cascade_moves_per_softirq);
    softirq_work_ns += o.softirq_work_ns;
    task_work_ns += o.task_work_ns;
    arms += o.arms;
    rearm_dequeues += o.rearm_dequeues;
    fired += o.fired;
    cancelled += o.cancelled;
    pending += o.pending;
    ticks += o.ticks;
    ticks_raised += o.ticks_raised;
    ticks_not_raised += o.ticks_not_raised;
    ticks_in_softirq += o.ticks_in_softirq;
    actions_delayed += o.actions_delayed;
    tick_stops += o.tick_stops;
    wakeups_by_timer += o.wakeups_by_timer;
    wakeups_by_action += o.wakeups_by_action;
    wakeups_by_remote += o.wakeups_by_remote;
    ticks_skipped += o.ticks_skipped;
    max_jiffies_jump = std::max(max_jiffies_jump, o.max_jiffies_jump);
    softirq.merge(o.softirq);
    counters.merge(o.counters);
}

bool CpuMetrics::operator==(const CpuMetrics& o) const {
    return error_jiffies.counts() == o.error_jiffies.counts() && error_ns == o.error_ns && early == o.early &&
           error_us.counts() == o.error_us.counts() &&
           softirq_ns == o.softirq_ns && max_softirq_ns == o.max_softirq_ns &&
           max_expired_per_softirq == o.max_expired_per_softirq &&
           max_cascade_moves_per_softirq == o.max_cascade_moves_per_softirq &&
           softirq_work_ns == o.softirq_work_ns && task_work_ns == o.task_work_ns && arms == o.arms &&
           rearm_dequeues == o.rearm_dequeues && fired == o.fired && cancelled == o.cancelled &&
           pending == o.pending && ticks == o.ticks && ticks_raised == o.ticks_raised &&
           ticks_not_raised == o.ticks_not_raised && ticks_in_softirq == o.ticks_in_softirq &&
           actions_delayed == o.actions_delayed && tick_stops == o.tick_stops &&
           wakeups_by_timer == o.wakeups_by_timer && wakeups_by_action == o.wakeups_by_action &&
           wakeups_by_remote == o.wakeups_by_remote && ticks_skipped == o.ticks_skipped &&
           max_jiffies_jump == o.max_jiffies_jump && softirq == o.softirq && counters == o.counters;
}

} // namespace timersim
