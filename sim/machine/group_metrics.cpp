#include "sim/machine/group_metrics.hpp"

namespace timersim {

std::string_view to_string(GroupBy by) {
    switch (by) {
    case GroupBy::function: return "function";
    case GroupBy::cpu: return "cpu";
    case GroupBy::level: return "level";
    case GroupBy::base: return "base";
    }
    return "?";
}

std::optional<GroupBy> group_by_from_string(std::string_view name) {
    for (GroupBy by : {GroupBy::function, GroupBy::cpu, GroupBy::level, GroupBy::base})
        if (name == to_string(by)) return by;
    return std::nullopt;
}

void GroupMetrics::merge(const GroupMetrics& o) {
    arms += o.arms;
    fired += o.fired;
    cancelled += o.cancelled;
    early += o.early;
    error_jiffies.merge(o.error_jiffies);
    softirq_ns += o.softirq_ns;
}

GroupMetrics GroupAccumulator::result() const {
    GroupMetrics m = metrics;
    for (std::int64_t e = 0; e < kDense; ++e) m.error_jiffies.add(e, dense[static_cast<std::size_t>(e)]);
    return m;
}

} // namespace timersim
