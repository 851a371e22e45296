#include "sim/atomic_file.hpp"
#include "sim/cli.hpp"
#include "sim/commands.hpp"
#include "sim/common_options.hpp"
#include "sim/engine_run.hpp"
#include "sim/progress.hpp"
#include "workloads/churn_workload.hpp"

#include <fmt/core.h>

#include <array>
#include <cmath>

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

int run_run(std::span<const std::string> args) {
    const CostModel defaults{};
    po::options_description options("Options");
    options.add_options()
        ("design", po::value<std::string>()->default_value("modern"), "timer queue: classic, modern or heap");
    add_hz_option(options);
    options.add_options()
        ("duration", po::value<double>(), "simulated seconds (default 60; or give --ticks)")
        ("ticks", po::value<std::uint64_t>(), "simulated ticks (instead of --duration)")
        ("connections", po::value<std::uint32_t>()->default_value(100000), "connections, one timer each (1..50000000)")
        ("message-interval", po::value<double>()->default_value(1000), "mean ms between two messages of one connection (each message re-arms its timer)")
        ("seed", po::value<std::uint64_t>()->default_value(1), "workload seed; the same seeds give byte-identical output");
    add_classic_options(options);
    options.add_options()
        ("ksoftirqd-delay-ns", po::value<std::uint64_t>()->default_value(kDefaultKsoftirqdDelayNs), "ns from waking ksoftirqd to it running")
        ("tick-jitter-ns", po::value<std::uint64_t>()->default_value(0), "each tick is late by a uniform draw in [0, N] ns (N below the tick period)")
        ("jitter-seed", po::value<std::uint64_t>()->default_value(1), "seed of the tick jitter draws")
        ("nohz", po::bool_switch(), "NOHZ idle: stop the tick while idle if the next timer is more than a tick away")
        ("zero-cost", po::bool_switch(), "every cost 0 (the --cost-* options still apply on top)");
    for (const CostOption& c : kCostOptions)
        options.add_options()(c.name, po::value<std::uint64_t>(),
                              fmt::format("{} (default {})", c.help, defaults.*(c.field)).c_str());
    options.add_options()
        ("format", po::value<std::string>()->default_value("text"), "text or json")
        ("output,o", po::value<std::string>(), "write the report to FILE (atomically) instead of stdout");
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim run [options]",
            .description =
                "Run the connection-churn workload on one simulated CPU: a tick every jiffy at its\n"
                "exact time, TIMER_SOFTIRQ raised when the queue says so, the softirq run at\n"
                "interrupt exit with the kernel's restart limits (10 passes, 2 ms in jiffies) and\n"
                "deferral to ksoftirqd, and simulated time charged for every enqueue, dequeue,\n"
                "cascade move, bucket scan, expiry and callback. Reports precision error in\n"
                "jiffies and in ns (timers behind a long softirq fire late), softirq durations,\n"
                "restarts, deferrals and the CPU time spent on timers. With --nohz the tick\n"
                "stops while the CPU is idle and the next timer is more than a tick away.",
            .examples = "timersim run\n"
                        "timersim run --design classic --hz 1000 --duration 30 --connections 20000\n"
                        "timersim run --design modern --ticks 5000 --cost-callback-ns 2000 --format json\n"
                        "timersim run --zero-cost --design heap --duration 10\n"
                        "timersim run --design classic --nohz --connections 50 --message-interval 20000",
        });
    if (!vm) return kExitOk;

    MachineConfig config;
    const Design design = *design_from_string(choice_option(*vm, "design", {"classic", "modern", "heap"}));
    config.hz = hz_option(*vm);
    ConnectionChurnConfig churn;
    churn.hz = config.hz;
    churn.connections = (*vm)["connections"].as<std::uint32_t>();
    churn.message_interval_ms = (*vm)["message-interval"].as<double>();
    churn.seed = (*vm)["seed"].as<std::uint64_t>();
    config.classic_slack = slack_option(*vm);
    config.classic_geometry = geometry_option(*vm);
    config.ksoftirqd_delay_ns = (*vm)["ksoftirqd-delay-ns"].as<std::uint64_t>();
    config.tick_jitter_ns = (*vm)["tick-jitter-ns"].as<std::uint64_t>();
    config.jitter_seed = (*vm)["jitter-seed"].as<std::uint64_t>();
    config.nohz_idle = (*vm)["nohz"].as<bool>();
    if ((*vm)["zero-cost"].as<bool>()) config.costs = CostModel::zero();
    for (const CostOption& c : kCostOptions) {
        if (!vm->count(c.name)) continue;
        const std::uint64_t v = (*vm)[c.name].as<std::uint64_t>();
        if (v > 1'000'000'000ull) throw UsageError(fmt::format("--{}: must be at most 1e9 ns, got {}", c.name, v));
        config.costs.*(c.field) = v;
    }

    const unsigned hz = config.hz;
    if (churn.connections < 1 || churn.connections > 50000000)
        throw UsageError(fmt::format("--connections: must be 1..50000000, got {}", churn.connections));
    if (!(churn.message_interval_ms >= 1) || churn.message_interval_ms > 1e9)
        throw UsageError(fmt::format("--message-interval: must be 1..1e9 ms, got {}",
                                     churn.message_interval_ms));
    if (vm->count("duration") && vm->count("ticks"))
        throw UsageError("--duration and --ticks: give one or the other");
    if (vm->count("ticks")) {
        config.ticks = (*vm)["ticks"].as<std::uint64_t>();
        if (config.ticks < 1 || config.ticks > 1'000'000'000ull)
            throw UsageError(fmt::format("--ticks: must be 1..1e9, got {}", config.ticks));
    } else {
        const double duration = vm->count("duration") ? (*vm)["duration"].as<double>() : 60.0;
        if (!(duration > 0) || duration * hz > 1e9 || std::llround(duration * hz) < 1)
            throw UsageError(fmt::format("--duration: must be at least one tick and at most 1e9 ticks, got {}", duration));
        config.ticks = static_cast<std::uint64_t>(std::llround(duration * hz));
    }
    if (config.tick_jitter_ns >= 1'000'000'000ull / hz)
        throw UsageError(fmt::format("--tick-jitter-ns: must be below the tick period ({} ns at HZ={}), got {}",
                                     1'000'000'000ull / hz, hz, config.tick_jitter_ns));
    if (config.ksoftirqd_delay_ns > 10'000'000'000ull)
        throw UsageError(fmt::format("--ksoftirqd-delay-ns: must be at most 1e10 ns, got {}", config.ksoftirqd_delay_ns));
    const std::string format = choice_option(*vm, "format", {"text", "json"});

    const WorkloadSpec workload{
        .name = "connection-churn",
        .description = fmt::format("connection churn, {} connections, a message every {} ms on average, seed {}",
                                   churn.connections, churn.message_interval_ms, churn.seed),
        .json = fmt::format("{{\"connections\": {}, \"message_interval_ms\": {}, \"seed\": {}}}", churn.connections,
                            churn.message_interval_ms, churn.seed),
        .factory = churn_workload(churn, config.ticks, config.tick_jitter_ns),
    };
    RunResult result;
    {
        ProgressBar bar("run");
        result = run_machine(design, config, workload, [&](double f) { bar.update(f); });
    }
    const std::string report = format == "json" ? format_run_json(result) : format_run_text(result);
    if (vm->count("output"))
        write_file_atomically((*vm)["output"].as<std::string>(), report);
    else
        fmt::print("{}", report);
    return kExitOk;
}

} // namespace timersim::cli
