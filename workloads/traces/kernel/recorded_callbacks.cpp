#include "workloads/traces/kernel/recorded_callbacks.hpp"

#include <algorithm>

namespace timersim {

std::optional<RecordedCallback> recorded_callback(const KernelFire& f, const KernelClock* clock) {
    const std::optional<std::uint64_t> callback_ns = f.callback_ns();
    if (!callback_ns) return std::nullopt;
    RecordedCallback r{f.now, *callback_ns, std::nullopt};
    if (const std::optional<Jiffies> next = f.next_in_run()) {
        r.ticks = time_after(*next, f.now) ? *next - f.now : 0;
    } else if (clock) {
        const Jiffies after = clock->jiffies_at(f.entry_ns + *callback_ns);
        r.ticks = time_after(after, f.now) ? after - f.now : 0;
    }
    return r;
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
