// What a kernel trace says fired, kept to judge a replay of it: every
// timer_expire_entry as (timer, now, CPU). A replay of the recording
// kernel's own design should fire the same timers on the same jiffies and
// CPUs; how many it does (FireAgreement) tells a reader how far to trust the
// other designs' columns of a comparison on the same trace.
//
//   KernelFireCollector fires(&costs);          // sees the reader's events, passes them on
//   reader.set_observer(&fires);
//   ... read the trace ...
//   FireTally tally(fires.fires(), id_of);      // id_of: timer pointer -> the replay's timer id
//   tally.replayed(id, fired_jiffies, cpu);     // each fire of the replay
//   tally.agreement();
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/workload.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

namespace timersim {

// One timer_expire_entry: the kernel ran `timer`'s callback on `cpu` with
// jiffies at `now`.
struct KernelFire {
    std::uint64_t timer = 0; // the timer_list pointer as printed
    Jiffies now = 0;
    std::uint32_t cpu = 0;
    std::optional<Jiffies> baseclk; // 6.1+: the clock of the bucket it was expired from
    bool deferrable = false;        // its last timer_start said TIMER_DEFERRABLE
    std::optional<Jiffies> requested; // its last timer_start's expires, if the trace shows one
};

// Collects the fires (every timer_expire_entry the reader reads, before
// any filter) and passes every event on to `next`, if given (the cost
// collector of --costs-from-trace).
class KernelFireCollector final : public FtraceObserver {
public:
    explicit KernelFireCollector(FtraceObserver* next = nullptr) : next_(next) {}
    void timer_event(const FtraceEvent& event) override;
    void timer_softirq(const FtraceTimerSoftirq& event) override;
    const std::vector<KernelFire>& fires() const noexcept { return fires_; }

private:
    FtraceObserver* next_;
    std::vector<KernelFire> fires_;
    struct LastStart {
        bool deferrable = false;
        Jiffies expires = 0;
    };
    std::unordered_map<std::uint64_t, LastStart> last_start_; // by timer pointer
};

// The kernel's fires by the replay's timer ids, matched against the
// replay's fires one by one (each kernel fire matches at most one).
class FireTally {
public:
    // `id_of`: the replay's id of a timer pointer, none for a timer it does
    // not have.
    FireTally(const std::vector<KernelFire>& fires,
              const std::function<std::optional<std::uint32_t>(std::uint64_t)>& id_of);
    void replayed(std::uint32_t timer, Jiffies fired_jiffies, std::uint32_t cpu);
    const FireAgreement& agreement() const noexcept { return agreement_; }

private:
    struct Key {
        std::uint32_t timer;
        std::uint32_t cpu;
        Jiffies now;
        friend bool operator==(const Key&, const Key&) = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept {
            return std::hash<std::uint64_t>{}((std::uint64_t{k.timer} << 32 | k.cpu) ^ (k.now * 0x9E3779B97F4A7C15ull));
        }
    };
    std::unordered_map<Key, std::uint32_t, KeyHash> unmatched_; // kernel fires not matched yet
    FireAgreement agreement_;
};

} // namespace timersim
