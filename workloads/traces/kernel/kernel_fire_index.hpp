// The kernel's fires by the replay's timer ids, built once per trace and
// shared by every replay of it (immutable): what each replay's FireTally
// matches its fires against, and the callback lengths a replay on the
// recorded machine gives its own (ReplayCallbackCosts::as_recorded).
//
//   KernelFireIndex index(fires, functions, id_of, &clock); // id_of: timer pointer -> replay id
//   FireTally tally(index);                                 // one per replay
//   tally.replayed(id, fired_jiffies, cpu, base_cpu);       // each fire of the replay
//   tally.agreement();
//   index.nearest_callback(id, fired_jiffies);              // the kernel's nearest callback of that timer
//
// 16 bytes a fire (a hash table of keys beside a vector of callbacks per
// timer would take about 90): the fires of each timer lie together,
// ascending by `now`, in one array with an offset per timer, and a replay's
// matches are a bit a fire. The rare fire whose CPU, callback length or jiffy count does
// not fit its record's narrow fields keeps them in a side table.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/kernel/lost_history.hpp"
#include "workloads/traces/kernel/recorded_callbacks.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace timersim {

class KernelFireIndex {
public:
    KernelFireIndex() = default;
    // `id_of`: the replay's id of a timer pointer, none for a timer it does
    // not have. `clock` places a callback without a next fire of its run on
    // the kernel's jiffies (recorded_callback()).
    // `lost`: the lines saying a CPU lost events (KernelFireCollector::
    // lost_lines()). From each, that CPU's history is lost (as validate has
    // it) until the next fire of a timer the replay has from that CPU's
    // base (6.9+: a remote expiry is of the idle CPU's), in jiffies from
    // the latest the trace showed before the line to that fire's now: the
    // fire, and a replay's fires on that CPU then that match none of the
    // kernel's, are left out of the figures (FireAgreement::lost_history).
    // The window does not depend on the replay, so that every design of a
    // comparison is measured on the same kernel fires (a replay's first
    // match would forgive a design more of its misses the fewer it
    // reproduced). The fire stays in the index for its callback.
    // `classes`, where validate's model classed the trace's lost history
    // (lost_history.hpp), replaces `lost`: its windows, and its expiries
    // left out, each the fire with its timer, now and CPU. It too is the
    // same for every design.
    KernelFireIndex(const KernelFires& fires, const std::vector<std::string>& functions,
                    const std::function<std::optional<std::uint32_t>(std::uint64_t)>& id_of,
                    const KernelClock* clock = nullptr, const std::vector<KernelLostLine>& lost = {},
                    const LostHistoryClasses* classes = nullptr);
    // FireAgreement's kernel_* fields; the replay's are zero.
    const FireAgreement& kernel_side() const noexcept { return kernel_side_; }
    // The fires of replayable timers (FireTally's bits).
    std::size_t fires() const noexcept { return records_.size(); }
    // The fires of `timer`, as [first, last) positions.
    struct Range {
        std::size_t first = 0, last = 0;
    };
    Range of(std::uint32_t timer) const noexcept;
    // Position `i` (a fire of `timer` in of(timer)): its jiffy and CPU.
    Jiffies now_at(std::size_t i) const noexcept { return records_[i].now; }
    std::uint32_t cpu_at(std::size_t i) const;
    // Is it a fire of lost history (left out of the figures): one validate
    // classes lost, or, by the lines alone, the fire that ends a window?
    bool lost_at(std::size_t i) const noexcept { return lost_[i]; }
    // The first position of `r` whose now is not before `j`.
    std::size_t first_not_before(Range r, Jiffies j) const noexcept;
    // The callback of the kernel's fire of `timer` nearest to `fired` (the
    // earlier of two as near), among the fires whose entry/exit pair the
    // trace shows; none without one.
    std::optional<RecordedCallback> nearest_callback(std::uint32_t timer, Jiffies fired) const;
    // Was `cpu`'s history lost at jiffy `j` (in one of its lost windows)?
    bool in_lost_history(std::uint32_t cpu, Jiffies j) const noexcept;

private:
    static constexpr std::uint16_t kWideCpu = 0xFFFF;     // cpu, ns and ticks are in wide_
    static constexpr std::uint32_t kNoCallback = 0xFFFFFFFF;
    static constexpr std::uint16_t kNoTicks = 0xFFFF;
    struct Record {
        Jiffies now = 0;
        std::uint32_t ns = kNoCallback;
        std::uint16_t cpu = 0;
        std::uint16_t ticks = kNoTicks;
    };
    static_assert(sizeof(Record) == 16);
    struct Wide {
        std::uint32_t cpu = 0;
        std::optional<RecordedCallback> callback;
    };
    static Record record(const KernelFire& f, const std::optional<RecordedCallback>& callback, std::size_t at,
                         std::unordered_map<std::size_t, Wide>& wide);
    std::optional<RecordedCallback> callback_at(std::size_t i) const;

    std::vector<std::size_t> first_; // by timer id, and one past the last: positions in records_
    std::vector<Record> records_;
    std::unordered_map<std::size_t, Wide> wide_; // by position
    FireAgreement kernel_side_;
    std::vector<bool> lost_; // by position: lost_at()
    // A CPU's lost history in jiffies: from (none: the start) to (none: the end).
    struct Window {
        std::uint32_t cpu = 0;
        std::optional<Jiffies> from;
        std::optional<Jiffies> to;
    };
    std::vector<std::vector<Window>> lost_by_cpu_; // by CPU, in jiffies order (disjoint)
};

// One replay's matches against a KernelFireIndex (which must outlive it):
// each kernel fire matches at most one of the replay's. A bit a fire.
class FireTally {
public:
    explicit FireTally(const KernelFireIndex& index)
        : index_(&index), agreement_(index.kernel_side()), matched_(index.fires(), false) {}
    // A fire of the replay by `cpu`'s softirq, of a timer on `base_cpu`'s
    // base (a 6.9+ remote expiry's idle CPU; else `cpu`): it matches a
    // kernel fire by `cpu`, and falls in the lost history of `base_cpu`, as
    // the kernel's fires do (validate checks a remote expiry on the idle
    // CPU's wheel).
    void replayed(std::uint32_t timer, Jiffies fired_jiffies, std::uint32_t cpu, std::uint32_t base_cpu);
    const FireAgreement& agreement() const noexcept { return agreement_; }

private:
    const KernelFireIndex* index_;
    FireAgreement agreement_;
    std::vector<bool> matched_; // by position in index_
};

} // namespace timersim
