// The cost model measured from a kernel trace (`--costs-from-trace`): a
// trace recorded with irq:softirq_entry/softirq_exit and
// timer:timer_expire_entry/timer_expire_exit times, on each CPU, every
// TIMER_SOFTIRQ run and every timer callback inside it:
//
//   softirq_entry vec=1 ─┬─ expire_entry f ── expire_exit ─┬─ expire_entry g ── expire_exit ─┬─ softirq_exit
//   │ run overhead (head) │        callback f                │ gap        callback g          │ overhead (tail) │
//
//   * callback (per function, and all together): expire_exit - expire_entry
//     of the same timer on the same CPU;
//   * run overhead: the run's time outside callbacks and gaps, head plus
//     tail (the whole run when it expired nothing): 6.1 handle_softirqs()
//     around the handler, run_timer_softirq(), the base lock, collecting
//     the first bucket;
//   * gap: from one callback's exit to the next one's entry in the same
//     run: detaching the next timer, dropping and retaking the base lock
//     (6.1 expire_timers());
//   * per expiry: a run's duration over its callbacks (runs with at least
//     one), what an expiry costs all told.
//
// Each is a distribution (count, p50, p90, p99, max; nearest-rank
// percentiles of the samples). Pairs broken by lost events are skipped: an
// entry without its exit (another entry comes first on that CPU), an exit
// without its entry; a run in which that happened gives no run sample.
//
//   TraceCostCollector costs;
//   reader.set_observer(&costs);   // FtraceReader
//   ... read the trace ...
//   const TraceCosts c = costs.result();   // throws without the events
#pragma once

#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace timersim {

struct CostDistribution {
    std::uint64_t count = 0;
    std::uint64_t p50 = 0;
    std::uint64_t p90 = 0;
    std::uint64_t p99 = 0;
    std::uint64_t max = 0;
    // Nearest rank: the sample at rank ceil(p/100 * n) of the sorted samples.
    static CostDistribution of(std::vector<std::uint64_t> samples);
};

struct TraceCosts {
    std::map<std::string, CostDistribution, std::less<>> callback_by_function;
    CostDistribution callbacks;       // every callback
    CostDistribution softirq_runs;    // TIMER_SOFTIRQ entry to exit
    CostDistribution run_overhead;    // per run: outside callbacks and gaps
    CostDistribution expiry_gaps;     // between two callbacks of a run
    CostDistribution per_expiry;      // run duration / callbacks in it
    std::uint64_t expiries_in_runs = 0; // callbacks inside complete runs
    std::uint64_t broken_pairs = 0;     // entries or exits without their other half
};

class TraceCostCollector final : public FtraceObserver {
public:
    void timer_event(const FtraceEvent& event) override;
    void timer_softirq(const FtraceTimerSoftirq& event) override;

    // Throws InputError "FILE: --costs-from-trace: ..." when the trace has no
    // complete TIMER_SOFTIRQ run or no complete callback.
    TraceCosts result(const std::string& file) const;

private:
    struct Callback {
        std::uint64_t timer = 0;
        std::uint64_t start_ns = 0;
        std::string function;
    };
    struct Cpu {
        std::optional<Callback> callback;      // between expire_entry and _exit
        bool in_run = false;
        bool broken = false;                   // this run lost an entry or exit
        std::uint64_t run_start_ns = 0;
        std::uint64_t first_entry_ns = 0;
        std::uint64_t last_exit_ns = 0;
        std::uint64_t run_callbacks = 0;
        std::vector<std::uint64_t> run_gaps;
    };
    Cpu& cpu(std::uint32_t c);

    std::unordered_map<std::uint32_t, Cpu> cpus_;
    std::map<std::string, std::vector<std::uint64_t>, std::less<>> by_function_;
    std::vector<std::uint64_t> callbacks_, runs_, overheads_, gaps_, per_expiry_;
    std::uint64_t expiries_in_runs_ = 0;
    std::uint64_t broken_ = 0;
};

} // namespace timersim
