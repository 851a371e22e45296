#include "workloads/traces/kernel/kernel_fire_index.hpp"

#include <algorithm>

namespace timersim {

namespace {

bool now_before(Jiffies a, Jiffies b) noexcept { return time_before(a, b); }

} // namespace

KernelFireIndex::Record KernelFireIndex::record(const KernelFire& f, const std::optional<RecordedCallback>& callback,
                                                std::size_t at, std::unordered_map<std::size_t, Wide>& wide) {
    Record r{.now = f.now};
    const bool narrow = f.cpu < kWideCpu &&
                        (!callback || (callback->ns < kNoCallback && (!callback->ticks || *callback->ticks < kNoTicks)));
    if (!narrow) {
        r.cpu = kWideCpu;
        wide.emplace(at, Wide{f.cpu, callback});
        return r;
    }
    r.cpu = static_cast<std::uint16_t>(f.cpu);
    if (callback) {
        r.ns = static_cast<std::uint32_t>(callback->ns);
        if (callback->ticks) r.ticks = static_cast<std::uint16_t>(*callback->ticks);
    }
    return r;
}

KernelFireIndex::KernelFireIndex(const KernelFires& fires, const std::vector<std::string>& functions,
                                 const std::function<std::optional<std::uint32_t>(std::uint64_t)>& id_of,
                                 const KernelClock* clock, const std::vector<KernelLostWindow>& lost) {
    FireAgreement& a = kernel_side_;
    a.kernel_fires_total = fires.size();
    for (const KernelLostWindow& w : lost) {
        if (w.cpu >= lost_by_cpu_.size()) lost_by_cpu_.resize(std::size_t{w.cpu} + 1);
        lost_by_cpu_[w.cpu].push_back(w);
        a.lost_history.lines += w.lines;
        if (std::find(a.lost_history.cpus.begin(), a.lost_history.cpus.end(), w.cpu) == a.lost_history.cpus.end())
            a.lost_history.cpus.push_back(w.cpu);
    }
    std::sort(a.lost_history.cpus.begin(), a.lost_history.cpus.end());
    // First pass: the kernel-side figures, and how many fires each timer has.
    std::vector<std::size_t> count;
    for (const KernelFire& f : fires) {
        if (f.cpu >= a.kernel_fires_by_cpu.size()) a.kernel_fires_by_cpu.resize(std::size_t{f.cpu} + 1);
        ++a.kernel_fires_by_cpu[f.cpu];
        if (f.remote) ++a.kernel_remote_expiries;
        FireAgreement::KernelFunction* by_function = nullptr;
        if (f.function < functions.size()) {
            by_function = &a.kernel_by_function[functions[f.function]];
            ++by_function->fires;
        }
        if (const std::optional<Jiffies> requested = f.requested()) {
            const std::int64_t error = jiffies_diff(f.now, *requested);
            ++a.kernel_error_jiffies[error];
            if (by_function) ++by_function->error_jiffies[error];
        }
        const std::optional<std::uint32_t> id = id_of(f.timer);
        if (!id) {
            ++a.kernel_fires_unreplayable;
            continue;
        }
        if (f.after_lost) {
            ++a.lost_history.kernel_fires;
            continue;
        }
        if (*id >= count.size()) count.resize(std::size_t{*id} + 1, 0);
        ++count[*id];
        ++a.kernel_fires;
    }
    // Second pass: each fire into its timer's range, in trace order.
    first_.assign(count.size() + 1, 0);
    for (std::size_t t = 0; t < count.size(); ++t) first_[t + 1] = first_[t] + count[t];
    records_.resize(first_.back());
    std::vector<std::size_t> next(first_.begin(), first_.end() - 1);
    std::unordered_map<std::size_t, Wide> wide; // by position before the sort
    for (const KernelFire& f : fires) {
        const std::optional<std::uint32_t> id = id_of(f.timer);
        if (!id || f.after_lost) continue;
        const std::size_t at = next[*id]++;
        records_[at] = record(f, recorded_callback(f, clock), at, wide);
    }
    // In trace order `now` never goes back on one CPU; across CPUs it may:
    // each range sorted by now, stably. The side table follows its fires.
    std::vector<std::size_t> order;
    std::vector<Record> sorted;
    for (std::size_t t = 0; t + 1 < first_.size(); ++t) {
        const std::size_t from = first_[t], to = first_[t + 1];
        const auto by_now = [this](std::size_t x, std::size_t y) { return now_before(records_[x].now, records_[y].now); };
        order.resize(to - from);
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = from + i;
        if (std::is_sorted(order.begin(), order.end(), by_now)) {
            for (std::size_t i = from; i < to; ++i)
                if (const auto w = wide.find(i); w != wide.end()) wide_.emplace(i, w->second);
            continue;
        }
        std::stable_sort(order.begin(), order.end(), by_now);
        sorted.resize(order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            sorted[i] = records_[order[i]];
            if (const auto w = wide.find(order[i]); w != wide.end()) wide_.emplace(from + i, w->second);
        }
        std::copy(sorted.begin(), sorted.end(), records_.begin() + static_cast<std::ptrdiff_t>(from));
    }
}

KernelFireIndex::Range KernelFireIndex::of(std::uint32_t timer) const noexcept {
    if (std::size_t{timer} + 1 >= first_.size()) return {};
    return {first_[timer], first_[timer + 1]};
}

std::uint32_t KernelFireIndex::cpu_at(std::size_t i) const {
    const Record& r = records_[i];
    return r.cpu == kWideCpu ? wide_.at(i).cpu : r.cpu;
}

std::size_t KernelFireIndex::first_not_before(Range r, Jiffies j) const noexcept {
    const auto begin = records_.begin();
    return static_cast<std::size_t>(
        std::partition_point(begin + static_cast<std::ptrdiff_t>(r.first), begin + static_cast<std::ptrdiff_t>(r.last),
                             [j](const Record& x) { return now_before(x.now, j); }) -
        begin);
}

std::optional<RecordedCallback> KernelFireIndex::callback_at(std::size_t i) const {
    const Record& r = records_[i];
    if (r.cpu == kWideCpu) return wide_.at(i).callback;
    if (r.ns == kNoCallback) return std::nullopt;
    return RecordedCallback{r.now, r.ns, r.ticks == kNoTicks ? std::nullopt : std::optional<std::uint64_t>(r.ticks)};
}

std::optional<RecordedCallback> KernelFireIndex::nearest_callback(std::uint32_t timer, Jiffies fired) const {
    const Range r = of(timer);
    const std::size_t split = first_not_before(r, fired);
    // The first fire at or after `fired` with a callback, and the last before it.
    std::optional<RecordedCallback> after, below;
    for (std::size_t i = split; i < r.last && !after; ++i) after = callback_at(i);
    for (std::size_t i = split; i > r.first && !below; --i) below = callback_at(i - 1);
    if (!below) return after;
    if (!after) return below;
    return after->now - fired < fired - below->now ? after : below;
}

bool KernelFireIndex::in_lost_history(std::uint32_t cpu, Jiffies j) const noexcept {
    if (cpu >= lost_by_cpu_.size()) return false;
    const std::vector<KernelLostWindow>& windows = lost_by_cpu_[cpu];
    // The first window that does not end before j.
    const auto w = std::partition_point(windows.begin(), windows.end(), [j](const KernelLostWindow& x) {
        return x.to && time_before(*x.to, j);
    });
    return w != windows.end() && (!w->from || !time_before(j, *w->from));
}

void FireTally::replayed(std::uint32_t timer, Jiffies fired_jiffies, std::uint32_t cpu) {
    const KernelFireIndex::Range r = index_->of(timer);
    for (std::size_t i = index_->first_not_before(r, fired_jiffies); i < r.last && index_->now_at(i) == fired_jiffies;
         ++i) {
        if (matched_[i] || index_->cpu_at(i) != cpu) continue;
        matched_[i] = true;
        ++agreement_.replay_fires;
        ++agreement_.same_jiffy_cpu;
        return;
    }
    // A fire the kernel did not make, where the trace lost that CPU's
    // history: what would have explained it may be among the lost events.
    ++(index_->in_lost_history(cpu, fired_jiffies) ? agreement_.lost_history.replay_fires : agreement_.replay_fires);
}

} // namespace timersim
