#include "workloads/traces/kernel/recorded_machine.hpp"

#include <algorithm>

namespace timersim {

RecordedMachine RecordedMachine::from(const std::vector<KernelFire>& fires,
                                      const std::vector<RecordedRunTime>& run_times,
                                      const std::vector<KernelUnfired>& unfired, const KernelClock* clock) {
    RecordedMachine m;
    std::vector<std::vector<Jiffies>> delays;
    for (const KernelFire& f : fires) {
        if (f.cpu >= m.runs.size()) {
            m.runs.resize(std::size_t{f.cpu} + 1);
            delays.resize(std::size_t{f.cpu} + 1);
        }
        m.runs[f.cpu].push_back(f.now);
        // 6.1 timer_expire_entry: baseclk is the clock of the bucket being
        // expired; the run came now - baseclk jiffies after it was due.
        if (f.baseclk && !f.deferrable && !time_before(f.now, *f.baseclk))
            delays[f.cpu].push_back(f.now - *f.baseclk);
    }
    for (std::size_t c = 0; c < m.runs.size(); ++c) {
        auto& r = m.runs[c];
        std::sort(r.begin(), r.end());
        r.erase(std::unique(r.begin(), r.end()), r.end());
        auto& d = delays[c];
        std::sort(d.begin(), d.end());
        m.wake_window.push_back(d.empty() ? 0 : d.back());
        m.wake_delay.push_back(d.empty() ? 0 : d[(d.size() - 1) / 2]);
        m.run_ns.emplace_back(r.size(), kNoTime);
    }
    for (const RecordedRunTime& t : run_times) {
        if (t.cpu >= m.runs.size()) continue;
        const auto& r = m.runs[t.cpu];
        const auto it = std::lower_bound(r.begin(), r.end(), t.now);
        if (it == r.end() || *it != t.now) continue;
        std::uint64_t& ns = m.run_ns[t.cpu][static_cast<std::size_t>(it - r.begin())];
        ns = std::min(ns, t.time_ns);
    }
    m.held.resize(m.runs.size());
    if (clock) {
        for (const KernelUnfired& u : unfired) {
            // Cancelled in the bucket's own jiffy it proves nothing: the
            // cancel may have come before that jiffy's run would have.
            const Jiffies cancelled = clock->jiffies_at(u.cancel_ns);
            if (u.cpu >= m.held.size() || !time_after(cancelled, u.bucket_expiry)) continue;
            m.held[u.cpu].emplace_back(u.bucket_expiry, cancelled - 1);
        }
        for (auto& spans : m.held) {
            std::sort(spans.begin(), spans.end());
            std::vector<std::pair<Jiffies, Jiffies>> merged;
            for (const auto& s : spans) {
                if (!merged.empty() && !time_after(s.first, merged.back().second + 1))
                    merged.back().second = std::max(merged.back().second, s.second);
                else
                    merged.push_back(s);
            }
            spans = std::move(merged);
        }
    }
    return m;
}

bool RecordedMachine::held_at(unsigned cpu, Jiffies j) const noexcept {
    if (cpu >= held.size()) return false;
    const auto& spans = held[cpu];
    const auto it = std::upper_bound(spans.begin(), spans.end(), j,
                                     [](Jiffies v, const std::pair<Jiffies, Jiffies>& s) { return v < s.first; });
    return it != spans.begin() && j <= (it - 1)->second;
}

std::uint64_t RecordedMachine::run_time(unsigned cpu, Jiffies j) const noexcept {
    if (cpu >= runs.size()) return kNoTime;
    const auto& r = runs[cpu];
    const auto it = std::lower_bound(r.begin(), r.end(), j);
    if (it == r.end() || *it != j) return kNoTime;
    return run_ns[cpu][static_cast<std::size_t>(it - r.begin())];
}

bool RecordedMachine::ran(unsigned cpu, Jiffies j) const noexcept {
    return cpu < runs.size() && std::binary_search(runs[cpu].begin(), runs[cpu].end(), j);
}

bool RecordedMachine::runs_within(unsigned cpu, Jiffies from, Jiffies to) const noexcept {
    if (cpu >= runs.size()) return false;
    const auto it = std::lower_bound(runs[cpu].begin(), runs[cpu].end(), from);
    return it != runs[cpu].end() && *it <= to;
}

std::uint64_t RecordedMachine::total_runs() const noexcept {
    std::uint64_t n = 0;
    for (const auto& r : runs) n += r.size();
    return n;
}

} // namespace timersim
