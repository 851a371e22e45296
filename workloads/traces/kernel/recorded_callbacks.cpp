#include "workloads/traces/kernel/recorded_callbacks.hpp"

#include <algorithm>

namespace timersim {

RecordedCallbacks recorded_callbacks(const KernelFires& fires,
                                     const std::function<std::optional<std::uint32_t>(std::uint64_t)>& id_of,
                                     std::size_t timers, const KernelClock* clock) {
    RecordedCallbacks by_id(timers);
    for (const KernelFire& f : fires) {
        const std::optional<std::uint32_t> id = id_of(f.timer);
        const std::optional<std::uint64_t> callback_ns = f.callback_ns();
        if (!id || *id >= by_id.size() || !callback_ns) continue;
        RecordedCallback r{f.now, *callback_ns, std::nullopt};
        if (const std::optional<Jiffies> next = f.next_in_run()) {
            r.ticks = time_after(*next, f.now) ? *next - f.now : 0;
        } else if (clock) {
            const Jiffies after = clock->jiffies_at(f.entry_ns + *callback_ns);
            r.ticks = time_after(after, f.now) ? after - f.now : 0;
        }
        by_id[*id].push_back(r);
    }
    // In trace order `now` never goes back on one CPU; across CPUs it may.
    for (auto& r : by_id)
        std::stable_sort(r.begin(), r.end(),
                         [](const RecordedCallback& a, const RecordedCallback& b) { return time_before(a.now, b.now); });
    return by_id;
}

const RecordedCallback* nearest_recorded_callback(const std::vector<RecordedCallback>& callbacks, Jiffies fired) {
    if (callbacks.empty()) return nullptr;
    const auto after = std::partition_point(callbacks.begin(), callbacks.end(),
                                            [fired](const RecordedCallback& f) { return time_before(f.now, fired); });
    if (after == callbacks.begin()) return &*after;
    if (after == callbacks.end()) return &*(after - 1);
    const Jiffies below = fired - (after - 1)->now;
    const Jiffies above = after->now - fired;
    return above < below ? &*after : &*(after - 1);
}

std::uint64_t callback_on_grid(const RecordedCallback& callback, std::uint64_t start_ns, Jiffies start_jiffies,
                               Jiffies jiffies, unsigned hz) {
    if (!callback.ticks) return callback.ns;
    const std::uint64_t k = *callback.ticks;
    const std::uint64_t n = jiffies - start_jiffies;
    const std::uint64_t margin = (tick_time_ns(n + 1, hz) - tick_time_ns(n, hz)) / 16;
    const std::uint64_t reach = tick_time_ns(n + k, hz); // the tick that makes jiffies + k
    const std::uint64_t lo = k && reach > start_ns ? reach - start_ns : 0;
    const std::uint64_t before_next = tick_time_ns(n + k + 1, hz);
    const std::uint64_t hi = before_next > start_ns + margin ? before_next - start_ns - margin : 0;
    return std::clamp(callback.ns, lo, std::max(lo, hi));
}

} // namespace timersim
