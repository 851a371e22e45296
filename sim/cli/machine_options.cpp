#include "sim/cli/machine_options.hpp"

#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

struct CostOption {
    const char* name;
    std::uint64_t CostModel::*field;
    const char* help;
};

const std::array<CostOption, 8> kCostOptions{{
    {"cost-enqueue-ns", &CostModel::enqueue_ns, "ns to put a timer into a bucket"},
    {"cost-dequeue-ns", &CostModel::dequeue_ns, "ns to take a pending timer out (cancel, or the first half of a re-arm)"},
    {"cost-cascade-move-ns", &CostModel::cascade_move_ns, "ns per timer moved by a classic cascade"},
    {"cost-bucket-scan-ns", &CostModel::bucket_scan_ns, "ns per bucket looked at while expiring"},
    {"cost-expiry-ns", &CostModel::expiry_ns, "ns to detach one expired timer"},
    {"cost-callback-ns", &CostModel::callback_ns, "ns per timer callback body"},
    {"cost-next-expiry-step-ns", &CostModel::next_expiry_step_ns, "ns per step of a next-expiry search"},
    {"cost-softirq-entry-ns", &CostModel::softirq_entry_ns, "fixed ns per TIMER_SOFTIRQ handler pass"},
}};

} // namespace

void add_machine_options(po::options_description& options, double default_duration_s) {
    const CostModel defaults{};
    add_hz_option(options);
    options.add_options()
        ("duration", po::value<double>(),
         fmt::format("simulated seconds (default {:g}; or give --ticks)", default_duration_s).c_str())
        ("ticks", po::value<std::uint64_t>(), "simulated ticks (instead of --duration)")
        ("cpus", po::value<unsigned>()->default_value(1), "simulated CPUs, each with its own timer base and tick")
        ("numa-nodes", po::value<unsigned>()->default_value(1),
         "NUMA nodes, 1..CPUs, CPUs in contiguous blocks (CPU c of N on node c*K/N): the groups of modern-6.9's "
         "timer-migration hierarchy (with --nohz); no effect on the other designs")
        ("nohz", po::bool_switch(), "NOHZ idle: stop the tick while idle if the next timer is more than a tick away")
        ("ksoftirqd-delay-ns", po::value<std::uint64_t>()->default_value(kDefaultKsoftirqdDelayNs),
         "ns from waking ksoftirqd to it running")
        ("tick-jitter-ns", po::value<std::uint64_t>()->default_value(0),
         "each tick is late by a uniform draw in [0, N] ns (N below the tick period)")
        ("jitter-seed", po::value<std::uint64_t>()->default_value(1), "seed of the tick jitter draws")
        ("max-expiries-per-softirq", po::value<std::uint64_t>()->default_value(0),
         "expire at most N timers per softirq run and leave the rest for the next (0: no bound, as the kernel)");
    add_classic_options(options);
    options.add_options()
        ("zero-cost", po::bool_switch(), "every cost 0 (the --cost-* options still apply on top)");
    for (const CostOption& c : kCostOptions)
        options.add_options()(c.name, po::value<std::uint64_t>(),
                              fmt::format("{} (default {})", c.help, defaults.*(c.field)).c_str());
}

MachineConfig machine_config(const po::variables_map& vm, unsigned hz) {
    MachineConfig config;
    config.cpus = vm["cpus"].as<unsigned>();
    if (config.cpus < 1 || config.cpus > kMaxRequestedCpus)
        throw UsageError(fmt::format("--cpus: must be 1..{}, got {}", kMaxRequestedCpus, config.cpus));
    config.numa_nodes = vm["numa-nodes"].as<unsigned>();
    // Checked against the CPUs in plan_run(): a trace may set them.
    config.nohz_idle = vm["nohz"].as<bool>();
    config.ksoftirqd_delay_ns = vm["ksoftirqd-delay-ns"].as<std::uint64_t>();
    if (config.ksoftirqd_delay_ns > 10'000'000'000ull)
        throw UsageError(
            fmt::format("--ksoftirqd-delay-ns: must be at most 1e10 ns, got {}", config.ksoftirqd_delay_ns));
    config.tick_jitter_ns = vm["tick-jitter-ns"].as<std::uint64_t>();
    const std::uint64_t period_ns = 1'000'000'000ull / hz;
    if (config.tick_jitter_ns >= period_ns)
        throw UsageError(fmt::format("--tick-jitter-ns: must be below the tick period ({} ns at HZ={}), got {}",
                                     period_ns, hz, config.tick_jitter_ns));
    config.jitter_seed = vm["jitter-seed"].as<std::uint64_t>();
    const std::uint64_t max_expiries = vm["max-expiries-per-softirq"].as<std::uint64_t>();
    if (max_expiries > 1'000'000'000ull)
        throw UsageError(fmt::format("--max-expiries-per-softirq: must be 0..1e9, got {}", max_expiries));
    config.max_expiries_per_softirq = static_cast<std::uint32_t>(max_expiries);
    config.classic_slack = slack_option(vm);
    config.classic_geometry = geometry_option(vm);
    if (vm["zero-cost"].as<bool>()) config.costs = CostModel::zero();
    for (const CostOption& c : kCostOptions) {
        if (!vm.count(c.name)) continue;
        const std::uint64_t v = vm[c.name].as<std::uint64_t>();
        if (v > 1'000'000'000ull) throw UsageError(fmt::format("--{}: must be at most 1e9 ns, got {}", c.name, v));
        config.costs.*(c.field) = v;
    }
    return config;
}

RunLength run_length_option(const po::variables_map& vm, unsigned hz) {
    RunLength length;
    if (vm.count("ticks")) length.ticks = vm["ticks"].as<std::uint64_t>();
    if (vm.count("duration")) length.duration_s = vm["duration"].as<double>();
    try {
        requested_ticks(length, hz);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // names the option at fault
    }
    return length;
}

} // namespace timersim::cli
