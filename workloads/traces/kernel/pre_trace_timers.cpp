#include "workloads/traces/kernel/pre_trace_timers.hpp"

namespace timersim {

void PreTraceTimers::timer_event(const FtraceEvent& e) {
    const auto [it, first] = seen_.try_emplace(e.timer);
    First& f = it->second;
    if (!first && f.decided) return;
    const CancelNeighbour here{e.type, e.timer, e.timestamp_ns, e.line_cpu};
    // First an expiry, or first a cancel that was its detach.
    if (e.type == FtraceEventType::timer_expire_entry && e.now && (first || detaches_for(f.cancel, here)))
        fires_.push_back(PreTraceFire{e.timer, *e.now, e.line_cpu, std::string(e.function), std::string(e.module)});
    f.decided = !first || e.type != FtraceEventType::timer_cancel;
    f.cancel = here;
}

} // namespace timersim
