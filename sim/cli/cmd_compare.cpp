#include "sim/report/atomic_file.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/output_paths.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/machine/comparison.hpp"
#include "sim/report/comparison_report.hpp"
#include "sim/report/group_report.hpp"
#include "sim/report/latency_histogram_report.hpp"
#include "sim/cli/machine_options.hpp"
#include "sim/cli/plot_runner.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/report_options.hpp"
#include "sim/cli/workload_options.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

constexpr double kDefaultDurationS = 120;
constexpr std::string_view kDefaultDesigns = "classic,modern,heap";

// The default designs, with the recording kernel's own design (a kernel
// trace's era) after the wheel it follows when they do not hold it.
std::string default_designs(std::optional<KernelTimerEra> era) {
    const std::string_view own = era ? kernel_design_name(*era) : std::string_view{};
    std::string list(kDefaultDesigns);
    if (own.empty() || ("," + list + ",").find(fmt::format(",{},", own)) != std::string::npos) return list;
    const std::size_t after_modern = list.find("modern") + std::string_view("modern").size();
    return list.insert(after_modern, fmt::format(",{}", own));
}

// "classic,modern,wheel:rfc-2015,...": registry designs by name or alias
// (or "all"), and the configurable wheel as wheel:SPEC, as often as there
// are geometries to compare; each spec is checked at `hz`.
std::vector<ComparedDesign> parse_designs(const std::string& list, unsigned hz) {
    std::vector<ComparedDesign> designs;
    if (list == "all") {
        for (const Design d : every_design()) designs.push_back({d, std::nullopt});
        return designs;
    }
    std::vector<std::string> names;
    std::string_view rest = list;
    while (true) {
        const auto comma = rest.find(',');
        const std::string name(rest.substr(0, comma));
        ComparedDesign d;
        std::string shown; // as the reports name it
        if (name == "wheel" || name.starts_with("wheel:")) {
            const DesignChoice c = design_choice(name, {}, hz);
            d = {c.design, c.wheel};
            shown = c.name;
        } else {
            const auto known = design_from_string(name);
            if (!known) {
                std::vector<std::string_view> all;
                for (const Design e : every_design()) all.push_back(to_string(e));
                throw UsageError(fmt::format("--design: unknown design '{}' (choose from {}, wheel:SPEC, or all)",
                                             name, fmt::join(all, ", ")));
            }
            d.design = *known;
            shown = to_string(*known);
        }
        if (std::find(names.begin(), names.end(), shown) != names.end())
            throw UsageError(fmt::format("--design: '{}' given twice", name));
        names.push_back(shown);
        designs.push_back(std::move(d));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return designs;
}

} // namespace

int run_compare(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("design", po::value<std::string>()->default_value(std::string(kDefaultDesigns)),
         fmt::format("comma-separated designs: {} ('all': every one but wheel:SPEC; any number of wheel:SPEC "
                     "(below), each labelled by its spec); with --ftrace of a 6.9 or later kernel the default adds "
                     "modern-6.9, that kernel's design",
                     design_names())
             .c_str());
    add_workload_options(options);
    add_machine_options(options, kDefaultDurationS);
    options.add_options()
        ("format", po::value<std::string>()->default_value("text"), "text, json or csv (with --by: the group table; schemas: docs/output.md)")
        ("output,o", po::value<std::string>(), "write the report to FILE (atomically; a device or FIFO is written into; -: stdout)")
        ("events", po::value<std::string>(), "write the event log (CSV: one row per enqueue, fire, cancel, cascade move and softirq run; docs/output.md) to FILE, as -o does")
        ("plot", po::value<std::string>(), "also draw the plots (PNG and SVG) into DIR with timersim-plot (needs python3-matplotlib)")
        ("jobs,j", po::value<unsigned>()->default_value(0),
         "designs simulated at the same time, each on its own thread (0: all of them, up to two per CPU; "
         "--events: 1; fewer when the memory available would not hold them). The output does not depend on it");
    add_report_options(options);
    const std::string description = std::string(
                "Run one workload on the simulated machine once per timer queue: the classic\n"
                "cascading wheel (Linux <= 4.7, with its timer slack), the modern expire-in-place\n"
                "wheel (Linux 4.8+, as in 6.1) and an exact heap. Every design gets the same\n"
                "machine (HZ, CPUs, NOHZ, cost model) and a fresh copy of the same workload: a\n"
                "generator with the same seed and rules, or a trace with the same events at the\n"
                "same times. What a workload does when a timer fires (a re-arm, a retransmit, a\n"
                "connection closed by its idle timer, a trace's callback events) happens when\n"
                "that design fires it and can change what follows, so the operations and their\n"
                "counts can differ between designs; an operation due while a design's softirq\n"
                "runs on that CPU waits for it to end.\n"
                "The report puts them side by side: precision error (fired jiffy minus requested\n"
                "expiry) as percentiles and histograms, cascade moves, softirq cost per tick,\n"
                "timer CPU time and memory, the timers that fired most by function (--by),\n"
                "each design relative to the one with the least softirq time, and ends with the\n"
                "trade-off in numbers. The default workload is TCP retransmit timers plus socket\n"
                "timeouts; --trace replays a recording.\n\n") + wheel_spec_help();
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim compare [workload options] [machine options] [--design D,...] [--format F] [-o FILE]",
            .description = description,
            .examples = "timersim compare\n"
                        "timersim compare --connections 10000 --duration 30 --events events.csv\n"
                        "timersim compare --workload mixed --cpus 4 --duration 300\n"
                        "timersim compare --hz 1000 --nohz --format json -o out.json\n"
                        "timersim compare --design classic,modern --slack off --plot plots\n"
                        "timersim compare --design modern,wheel:rfc-2015,wheel:spelvin-2016,wheel:bits=6x7:shift=2\n"
                        "timersim compare --ticks 2500 --by level --format csv\n"
                        "timersim compare --cpus 2 --hist --bucket-size 2 --entries 32",
        });
    if (!vm) return kExitOk;
    refuse_output_onto_input(*vm, {"output", "events"}, {"trace", "ftrace"});
    if (vm->count("events") && (*vm)["events"].as<std::string>() == "-" &&
        (!vm->count("output") || (*vm)["output"].as<std::string>() == "-"))
        throw UsageError("--events -: the report goes to stdout too; give -o FILE for it");

    // Created first: an -o or --events that cannot be written fails before
    // anything runs.
    std::optional<AtomicOutputFile> output;
    if (vm->count("output")) output.emplace((*vm)["output"].as<std::string>());
    std::optional<AtomicOutputFile> events_file;
    if (vm->count("events")) events_file.emplace((*vm)["events"].as<std::string>());
    const unsigned hz = hz_option(*vm);
    MachineConfig machine = machine_config(*vm, hz);
    std::vector<ComparedDesign> designs = parse_designs((*vm)["design"].as<std::string>(), hz);
    PlannedRun run = planned_run(*vm, std::move(machine), hz, kDefaultDurationS);
    // The default designs miss a 6.9+ kernel's own: it joins them.
    if ((*vm)["design"].defaulted()) designs = parse_designs(default_designs(run.kernel_era), hz);
    MachineConfig& config = run.plan.machine;
    use_traced_kernel_rules(*vm, run, config);
    const std::string format = choice_option(*vm, "format", {"text", "json", "csv"});
    const ReportChoice choice = report_choice(*vm, format, config);
    unsigned jobs = (*vm)["jobs"].as<unsigned>();
    if (jobs > 1024) throw UsageError(fmt::format("--jobs: must be 0..1024, got {}", jobs));
    // Default: every design at once, up to two per CPU. With one thread per
    // CPU, the design left over (three on two CPUs) ran alone at the end
    // while the other CPUs idled (the demo: 12.1-12.6 s of wall time with
    // --jobs 2, 9.9-10.7 s with 3, same output).
    if (jobs == 0) jobs = 2 * std::max(1u, std::thread::hardware_concurrency());
    // Designs run at once each hold the whole workload: as many as fit.
    if (vm->count("events")) jobs = 1;
    jobs = fit_jobs_to_memory(run.memory, std::min<unsigned>(jobs, static_cast<unsigned>(designs.size())));
    std::optional<std::string> plot_dir;
    if (vm->count("plot")) {
        plot_dir = (*vm)["plot"].as<std::string>();
        if (plot_dir->empty()) throw UsageError("--plot: give a directory");
        prepare_plot_dir(*plot_dir);
    }

    Comparison result;
    {
        std::optional<EventLog> events;
        if (events_file) events.emplace(events_file->get());
        ProgressBar bar("compare");
        result = compare_designs(designs, config, run.plan.workload, [&](double f) { bar.update(f); },
                                 events ? &*events : nullptr, jobs);
        if (events) {
            events->flush();
            events_file->commit();
        }
    }
    std::string report;
    if (choice.hist) {
        for (const RunResult& r : result.runs)
            report += (report.empty() ? "" : "\n") + format_latency_histogram(r, *choice.hist);
    } else if (format == "csv" && choice.by_given) {
        report = group_csv_header();
        for (const RunResult& r : result.runs) report += group_csv_rows(design_name(r), r.groups);
    } else {
        report = format == "json"  ? format_comparison_json(result)
                 : format == "csv" ? format_comparison_csv(result)
                                   : format_comparison_text(result, choice.group_rows);
    }
    if (output) {
        output->write(report);
        output->commit();
    } else
        fmt::print("{}", report);
    if (plot_dir) {
        // The plots read the JSON whatever --format the report was in.
        std::fflush(stdout);
        draw_plots(format == "json" ? report : format_comparison_json(result), *plot_dir);
    }
    return kExitOk;
}

} // namespace timersim::cli
