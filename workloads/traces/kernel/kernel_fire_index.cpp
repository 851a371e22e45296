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
                                 const KernelClock* clock, const std::vector<KernelLostLine>& lost,
                                 const LostHistoryClasses* classes) {
    FireAgreement& a = kernel_side_;
    a.kernel_fires_total = fires.size();
    // Validate's classes, where its model was asked (lost_history.hpp):
    // its expiries left out, each matched to one fire, and its windows.
    std::vector<LostHistoryClasses::Expiry> lost_expiries;
    std::vector<bool> lost_expiry_used;
    if (classes) {
        lost_expiries = classes->expiries;
        std::sort(lost_expiries.begin(), lost_expiries.end());
        lost_expiry_used.assign(lost_expiries.size(), false);
        a.lost_history.lines = classes->lines;
        a.lost_history.sequences = classes->sequences;
        a.lost_history.resets = classes->resets;
    }
    const auto classed_lost = [&](const KernelFire& f) {
        const LostHistoryClasses::Expiry key{f.timer, f.now, f.cpu};
        for (auto it = std::lower_bound(lost_expiries.begin(), lost_expiries.end(), key);
             it != lost_expiries.end() && *it == key; ++it) {
            const auto i = static_cast<std::size_t>(it - lost_expiries.begin());
            if (lost_expiry_used[i]) continue;
            lost_expiry_used[i] = true;
            return true;
        }
        return false;
    };
    // First pass: the kernel-side figures, how many fires each timer has,
    // and the lost history: validate's classes where given, else a window
    // per CPU from each line saying it lost
    // events to the next fire of a timer the replay has from that CPU's
    // base (a filter's dropped timers are not the replay's: validate does
    // not see them; 6.9+: a migrator's remote expiry is of the idle CPU's
    // base, 6.9 tmigr_handle_remote_cpu() -> timer_expire_remote(), as
    // validate checks it against that CPU's wheel).
    std::vector<std::size_t> count;
    std::vector<bool> lost_fire(fires.size(), false); // by place in `fires`
    std::unordered_map<std::uint32_t, std::size_t> open; // by CPU: its window in `windows`
    std::vector<Window> windows;
    std::size_t next_line = 0;
    const auto lines_before = [&](std::uint64_t fire) {
        if (classes) return;
        for (; next_line < lost.size() && lost[next_line].fires_before <= fire; ++next_line) {
            const KernelLostLine& l = lost[next_line];
            ++a.lost_history.lines;
            const auto [w, added] = open.try_emplace(l.cpu, windows.size());
            if (added) windows.push_back(Window{l.cpu, l.latest, std::nullopt});
        }
    };
    std::uint64_t place = 0;
    for (const KernelFire& f : fires) {
        lines_before(place++);
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
        if (*id >= count.size()) count.resize(std::size_t{*id} + 1, 0);
        ++count[*id];
        if (classes) {
            if (classed_lost(f)) {
                lost_fire[place - 1] = true;
                ++a.lost_history.kernel_fires;
                continue;
            }
        } else if (const auto w = open.find(f.remote_of().value_or(f.cpu)); w != open.end()) {
            windows[w->second].to = f.now;
            open.erase(w);
            lost_fire[place - 1] = true;
            ++a.lost_history.kernel_fires;
            continue;
        }
        ++a.kernel_fires;
    }
    lines_before(fires.size());
    if (classes)
        for (const LostHistoryClasses::Window& w : classes->windows) windows.push_back(Window{w.cpu, w.from, w.to});
    for (const Window& w : windows) {
        if (w.cpu >= lost_by_cpu_.size()) lost_by_cpu_.resize(std::size_t{w.cpu} + 1);
        lost_by_cpu_[w.cpu].push_back(w);
        a.lost_history.cpus.push_back(w.cpu);
    }
    std::sort(a.lost_history.cpus.begin(), a.lost_history.cpus.end());
    a.lost_history.cpus.erase(std::unique(a.lost_history.cpus.begin(), a.lost_history.cpus.end()),
                              a.lost_history.cpus.end());
    // Second pass: each fire into its timer's range, in trace order.
    first_.assign(count.size() + 1, 0);
    for (std::size_t t = 0; t < count.size(); ++t) first_[t + 1] = first_[t] + count[t];
    records_.resize(first_.back());
    lost_.assign(records_.size(), false);
    std::vector<std::size_t> next(first_.begin(), first_.end() - 1);
    std::unordered_map<std::size_t, Wide> wide; // by position before the sort
    place = 0;
    for (const KernelFire& f : fires) {
        const std::optional<std::uint32_t> id = id_of(f.timer);
        const bool lost_here = lost_fire[place++];
        if (!id) continue;
        const std::size_t at = next[*id]++;
        records_[at] = record(f, recorded_callback(f, clock), at, wide);
        lost_[at] = lost_here;
    }
    // In trace order `now` never goes back on one CPU; across CPUs it may:
    // each range sorted by now, stably. The side table and the lost marks
    // follow their fires.
    std::vector<std::size_t> order;
    std::vector<Record> sorted;
    std::vector<bool> sorted_lost;
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
        sorted_lost.resize(order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            sorted[i] = records_[order[i]];
            sorted_lost[i] = lost_[order[i]];
            if (const auto w = wide.find(order[i]); w != wide.end()) wide_.emplace(from + i, w->second);
        }
        std::copy(sorted.begin(), sorted.end(), records_.begin() + static_cast<std::ptrdiff_t>(from));
        for (std::size_t i = 0; i < order.size(); ++i) lost_[from + i] = sorted_lost[i];
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
    const std::vector<Window>& windows = lost_by_cpu_[cpu];
    // The first window that does not end before j.
    const auto w = std::partition_point(windows.begin(), windows.end(), [j](const Window& x) {
        return x.to && time_before(*x.to, j);
    });
    return w != windows.end() && (!w->from || !time_before(j, *w->from));
}

void FireTally::replayed(std::uint32_t timer, Jiffies fired_jiffies, std::uint32_t cpu, std::uint32_t base_cpu) {
    const KernelFireIndex::Range r = index_->of(timer);
    for (std::size_t i = index_->first_not_before(r, fired_jiffies); i < r.last && index_->now_at(i) == fired_jiffies;
         ++i) {
        if (matched_[i] || index_->lost_at(i) || index_->cpu_at(i) != cpu) continue;
        matched_[i] = true;
        ++agreement_.replay_fires;
        ++agreement_.same_jiffy_cpu;
        return;
    }
    // A fire the kernel did not make, where the trace lost that CPU's
    // history: what would have explained it may be among the lost events.
    ++(index_->in_lost_history(base_cpu, fired_jiffies) ? agreement_.lost_history.replay_fires
                                                         : agreement_.replay_fires);
}

} // namespace timersim
