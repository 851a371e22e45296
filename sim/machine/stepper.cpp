#include "sim/machine/stepper.hpp"

namespace timersim {

SoftirqCost cost_between(const QueueCounters& before, const QueueCounters& after) {
    SoftirqCost c;
    c.buckets_scanned = after.buckets_scanned - before.buckets_scanned;
    c.expired = after.expired - before.expired;
    c.cascades = after.cascades - before.cascades;
    c.cascade_moves = after.cascade_moves - before.cascade_moves;
    for (std::size_t l = 0; l < kMaxLevels; ++l)
        c.cascade_moves_from_level[l] = after.cascade_moves_from_level[l] - before.cascade_moves_from_level[l];
    c.jiffies_walked = after.jiffies_walked - before.jiffies_walked;
    c.empty_runs = after.empty_runs - before.empty_runs;
    c.next_expiry_searches = after.next_expiry_searches - before.next_expiry_searches;
    return c;
}

std::vector<std::string> timer_labels(const StepWorkload& w) {
    std::vector<std::string> labels;
    if (w.churn) {
        // The kinds are the first draws of the seed, so a throwaway generator names them.
        const ConnectionChurn churn(*w.churn, 0);
        for (std::uint32_t c = 0; c < churn.connections(); ++c) labels.emplace_back(to_string(churn.kind(c)));
    } else {
        for (const auto& t : w.texts) labels.push_back(t.size() <= 12 ? t : t.substr(0, 10) + "..");
        // A trace names its timers as it is read: see TraceFeed::labels().
    }
    return labels;
}

} // namespace timersim
