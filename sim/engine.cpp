#include "sim/engine.hpp"

namespace timersim {

namespace {

bool same_counters(const QueueCounters& a, const QueueCounters& b) {
    return a.arms == b.arms && a.enqueues == b.enqueues && a.same_expiry_shortcuts == b.same_expiry_shortcuts &&
           a.same_bucket_shortcuts == b.same_bucket_shortcuts && a.cancels == b.cancels && a.expired == b.expired &&
           a.cascade_moves == b.cascade_moves && a.cascade_moves_from_level == b.cascade_moves_from_level &&
           a.cascades == b.cascades && a.buckets_scanned == b.buckets_scanned &&
           a.jiffies_walked == b.jiffies_walked && a.softirq_runs == b.softirq_runs && a.empty_runs == b.empty_runs &&
           a.next_expiry_searches == b.next_expiry_searches &&
           a.next_expiry_search_steps == b.next_expiry_search_steps && a.peak_pending == b.peak_pending;
}

} // namespace

bool CpuMetrics::operator==(const CpuMetrics& o) const {
    return error_jiffies.counts() == o.error_jiffies.counts() && error_ns == o.error_ns && early == o.early &&
           softirq_ns == o.softirq_ns && max_softirq_ns == o.max_softirq_ns &&
           max_expired_per_softirq == o.max_expired_per_softirq &&
           max_cascade_moves_per_softirq == o.max_cascade_moves_per_softirq &&
           softirq_work_ns == o.softirq_work_ns && task_work_ns == o.task_work_ns && arms == o.arms &&
           rearm_dequeues == o.rearm_dequeues && fired == o.fired && cancelled == o.cancelled &&
           pending == o.pending && ticks == o.ticks && ticks_raised == o.ticks_raised &&
           ticks_not_raised == o.ticks_not_raised && ticks_in_softirq == o.ticks_in_softirq &&
           actions_delayed == o.actions_delayed && tick_stops == o.tick_stops &&
           wakeups_by_timer == o.wakeups_by_timer && wakeups_by_action == o.wakeups_by_action &&
           ticks_skipped == o.ticks_skipped && max_jiffies_jump == o.max_jiffies_jump && softirq == o.softirq && same_counters(counters, o.counters);
}

} // namespace timersim
