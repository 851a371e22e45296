#include "sim/atomic_file.hpp"
#include "sim/cli.hpp"
#include "sim/common_options.hpp"
#include "sim/commands.hpp"
#include "sim/comparison_report.hpp"
#include "sim/progress.hpp"
#include "sim/queue_comparison.hpp"

#include <fmt/core.h>


namespace timersim::cli {

namespace po = boost::program_options;

namespace {

std::vector<Design> parse_designs(const std::string& list) {
    std::vector<Design> designs;
    std::string_view rest = list;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        const auto d = design_from_string(name);
        if (!d) throw UsageError(fmt::format("--design: unknown design '{}' (choose from classic, modern, heap)", name));
        if (std::find(designs.begin(), designs.end(), *d) != designs.end())
            throw UsageError(fmt::format("--design: '{}' given twice", name));
        designs.push_back(*d);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return designs;
}

} // namespace

int run_compare(std::span<const std::string> args) {
    po::options_description options("Options");
    add_hz_option(options);
    add_classic_options(options);
    options.add_options()
        ("connections", po::value<std::uint32_t>()->default_value(100000), "connections, one timer each (1..50000000)")
        ("duration", po::value<double>()->default_value(120), "simulated seconds")
        ("message-interval", po::value<double>()->default_value(1000), "mean ms between two messages of one connection (each message re-arms its timer)")
        ("seed", po::value<std::uint64_t>()->default_value(1), "workload seed; the same seed gives byte-identical output")
        ("design", po::value<std::string>()->default_value("classic,modern,heap"), "comma-separated designs: classic, modern, heap")
        ("format", po::value<std::string>()->default_value("text"), "text, json or csv")
        ("output,o", po::value<std::string>(), "write the report to FILE (atomically) instead of stdout")
        ("events", po::value<std::string>(), "write the per-timer event log (CSV: one row per enqueue, fire, cancel) to FILE");
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim compare [options]",
            .description =
                "Run one workload through the classic cascading wheel (Linux <= 4.7), the modern\n"
                "expire-in-place wheel (Linux 4.8+, as in 6.1) and an exact heap, on a CPU that\n"
                "ticks every jiffy, and print them side by side: precision error (fired jiffy\n"
                "minus requested expiry), cascade moves, softirq work and memory per timer.\n"
                "The workload is connection churn: each connection's timer is pushed back by\n"
                "every message and fires only when a connection goes quiet.",
            .examples = "timersim compare\n"
                        "timersim compare --connections 1000 --duration 10 --events events.csv\n"
                        "timersim compare --hz 1000 --connections 20000 --duration 60\n"
                        "timersim compare --design classic,modern --slack off --format json -o out.json",
        });
    if (!vm) return kExitOk;

    ComparisonConfig config;
    config.workload.hz = hz_option(*vm);
    config.workload.connections = (*vm)["connections"].as<std::uint32_t>();
    config.workload.message_interval_ms = (*vm)["message-interval"].as<double>();
    config.workload.seed = (*vm)["seed"].as<std::uint64_t>();
    config.duration_s = (*vm)["duration"].as<double>();
    config.designs = parse_designs((*vm)["design"].as<std::string>());
    config.classic_slack = slack_option(*vm);
    config.classic_geometry = geometry_option(*vm);

    if (config.workload.connections < 1 || config.workload.connections > 50000000)
        throw UsageError(fmt::format("--connections: must be 1..50000000, got {}", config.workload.connections));
    if (!(config.duration_s > 0) || config.duration_s * config.workload.hz > 1e9)
        throw UsageError(fmt::format("--duration: must be positive and at most 1e9 ticks, got {}", config.duration_s));
    if (!(config.workload.message_interval_ms >= 1) || config.workload.message_interval_ms > 1e9)
        throw UsageError(fmt::format("--message-interval: must be 1..1e9 ms, got {}",
                                     config.workload.message_interval_ms));
    const std::string format = choice_option(*vm, "format", {"text", "json", "csv"});

    ComparisonResult result;
    {
        std::optional<AtomicOutputFile> events_file;
        std::optional<EventLog> events;
        if (vm->count("events")) {
            events_file.emplace((*vm)["events"].as<std::string>());
            events.emplace(events_file->get());
        }
        ProgressBar bar("compare");
        result = run_comparison(config, [&](double f) { bar.update(f); }, events ? &*events : nullptr);
        if (events) {
            events->flush();
            events_file->commit();
        }
    }
    const std::string report = format == "json"  ? format_comparison_json(result)
                               : format == "csv" ? format_comparison_csv(result)
                                                 : format_comparison_text(result);
    if (vm->count("output"))
        write_file_atomically((*vm)["output"].as<std::string>(), report);
    else
        fmt::print("{}", report);
    return kExitOk;
}

} // namespace timersim::cli
