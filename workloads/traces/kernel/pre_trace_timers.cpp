#include "workloads/traces/kernel/pre_trace_timers.hpp"

namespace timersim {

void PreTraceTimers::timer_event(const FtraceEvent& e) {
    const auto [it, first] = seen_.try_emplace(e.timer, First::decided);
    const bool after_cancel = !first && it->second == First::cancel;
    if (!first && !after_cancel) return;
    if (e.type == FtraceEventType::timer_expire_entry && e.now) {
        fires_.push_back(PreTraceFire{e.timer, *e.now, e.line_cpu, std::string(e.function), std::string(e.module)});
        it->second = First::decided;
        return;
    }
    // A first cancel is the detach of an expiry only if the entry follows.
    it->second = first && e.type == FtraceEventType::timer_cancel ? First::cancel : First::decided;
}

} // namespace timersim
