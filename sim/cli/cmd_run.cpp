#include "sim/report/atomic_file.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/output_paths.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/machine/engine_run.hpp"
#include "sim/report/latency_histogram_report.hpp"
#include "sim/report/run_report.hpp"
#include "sim/cli/machine_options.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/report_options.hpp"
#include "sim/cli/workload_options.hpp"

#include <fmt/core.h>

#include <array>
#include <cmath>
#include <optional>

namespace timersim::cli {

namespace po = boost::program_options;

int run_run(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("design", po::value<std::string>()->default_value("modern"),
         fmt::format("timer queue: {} (wheel:SPEC below; the seeds' designs: docs/designs-schemes.md); with --ftrace "
                     "the default is the recording kernel's design where its version tells (classic up to 4.7, "
                     "modern 4.8-6.8, modern-6.9 from 6.9)",
                     design_names())
             .c_str());
    add_machine_options(options, 60);
    add_workload_options(options);
    options.add_options()
        ("format", po::value<std::string>()->default_value("text"), "text, json or csv (csv: the table of --by groups; schemas: docs/output.md)")
        ("output,o", po::value<std::string>(), "write the report to FILE (atomically; a device or FIFO is written into; -: stdout)")
        ("events", po::value<std::string>(), "write the event log (CSV: one row per enqueue, fire, cancel, cascade move and softirq run; docs/output.md) to FILE, as -o does");
    add_report_options(options);
    const std::string description = std::string(
                "Run one workload (a generator, --workload, or a recorded or kernel trace,\n"
                "--trace/--ftrace) on the simulated machine with one design: --cpus CPUs, each\n"
                "with its own timer base, tick and softirq; a tick every jiffy at its exact\n"
                "time, TIMER_SOFTIRQ raised when the queue says so, the softirq run at interrupt\n"
                "exit with the kernel's restart limits (10 passes, 2 ms in jiffies) and deferral\n"
                "to ksoftirqd, and simulated time charged for every enqueue, dequeue, cascade\n"
                "move, bucket scan, expiry and callback. Reports precision error in jiffies and\n"
                "in ns (timers behind a long softirq fire late), softirq durations, restarts,\n"
                "deferrals and the CPU time spent on timers. With --nohz the tick stops while\n"
                "the CPU is idle and the next timer is more than a tick away;\n"
                "--max-expiries-per-softirq N bounds each softirq run and carries the rest over.") + "\n\n" + wheel_spec_help();
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim run [options]",
            .description = description,
            .examples = "timersim run\n"
                        "timersim run --design classic --hz 1000 --duration 30 --connections 20000\n"
                        "timersim run --workload tcp-retransmit --loss 0.05 --design classic\n"
                        "timersim run --trace recorded.trace --design classic\n"
                        "timersim run --ftrace /sys/kernel/tracing/trace --hz 250\n"
                        "timersim run --design modern --ticks 5000 --cost-callback-ns 2000 --format json\n"
                        "timersim run --zero-cost --design heap --duration 10\n"
                        "timersim run --design classic --nohz --workload connection-churn --connections 50\n"
                        "timersim run --cpus 4 --format json\n"
                        "timersim run --connections 200000 --max-expiries-per-softirq 1000\n"
                        "timersim run --design classic --duration 10 --events events.csv\n"
                        "timersim run --ftrace capture.trace --by function\n"
                        "timersim run --cpus 4 --hist --hist-unit us --bucket-size 100 --entries 50\n"
                        "timersim run --design wheel:rfc-2015\n"
                        "timersim run --design wheel:bits=6x7:shift=2:mode=in-place:round=up",
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
    DesignChoice design_chosen = design_choice((*vm)["design"].as<std::string>(), {}, hz);
    machine.wheel = design_chosen.wheel;
    PlannedRun run = planned_run(*vm, std::move(machine), hz, 60);
    // A kernel trace replays the recording kernel's own design unless
    // --design names one.
    if ((*vm)["design"].defaulted() && run.kernel_era)
        design_chosen = design_choice(std::string(kernel_design_name(*run.kernel_era)), {}, hz);
    const Design design = design_chosen.design;
    MachineConfig& config = run.plan.machine;
    use_traced_kernel_rules(*vm, run, config);
    const std::string format = choice_option(*vm, "format", {"text", "json", "csv"});
    const ReportChoice choice = report_choice(*vm, format, config);
    fit_jobs_to_memory(run.memory, 1);

    RunResult result;
    {
        std::optional<EventLog> events;
        if (events_file) events.emplace(events_file->get());
        ProgressBar bar("run");
        result = run_machine(design, config, run.plan.workload, [&](double f) { bar.update(f); }, events ? &*events : nullptr);
        if (events) {
            events->flush();
            events_file->commit();
        }
    }
    const std::string report = choice.hist         ? format_latency_histogram(result, *choice.hist)
                               : format == "json" ? format_run_json(result)
                               : format == "csv"  ? format_run_csv(result)
                                                  : format_run_text(result, choice.group_rows);
    if (output) {
        output->write(report);
        output->commit();
    } else
        fmt::print("{}", report);
    return kExitOk;
}

} // namespace timersim::cli
