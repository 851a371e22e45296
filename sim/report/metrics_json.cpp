#include "sim/report/metrics_json.hpp"

#include "sim/report/percentiles.hpp"

namespace timersim {

ordered_json log2_stats_json(const Log2Histogram& h, bool exact_max) {
    const bool known = !h.empty();
    ordered_json o = ordered_json::object();
    o["count"] = h.count();
    o["mean"] = json_or_null(known, h.mean());
    o["min"] = json_or_null(known, h.min());
    for (double p : kPercentiles)
        o[percentile_name(p)] = json_or_null(known, exact_max && p == 100 ? h.max() : h.percentile(p));
    return o;
}

ordered_json error_stats_json(const ErrorHistogram& h) {
    const bool known = !h.empty();
    ordered_json o = ordered_json::object();
    o["count"] = h.total();
    o["mean"] = json_or_null(known, h.mean());
    o["min"] = json_or_null(known, h.min());
    for (double p : kPercentiles) o[percentile_name(p)] = json_or_null(known, h.percentile(p));
    return o;
}

ordered_json error_histogram_json(const ErrorHistogram& h) {
    ordered_json bins = ordered_json::array();
    for (const auto& [value, count] : h.counts()) bins.push_back(ordered_json::array({value, count}));
    return bins;
}

ordered_json cost_model_json(const CostModel& k) {
    ordered_json o = ordered_json::object();
    o["enqueue"] = k.enqueue_ns;
    o["dequeue"] = k.dequeue_ns;
    o["cascade_move"] = k.cascade_move_ns;
    o["bucket_scan"] = k.bucket_scan_ns;
    o["expiry"] = k.expiry_ns;
    o["callback"] = k.callback_ns;
    o["next_expiry_step"] = k.next_expiry_step_ns;
    o["softirq_entry"] = k.softirq_entry_ns;
    return o;
}

ordered_json queue_counters_json(const QueueCounters& q) {
    ordered_json o = ordered_json::object();
    o["enqueues"] = q.enqueues;
    o["same_expiry_shortcuts"] = q.same_expiry_shortcuts;
    o["same_bucket_shortcuts"] = q.same_bucket_shortcuts;
    o["cancels"] = q.cancels;
    o["expired"] = q.expired;
    o["cascade_moves"] = q.cascade_moves;
    o["cascades"] = q.cascades;
    o["buckets_scanned"] = q.buckets_scanned;
    o["jiffies_walked"] = q.jiffies_walked;
    o["softirq_runs"] = q.softirq_runs;
    o["empty_runs"] = q.empty_runs;
    o["next_expiry_searches"] = q.next_expiry_searches;
    o["next_expiry_search_steps"] = q.next_expiry_search_steps;
    o["peak_pending"] = q.peak_pending;
    return o;
}

} // namespace timersim
