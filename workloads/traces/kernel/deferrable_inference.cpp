#include "workloads/traces/kernel/deferrable_inference.hpp"

#include <algorithm>

namespace timersim {

void DeferrableInference::timer_event(const FtraceEvent& e) {
    if (e.type == FtraceEventType::timer_start) {
        if (e.flags_known) return;
        Timer& t = timers_[e.timer];
        // Due at its expires, or at once (the next run) if that had passed:
        // [timeout=] is expires - jiffies at the call.
        const Jiffies at_call = e.expires - static_cast<Jiffies>(e.timeout);
        t.due = e.timeout < 0 ? at_call : e.expires;
        t.started = true;
        return;
    }
    if (e.type != FtraceEventType::timer_expire_entry || !e.now) return;
    const auto it = timers_.find(e.timer);
    if (it == timers_.end() || !it->second.started) return;
    Timer& t = it->second;
    t.started = false;
    if (jiffies_diff(*e.now, t.due) >= static_cast<std::int64_t>(kLateJiffies)) t.late = true;
}

std::vector<std::uint64_t> DeferrableInference::timers() const {
    std::vector<std::uint64_t> late;
    for (const auto& [pointer, t] : timers_)
        if (t.late) late.push_back(pointer);
    std::sort(late.begin(), late.end());
    return late;
}

} // namespace timersim
