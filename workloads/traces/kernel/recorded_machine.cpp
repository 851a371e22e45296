#include "workloads/traces/kernel/recorded_machine.hpp"

#include <algorithm>
#include <map>

namespace timersim {

namespace {

// The runs are searched by jiffy alone (std::lower_bound's order).
bool by_jiffy(const RecordedMachine::Run& r, Jiffies j) noexcept { return r.jiffy < j; }

// The remote runs on the kernel's jiffies: a run that expired something
// says when by its first expiry's now=; one that did not is placed by the
// clock at its softirq's entry (without a clock it cannot be placed). Each
// knows whether the idle CPU's own run in that jiffy (its first fire
// there, by trace time) came before the migrator's softirq began.
void add_remote_runs(RecordedMachine& m, const std::vector<KernelRemoteRun>& remote, const KernelClock* clock,
                     const KernelFires& fires) {
    if (remote.empty()) return; // (the map below would hold every run)
    std::map<std::pair<std::uint32_t, Jiffies>, std::uint64_t> first_fire_ns;
    for (const KernelFire& f : fires) {
        const auto [it, added] = first_fire_ns.try_emplace({f.cpu, f.now}, f.entry_ns);
        if (!added) it->second = std::min(it->second, f.entry_ns);
    }
    for (const KernelRemoteRun& r : remote) {
        if (!r.now && !clock) continue;
        const Jiffies j = r.now ? *r.now : clock->jiffies_at(r.softirq_ns);
        const auto own = first_fire_ns.find({r.cpu, j});
        const bool after_own_run = r.softirq_ns != 0 && own != first_fire_ns.end() && own->second < r.softirq_ns;
        const std::size_t cpus = std::max<std::size_t>(r.migrator, r.cpu) + 1;
        if (m.remote_runs.size() < cpus) m.remote_runs.resize(cpus);
        if (m.remote_expired.size() < cpus) m.remote_expired.resize(cpus);
        m.remote_runs[r.migrator].push_back(
            RecordedMachine::RemoteRun{.jiffy = j, .cpu = r.cpu, .after_own_run = after_own_run});
        m.remote_expired[r.cpu].push_back(j);
    }
    // Stable: a softirq's remote runs keep the order the migrator ran them in.
    for (auto& runs : m.remote_runs)
        std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.jiffy < b.jiffy; });
    for (auto& jiffies : m.remote_expired) {
        std::sort(jiffies.begin(), jiffies.end());
        jiffies.erase(std::unique(jiffies.begin(), jiffies.end()), jiffies.end());
    }
}

// The delays of a CPU's runs, counted by value (a value a fire in a
// vector would cost 8 bytes a fire): most are a jiffy or two.
class DelayCounts {
public:
    void add(Jiffies d) {
        if (d < kSmall) {
            if (d >= small_.size()) small_.resize(d + 1, 0);
            ++small_[d];
        } else {
            ++large_[d];
        }
        ++n_;
    }
    Jiffies largest() const noexcept {
        if (!large_.empty()) return large_.rbegin()->first;
        return small_.empty() ? 0 : small_.size() - 1; // its last count is not zero
    }
    // The lower median: the value at rank (n - 1) / 2 in ascending order.
    Jiffies median() const noexcept {
        if (n_ == 0) return 0;
        std::uint64_t rank = (n_ - 1) / 2;
        for (Jiffies d = 0; d < small_.size(); ++d) {
            if (rank < small_[d]) return d;
            rank -= small_[d];
        }
        for (const auto& [d, count] : large_) {
            if (rank < count) return d;
            rank -= count;
        }
        return 0; // not reached: the counts add up to n_
    }

private:
    static constexpr Jiffies kSmall = 4096;
    std::vector<std::uint64_t> small_;
    std::map<Jiffies, std::uint64_t> large_;
    std::uint64_t n_ = 0;
};

} // namespace

RecordedMachine RecordedMachine::from(const KernelFires& fires,
                                      const std::vector<RecordedRunTime>& run_times,
                                      const std::vector<KernelUnfired>& unfired, const KernelClock* clock,
                                      const std::vector<KernelRemoteRun>& remote) {
    RecordedMachine m;
    std::vector<DelayCounts> delays;
    for (const KernelFire& f : fires) {
        if (f.cpu >= m.runs.size()) {
            m.runs.resize(std::size_t{f.cpu} + 1);
            delays.resize(std::size_t{f.cpu} + 1);
        }
        // A run's fires come together: one entry for them (sorted and made
        // unique below all the same, as CPUs' lines may interleave).
        std::vector<Run>& runs = m.runs[f.cpu];
        if (runs.empty() || runs.back().jiffy != f.now) runs.push_back(Run{.jiffy = f.now});
        // 6.1 timer_expire_entry: baseclk is the clock of the bucket being
        // expired; the run came now - baseclk jiffies after it was due.
        const std::optional<Jiffies> baseclk = f.baseclk();
        if (baseclk && !f.deferrable && !time_before(f.now, *baseclk)) {
            delays[f.cpu].add(f.now - *baseclk);
            if (const std::optional<std::uint32_t> idle = f.remote_of()) {
                if (m.remote_wake_window.size() <= *idle) m.remote_wake_window.resize(std::size_t{*idle} + 1);
                Jiffies& w = m.remote_wake_window[*idle];
                w = std::max(w, f.now - *baseclk);
            }
        }
    }
    for (std::size_t c = 0; c < m.runs.size(); ++c) {
        auto& r = m.runs[c];
        std::sort(r.begin(), r.end(), [](const Run& a, const Run& b) { return a.jiffy < b.jiffy; });
        r.erase(std::unique(r.begin(), r.end(), [](const Run& a, const Run& b) { return a.jiffy == b.jiffy; }),
                r.end());
        r.shrink_to_fit();
        m.wake_window.push_back(delays[c].largest());
        m.wake_delay.push_back(delays[c].median());
    }
    for (const RecordedRunTime& t : run_times) {
        if (t.cpu >= m.runs.size()) continue;
        auto& r = m.runs[t.cpu];
        const auto it = std::lower_bound(r.begin(), r.end(), t.now, by_jiffy);
        if (it == r.end() || it->jiffy != t.now) continue;
        it->time_ns = std::min(it->time_ns, t.time_ns);
    }
    m.held.resize(m.runs.size());
    if (clock) {
        for (const KernelUnfired& u : unfired) {
            const std::optional<Jiffies> cancelled = unfired_holds_from(u, *clock);
            if (u.cpu >= m.held.size() || !cancelled) continue;
            m.held[u.cpu].emplace_back(u.bucket_expiry, *cancelled - 1);
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
    add_remote_runs(m, remote, clock, fires);
    return m;
}

bool RecordedMachine::held_at(unsigned cpu, Jiffies j) const noexcept {
    if (cpu >= held.size()) return false;
    const auto& spans = held[cpu];
    const auto it = std::upper_bound(spans.begin(), spans.end(), j,
                                     [](Jiffies v, const std::pair<Jiffies, Jiffies>& s) { return v < s.first; });
    return it != spans.begin() && j <= (it - 1)->second;
}

const RecordedMachine::Run* RecordedMachine::run_at(unsigned cpu, Jiffies j) const noexcept {
    if (cpu >= runs.size()) return nullptr;
    const auto& r = runs[cpu];
    const auto it = std::lower_bound(r.begin(), r.end(), j, by_jiffy);
    return it == r.end() || it->jiffy != j ? nullptr : &*it;
}

bool RecordedMachine::runs_within(unsigned cpu, Jiffies from, Jiffies to) const noexcept {
    if (cpu >= runs.size()) return false;
    const auto it = std::lower_bound(runs[cpu].begin(), runs[cpu].end(), from, by_jiffy);
    return it != runs[cpu].end() && it->jiffy <= to;
}

std::uint64_t RecordedMachine::total_runs() const noexcept {
    std::uint64_t n = 0;
    for (const auto& r : runs) n += r.size();
    return n;
}

std::span<const RecordedMachine::RemoteRun> RecordedMachine::remote_runs_at(unsigned migrator, Jiffies j) const noexcept {
    if (migrator >= remote_runs.size()) return {};
    const auto& r = remote_runs[migrator];
    const auto first = std::lower_bound(r.begin(), r.end(), j, [](const RemoteRun& x, Jiffies v) { return x.jiffy < v; });
    auto last = first;
    while (last != r.end() && last->jiffy == j) ++last;
    return {first, last};
}

bool RecordedMachine::remote_expired_within(unsigned cpu, Jiffies from, Jiffies to) const noexcept {
    if (cpu >= remote_expired.size()) return false;
    const auto& r = remote_expired[cpu];
    const auto it = std::lower_bound(r.begin(), r.end(), from);
    return it != r.end() && *it <= to;
}

} // namespace timersim
