#include "workloads/traces/kernel/kernel_fires.hpp"

namespace timersim {

void KernelFireCollector::timer_event(const FtraceEvent& e) {
    // 6.1 call_timer_fn(): trace_timer_expire_entry(timer, baseclk) prints
    // now=jiffies as the callback starts, on the CPU running the softirq.
    if (e.type == FtraceEventType::timer_start) deferrable_[e.timer] = (e.flags & kFtraceDeferrable) != 0;
    if (e.type == FtraceEventType::timer_expire_entry && e.now) {
        const auto d = deferrable_.find(e.timer);
        fires_.push_back({e.timer, *e.now, e.line_cpu, e.baseclk, d != deferrable_.end() && d->second});
    }
    if (next_) next_->timer_event(e);
}

void KernelFireCollector::timer_softirq(const FtraceTimerSoftirq& e) {
    if (next_) next_->timer_softirq(e);
}

FireTally::FireTally(const std::vector<KernelFire>& fires,
                     const std::function<std::optional<std::uint32_t>(std::uint64_t)>& id_of) {
    for (const KernelFire& f : fires) {
        const std::optional<std::uint32_t> id = id_of(f.timer);
        if (!id) {
            ++agreement_.kernel_fires_unreplayable;
            continue;
        }
        ++unmatched_[Key{*id, f.cpu, f.now}];
        ++agreement_.kernel_fires;
    }
}

void FireTally::replayed(std::uint32_t timer, Jiffies fired_jiffies, std::uint32_t cpu) {
    ++agreement_.replay_fires;
    const auto it = unmatched_.find(Key{timer, cpu, fired_jiffies});
    if (it == unmatched_.end() || it->second == 0) return;
    --it->second;
    ++agreement_.same_jiffy_cpu;
}

} // namespace timersim
