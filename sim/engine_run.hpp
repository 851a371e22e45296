// A run of the simulated machine: one design, the connection-churn workload,
// the engine of sim/engine.hpp; and its text and JSON reports
// (`timersim run`).
#pragma once

#include "sim/engine.hpp"
#include "sim/queue_comparison.hpp"
#include "wheel/classic_levels.hpp"
#include "workloads/connection_churn.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace timersim {

struct RunConfig {
    Design design = Design::modern;
    ConnectionChurnConfig workload; // its hz is the machine's HZ
    std::uint64_t ticks = 30000;
    CostModel costs{};
    std::uint64_t ksoftirqd_delay_ns = kDefaultKsoftirqdDelayNs;
    std::uint64_t tick_jitter_ns = 0;
    std::uint64_t jitter_seed = 1;
    bool nohz_idle = false;
    std::optional<std::int64_t> classic_slack = -1; // nullopt: off; -1: kernel default; N: fixed
    classic::Geometry classic_geometry = classic::Geometry::normal();
};

struct RunResult {
    RunConfig config;
    Jiffies start_jiffies = 0;
    std::uint64_t end_ns = 0; // simulated time at the end of the run
    std::size_t bytes_per_timer = 0;
    CpuMetrics cpu;           // one CPU for now
};

// Throws std::invalid_argument for a configuration the engine cannot run.
RunResult run_machine(const RunConfig& config, const ProgressFn& progress = {});

std::string format_run_text(const RunResult& result);
std::string format_run_json(const RunResult& result);

} // namespace timersim
