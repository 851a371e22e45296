// Metrics per group of timers (`--by function|cpu|level|base`): what the engine
// counts for every timer, split by what the timer is for (its label: the
// kernel callback of a trace, a generator's name), by the CPU whose base
// holds it, or by the wheel level it was queued at. Plain data, like
// metrics.hpp.
//
//     GroupTable t = engine.group_table();   // after a run
//     for (std::size_t g = 0; g < t.groups.size(); ++g)
//         fmt::print("{}: {} fired\n", t.names[g], t.groups[g].fired);
//
// The engine keeps one group index per timer (set when it is labelled, or
// at each enqueue for cpu and level), so an arm, fire or cancel costs one
// array read and an increment: no name lookup on the hot path.
#pragma once

#include "sim/machine/error_histogram.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

enum class GroupBy : std::uint8_t {
    function, // the timer's label (label_timer()); "(no label)" without one
    cpu,      // the CPU whose base it was queued on (and fired or was cancelled from)
    level,    // the wheel level it was queued at (classic tv1..tv5, modern 0..8; the heap has none)
    base,     // the timer base it was queued on: modern-6.9's local (pinned), global or deferrable,
              // the other designs' standard or deferrable (GroupTable: kBase*)
};
std::string_view to_string(GroupBy by);
std::optional<GroupBy> group_by_from_string(std::string_view name);

// One group's share of the run's CpuMetrics: arms, fired and cancelled sum
// over the groups to the totals, the error histograms merge to the total's,
// and softirq_ns plus GroupTable::unattributed_softirq_ns is the total
// softirq_work_ns.
struct GroupMetrics {
    std::uint64_t arms = 0;      // arm requests, in the group the timer is in after the arm
    std::uint64_t fired = 0;
    std::uint64_t cancelled = 0; // cancels that removed a pending timer
    std::uint64_t early = 0;
    ErrorHistogram error_jiffies; // fired jiffy - requested expiry
    // Softirq time of the group's expiries: the queue work from the end of
    // the previous expiry (scans, cascades) up to and including this one,
    // and its callback with what the callback did (re-arms).
    std::uint64_t softirq_ns = 0;

    void merge(const GroupMetrics& other);
    bool empty() const noexcept { return arms == 0 && fired == 0 && cancelled == 0; }
};

// What the engine keeps per group while it runs: the metrics, with the
// errors a timer mostly has (0..kDense-1 jiffies late) counted in an array
// rather than the histogram's map, which would otherwise take a second map
// insertion per fire (the CPU's histogram takes the first).
struct GroupAccumulator {
    static constexpr std::int64_t kDense = 32;
    GroupMetrics metrics; // its error_jiffies: the errors outside 0..kDense-1
    std::array<std::uint64_t, kDense> dense{};

    void add_error(std::int64_t e) {
        if (e >= 0 && e < kDense)
            ++dense[static_cast<std::size_t>(e)];
        else
            metrics.error_jiffies.add(e);
    }
    // The metrics with every error in their histogram.
    GroupMetrics result() const;
};

// --by base: the group index of each base, 6.9's BASE_LOCAL, BASE_GLOBAL
// and BASE_DEF (kernel/time/timer.c); a design with one base for all but
// deferrable timers (6.1's BASE_STD) puts them in kBaseGlobal's group.
inline constexpr std::uint32_t kBaseLocal = 0;
inline constexpr std::uint32_t kBaseGlobal = 1;
inline constexpr std::uint32_t kBaseDeferrable = 2;

struct GroupTable {
    GroupBy by = GroupBy::function;
    std::vector<std::string> names;    // by group index
    std::vector<GroupMetrics> groups;  // by group index, as names
    // Softirq time no expiry caused: pass entries, scans that found nothing.
    std::uint64_t unattributed_softirq_ns = 0;
    // --by level on the heap: one group, it has no levels.
    bool no_levels = false;
};

} // namespace timersim
