// A run of the simulated machine: one design, any workload, the engine of
// sim/machine/engine.hpp (`timersim run`; `compare` runs one per design).
// Its reports: sim/report/run_report.hpp.
#pragma once

#include "sim/machine/design.hpp"
#include "sim/machine/engine.hpp"
#include "sim/machine/event_log.hpp"
#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/kernel/classic_levels.hpp"
#include "workloads/workload.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace timersim {

// Progress callback: fraction of the work done, in [0, 1].
using ProgressFn = std::function<void(double)>;

// The machine as a run sees it: the engine's own settings (EngineConfig:
// HZ, costs, ksoftirqd, jitter, NOHZ, the softirq bound) and what a run adds
// around them. One type, so nothing is copied field by field; run_machine()
// hands the EngineConfig part to the engine as it is, with the series window
// resolved.
struct MachineConfig : EngineConfig {
    std::optional<Jiffies> start_jiffies; // default: initial_jiffies(hz)
    unsigned cpus = 1;                    // 1..kMaxMachineCpus, each with its own timer base
    std::uint64_t ticks = 30000;
    std::optional<std::int64_t> classic_slack = -1; // nullopt: off; -1: kernel default; N: fixed
    bool classic_oldest_first = false; // classic: a slot's timers run oldest first (before 4.2; ClassicWheel::SlotOrder)
    classic::Geometry classic_geometry = classic::Geometry::normal();
    // Design::wheel: its geometry (a cascading one takes classic_slack).
    std::optional<WheelSpec> wheel;
    // series_window_ticks (EngineConfig) means here: 0, chosen so that a run
    // has at most kDefaultSeriesWindows windows; given, at most 1e6 windows.
    // series_max_windows is set by run_machine() from it.
};

inline constexpr unsigned kMaxMachineCpus = 4096;
inline constexpr std::size_t kDefaultSeriesWindows = 2000;

struct RunResult {
    Design design = Design::modern;
    MachineConfig config;
    std::string workload_name;
    std::string workload_description;
    nlohmann::ordered_json workload_params = nlohmann::ordered_json::object(); // WorkloadSpec::params
    Jiffies start_jiffies = 0;
    std::uint64_t end_ns = 0; // simulated time at the end of the run
    // Workload operations timed after the run's end (tick `ticks`, jitter
    // included) that it did not simulate: a trace longer than the run.
    std::uint64_t operations_past_end = 0;
    // A replay of a kernel trace: its fires against the kernel's
    // (Workload::kernel_fire_agreement()).
    std::optional<FireAgreement> kernel_fires;
    std::size_t bytes_per_timer = 0;        // the queue's node (what the design costs)
    std::size_t engine_bytes_per_timer = 0; // the simulator's own record of a timer, on top
    std::size_t garbage_entry_bytes = 0;    // netty, cog: bytes one held cancelled entry keeps
    std::vector<CpuMetrics> per_cpu;
    CpuMetrics total; // all CPUs together (CpuMetrics::merge)
    // Softirq cost over time: window w holds the softirq runs started by
    // ticks w*W+1 .. (w+1)*W (W = series_window_ticks); ceil(ticks / W)
    // windows, work started after the last tick in the last one. Sums over
    // the series equal total.softirq_work_ns, total.counters.cascade_moves
    // and total.counters.expired; the largest max_softirq_ns is
    // total.max_softirq_ns.
    std::uint64_t series_window_ticks = 0;
    std::vector<SeriesPoint> series;
    // Timers grouped by config.group_by (sim/machine/group_metrics.hpp):
    // the groups' counts sum to total's, their error histograms merge to it.
    GroupTable groups;
};

// Throws std::invalid_argument for a configuration the engine cannot run.
// With `events`, every enqueue, fire and cancel is logged (Engine::
// set_event_log(), design column design_name()); the caller flushes it.
// The design as reports name it: to_string(design), or the wheel's spec.
std::string design_name(const RunResult& r);

// Whether the reports show the 6.9+ remote expiry figures of this run
// (CpuMetrics::remote_expiries, expired_by_remote and the idle wakeups next
// to them): for modern-6.9, whose idle CPUs' global timers a migrator
// expires, and for any run that counted one. Every other design's reports
// stay as they were without them.
bool reports_remote_expiry(const RunResult& r);

RunResult run_machine(Design design, const MachineConfig& config, const WorkloadSpec& workload,
                      const ProgressFn& progress = {}, EventLog* events = nullptr);


} // namespace timersim
