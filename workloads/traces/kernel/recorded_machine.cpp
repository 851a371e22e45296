#include "workloads/traces/kernel/recorded_machine.hpp"

#include <algorithm>

namespace timersim {

RecordedMachine RecordedMachine::from(const std::vector<KernelFire>& fires) {
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
    }
    return m;
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
