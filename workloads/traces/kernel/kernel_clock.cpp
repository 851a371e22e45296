#include "workloads/traces/kernel/kernel_clock.hpp"

#include <algorithm>

namespace timersim {

namespace {

// Whole ticks in `ns` at `hz`.
std::uint64_t ticks_in(std::uint64_t ns, unsigned hz) noexcept {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(ns) * hz / 1'000'000'000u);
}

} // namespace

KernelClock::KernelClock(std::vector<JiffiesSample> samples, unsigned hz) : samples_(std::move(samples)), hz_(hz) {
    std::stable_sort(samples_.begin(), samples_.end(),
                     [](const JiffiesSample& a, const JiffiesSample& b) { return a.time_ns < b.time_ns; });
    // jiffies is one global counter: a sample printed after a later one
    // (another CPU's skew) says no less than what was seen before.
    for (std::size_t i = 1; i < samples_.size(); ++i)
        samples_[i].jiffies = std::max(samples_[i].jiffies, samples_[i - 1].jiffies);
}

Jiffies KernelClock::jiffies_at(std::uint64_t t) const noexcept {
    if (samples_.empty()) return 0;
    const auto after = std::upper_bound(samples_.begin(), samples_.end(), t,
                                        [](std::uint64_t time, const JiffiesSample& s) { return time < s.time_ns; });
    if (after == samples_.begin()) return after->jiffies - std::min(after->jiffies, ticks_in(after->time_ns - t, hz_));
    const JiffiesSample& last = *(after - 1);
    const Jiffies advanced = last.jiffies + ticks_in(t - last.time_ns, hz_);
    return after == samples_.end() ? advanced : std::min(advanced, after->jiffies);
}

ReplayTimes::ReplayTimes(const KernelClock& clock, std::uint64_t first_timestamp_ns)
    : clock_(&clock), start_(clock.jiffies_at(first_timestamp_ns)) {}

// Where a jiffy's first event goes: an eighth of the way through the tick.
// A task's timer call at jiffy J runs after the tick that made J and after
// that tick's softirq on its CPU (6.1 irq_exit() -> __irq_exit_rcu() ->
// invoke_softirq() runs it before returning to the task), so it must not land inside the replay's softirq
// run of that tick either, which starts at the tick and lasts microseconds.
// Not later: the jiffy's other events follow at the trace's own spacing,
// and a busy jiffy's events span milliseconds (6.1 capture, jiffy
// 4294896531: 2.8 ms of a 4 ms tick). Placed half way, its last events
// were squeezed 1 ns apart at the spacing's limit, and a costed softirq
// run reached a fire after an arm the kernel made after it.
std::uint64_t ReplayTimes::settle(std::uint64_t begin, std::uint64_t end) noexcept { return begin + (end - begin) / 8; }

std::uint64_t ReplayTimes::next(std::uint64_t t, std::optional<Jiffies> known) noexcept {
    const unsigned hz = clock_->hz();
    // Never before the jiffy of the event before it: the replay keeps the
    // trace's order.
    const Jiffies j = std::max({known.value_or(clock_->jiffies_at(t)), start_, start_ + last_tick_});
    const std::uint64_t tick = j - start_;
    const std::uint64_t begin = tick_time_ns(tick, hz);
    const std::uint64_t end = tick_time_ns(tick + 1, hz); // the next tick: stay before it
    if (!any_ || tick != last_tick_) {
        tick_first_ts_ = t;
        last_tick_ = tick;
        any_ = true;
        last_time_ = std::max(last_time_, settle(begin, end));
        return last_time_;
    }
    // Within the jiffy, the trace's spacing from its first event, kept in
    // order and apart: events of two CPUs, or an event and a recorded
    // softirq run, at one replay time would be ordered by kind, not as
    // traced. Spacing stops an eighth of a tick before the next tick, so
    // that later events still find room one nanosecond apart.
    const std::uint64_t room = (end - begin) / 8;
    const std::uint64_t spaced = std::min(settle(begin, end) + (t - std::min(t, tick_first_ts_)), end - 1 - room);
    last_time_ = std::min(std::max(last_time_ + 1, spaced), end - 1);
    return last_time_;
}

} // namespace timersim
