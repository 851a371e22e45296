#include "sim/cli/workload_options.hpp"
#include "sim/report/json.hpp"

#include "sim/cli/machine_options.hpp"

#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/trace_cost_choice.hpp"
#include "sim/cli/trace_filter_options.hpp"
#include "sim/validate/kernel_replay.hpp"
#include "workloads/generators/generator_catalog.hpp"
#include "workloads/generators/generator_parameters.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/deferrable_inference.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

WorkloadChoice trace_choice(const po::variables_map& vm, unsigned hz) {
    const bool ftrace = vm.count("ftrace") > 0;
    const std::string option = ftrace ? "--ftrace" : "--trace";
    if (vm.count("trace") && vm.count("ftrace")) throw UsageError("--trace and --ftrace: give one or the other");
    if (!vm["workload"].defaulted())
        throw UsageError(fmt::format("--workload and {}: give one or the other", option));
    for (const GeneratorParameterGroup& g : generator_parameter_groups())
        for (const GeneratorParameter& p : g.parameters)
            if (!vm[p.name].defaulted())
                throw UsageError(fmt::format("--{}: a generator parameter, not used with {}", p.name, option));
    if (!vm["seed"].defaulted()) throw UsageError(fmt::format("--seed: not used with {}", option));
    const std::string path = vm[ftrace ? "ftrace" : "trace"].as<std::string>();
    const TraceKind kind = ftrace ? TraceKind::ftrace : TraceKind::timersim;
    // A bad trace throws TraceError (FILE:LINE: what (field)); the CLI
    // prints that one line and exits 2.
    // Read once, whatever the input is (a pipe, "-", compressed): every
    // design of a compare replays the same events from memory.
    // A kernel trace's HZ: --hz if given (checked against the trace's
    // jiffies unless --force-hz), else its '# hz=' line, else its jiffies;
    // never the machine's default.
    const bool hz_given = vm.count("hz") && !vm["hz"].defaulted();
    const bool force = vm.count("force-hz") && vm["force-hz"].as<bool>();
    if (force && !ftrace) throw UsageError("--force-hz: only with --ftrace (a timersim trace's header fixes its HZ)");
    if (force && !hz_given) throw UsageError("--force-hz: give the HZ to force with --hz");
    const bool costs = vm["costs-from-trace"].as<bool>();
    if (costs && !ftrace)
        throw UsageError("--costs-from-trace: only with --ftrace (a timersim trace has no softirq or callback times)");
    TraceLoadOptions load;
    load.filter = trace_filter_option(vm, ftrace);
    load.costs_from_trace = costs;
    load.kernel = kernel_version_option(vm);
    // Lost history classed as `validate` classes it (lost_history.hpp).
    load.lost_history = classify_lost_history;
    if (vm.count("trace-memory")) {
        const std::uint64_t mib = vm["trace-memory"].as<std::uint64_t>();
        if (mib > (std::uint64_t{1} << 30)) throw UsageError(fmt::format("--trace-memory: MiB 0..1073741824, got {}", mib));
        load.max_event_bytes = static_cast<std::size_t>(mib) << 20;
    }
    if (load.kernel && !ftrace) throw UsageError("--kernel: only with --ftrace (a timersim trace models no kernel's version)");
    // --ftrace DIR: an LTTng trace (workloads/traces/input/lttng_ctf.hpp).
    InputFile in(path, ftrace ? InputFile::Directories::opened : InputFile::Directories::refused);
    const auto trace = load_trace(in, kind, HzChoice{.option = hz_given ? std::optional<unsigned>(hz) : std::nullopt,
                                                     .force = force}, load);
    require_kept(trace->filter(), trace->filter_counts(), trace->file(), ftrace ? "timer events" : "events");
    const TraceSummary& summary = trace->summary();
    double tail_s = 0;
    if (vm.count("tail")) {
        if (vm.count("duration") || vm.count("ticks"))
            throw UsageError("--tail: not with --duration or --ticks (they fix the run's length)");
        tail_s = vm["tail"].as<double>();
        if (!(tail_s >= 0 && tail_s <= 1e6)) throw UsageError(fmt::format("--tail: seconds 0..1000000, got {}", tail_s));
    }
    const std::string& name = trace->file(); // "<stdin>" for "-"
    TraceRequest choice;
    choice.spec.name = ftrace ? "ftrace" : "trace";
    choice.spec.description = fmt::format("{} {} ({} events, HZ={}{}, {} CPU{})", ftrace ? "kernel ftrace" : "trace", name,
                                          summary.events, summary.header.hz,
                                          summary.hz_source.empty() ? "" : " from " + summary.hz_source,
                                          summary.cpus, summary.cpus == 1 ? "" : "s");
    // The trace's parameters, in the published order: the filter and the
    // measured costs after what every trace has.
    ordered_json& params = choice.spec.params;
    params[ftrace ? "ftrace" : "trace"] = name;
    params["events"] = summary.events;
    params["hz"] = summary.header.hz;
    if (!summary.hz_source.empty()) params["hz_source"] = summary.hz_source;
    params["start_jiffies"] = summary.header.start_jiffies;
    params["cpus"] = summary.cpus;
    if (ftrace) {
        choice.kernel_era = summary.kernel.era();
        choice.kernel_slots_oldest_first = summary.kernel.range.classic_slots_oldest_first();
        choice.spec.description += "\n" + summary.kernel.describe();
        params["kernel"] = summary.kernel.source.empty() ? "unknown" : summary.kernel.range.describe();
        params["kernel_source"] = summary.kernel.source;
        if (summary.inferred_deferrable_timers > 0) {
            choice.spec.description += fmt::format(
                "\ndeferrable inferred for {} timer{} ({} arm{}): a kernel before 4.2 prints no timer flags, and "
                "each fired {} or more jiffies after it was due, as only a deferrable timer lets an idle CPU sleep",
                summary.inferred_deferrable_timers, summary.inferred_deferrable_timers == 1 ? "" : "s",
                summary.inferred_deferrable_arms, summary.inferred_deferrable_arms == 1 ? "" : "s",
                DeferrableInference::kLateJiffies);
            params["inferred_deferrable_timers"] = summary.inferred_deferrable_timers;
            params["inferred_deferrable_arms"] = summary.inferred_deferrable_arms;
        }
    }
    // Where the run ends when no --duration/--ticks says otherwise.
    const bool length_given = vm.count("duration") || vm.count("ticks");
    if (!length_given) {
        choice.spec.description +=
            fmt::format("\nreplay ends with the trace: its last event at {:.6f} s{}",
                        static_cast<double>(summary.end_ns()) / 1e9,
                        tail_s > 0 ? fmt::format(", then --tail {:g} s", tail_s) : std::string());
        params["last_event_s"] = static_cast<double>(summary.end_ns()) / 1e9;
        params["tail_s"] = tail_s;
    }
    // The machine: as recorded (a kernel trace's default) or ticking.
    const std::string machine = vm.count("machine") ? vm["machine"].as<std::string>() : (ftrace ? "recorded" : "ticking");
    if (machine != "recorded" && machine != "ticking")
        throw UsageError(fmt::format("--machine: recorded or ticking, got '{}'", machine));
    if (machine == "recorded") {
        if (!ftrace) throw UsageError("--machine recorded: only with --ftrace (a kernel trace records its machine)");
        if (vm.count("nohz") && vm["nohz"].as<bool>())
            throw UsageError("--nohz: not with --machine recorded (the recording says when each CPU ran its "
                             "softirq; --machine ticking for the simulated NOHZ)");
        choice.recorded = trace->recorded_machine();
        const RecordedMachine& rec = *choice.recorded;
        std::vector<std::string> per_cpu;
        for (std::size_t c = 0; c < rec.runs.size(); ++c) {
            std::uint64_t held = 0;
            for (const auto& [first, last] : rec.held[c]) held += last - first + 1;
            per_cpu.push_back(fmt::format("CPU {}: {} runs, own wakes after {} jiffies unless a run follows within {}{}",
                                          c, rec.runs[c].size(), rec.wake_delay[c], rec.wake_window[c],
                                          held ? fmt::format(", held {} {}", held, held == 1 ? "jiffy" : "jiffies") : std::string()));
        }
        choice.spec.description +=
            fmt::format("\nmachine as recorded: TIMER_SOFTIRQ where the trace ran it ({})", fmt::join(per_cpu, "; "));
        params["machine"] = "recorded";
        params["recorded_runs"] = rec.total_runs();
    } else if (ftrace) {
        params["machine"] = "ticking";
    }
    // On the recorded machine each callback takes as long as the
    // recording's did, unless a callback cost is asked for: --cost-callback-ns,
    // --zero-cost, or --costs-from-trace (its function's p50).
    const bool callback_cost_given = vm.count("cost-callback-ns") || (vm.count("zero-cost") && vm["zero-cost"].as<bool>()) ||
                                     trace->costs() != nullptr;
    ReplayCallbackCosts callback_costs{.as_recorded = machine == "recorded" && !callback_cost_given};
    if (callback_costs.as_recorded) {
        choice.spec.description += "\ncallbacks as recorded: each as long as the kernel's callback of that timer "
                                   "nearest in jiffies, across as many jiffies";
        params["callbacks"] = "as_recorded";
    }
    if (trace->filter().active()) {
        choice.spec.description += fmt::format("\nfilter {}: {}", describe_filter(trace->filter()),
                                               describe_filter_counts(trace->filter_counts(), ftrace ? "timer events" : "events"));
        params["filter"] = filter_json(trace->filter(), trace->filter_counts());
    }
    if (const TraceCosts* c = trace->costs()) {
        const TraceCostChoice chosen = trace_cost_choice(*c, vm);
        choice.costs = chosen.fields;
        callback_costs.by_function = chosen.by_function;
        choice.spec.description += "\n" + chosen.text;
        params["costs_from_trace"] = chosen.json;
    }
    choice.spec.factory = trace_replay(trace, nullptr, callback_costs);
    choice.clock = clock_of(summary.header);
    choice.cpus = summary.cpus;
    // The replay ends with the trace, at the first tick after its last
    // event: what the recording saw. Timers pending there are pending at
    // end, not fired at times the trace never covered, unless --tail asks
    // for that much more.
    const std::uint64_t tail_ticks =
        static_cast<std::uint64_t>(std::ceil(tail_s * static_cast<double>(summary.header.hz)));
    choice.natural_ticks = ticks_at(summary.header.hz, summary.end_ns()) + 1 + tail_ticks;
    // Without --duration/--ticks the run goes that far: a last event past
    // what the machine can simulate is the trace's fault, at its line.
    constexpr std::uint64_t kMaxRunTicks = 10'000'000'000ull; // run_machine()'s bound
    if (choice.natural_ticks > kMaxRunTicks && !length_given)
        throw TraceError(name, summary.last_event_line, "time",
                         fmt::format("time {} ns{} is past the longest run the machine simulates (1e10 ticks at "
                                     "HZ={}); give --duration or --ticks",
                                     summary.last_event_ns, tail_s > 0 ? " plus --tail" : "", summary.header.hz));
    return {.workload = std::move(choice), .memory = {}};
}

} // namespace

void add_workload_options(po::options_description& options, const char* default_workload) {
    const GeneratorParams defaults;
    const std::string names = fmt::format("{}", fmt::join(generator_names(), ", "));
    bool first = true;
    for (const GeneratorParameterGroup& g : generator_parameter_groups()) {
        po::options_description group(g.caption);
        if (first) {
            group.add_options()
                ("workload", po::value<std::string>()->default_value(default_workload),
                 fmt::format("generators to run together, comma-separated: {}. mixed is a busy web server: "
                             "tcp-retransmit, delayed-ack and socket-timeouts on every connection, keepalive "
                             "and time-wait on a tenth", names).c_str())
                ("seed", po::value<std::uint64_t>()->default_value(defaults.seed),
                 "workload seed; the same seed gives byte-identical output");
        }
        for (const GeneratorParameter& p : g.parameters) {
            if (p.integer)
                group.add_options()(p.name, po::value<std::uint64_t>()->default_value(static_cast<std::uint64_t>(p.get(defaults))), p.help);
            else
                group.add_options()(p.name, double_value(p.get(defaults)), p.help);
        }
        if (first) {
            group.add_options()
                ("costs-from-trace", po::bool_switch(),
                 "with --ftrace: measure the cost model from the trace's irq:softirq_entry/exit (vec=1) and "
                 "timer_expire_entry/exit times: each callback costs the p50 of its function's callbacks, "
                 "softirq entry the p50 of a run's time outside callbacks, expiry the p50 gap between two "
                 "callbacks (explicit --cost-*-ns win; docs/machine.md)")
                ("trace", po::value<std::string>(), "replay a timersim trace FILE instead of generators (its header fixes HZ); "
                 "- is standard input, xz, gzip and zstd are read as they are")
                ("ftrace", po::value<std::string>(), "replay kernel ftrace text or trace.dat FILE (timer events) instead of generators; "
                 "its HZ is --hz, else its '# hz=' line, else what its jiffies show (never assumed); "
                 "- is standard input, xz, gzip and zstd are read as they are")
                ("force-hz", po::bool_switch(), "with --ftrace and --hz: replay at --hz even where the trace's jiffies or its '# hz=' line show another HZ")
                ("kernel", po::value<std::string>(), (std::string("with --ftrace: ") + kKernelOptionHelp).c_str())
                ("machine", po::value<std::string>(),
                 "with --ftrace: recorded (the default: each CPU runs its timer softirq where and when in the "
                 "jiffy the trace shows the kernel ran it, wakes for a design's own timer where the trace shows no "
                 "run and the CPU was not held, and each callback takes as long as the kernel's did; "
                 "docs/machine.md) or ticking (every CPU ticks every jiffy, as for generators)")
                ("tail", po::value<double>(), "with --trace or --ftrace: simulate SECONDS past the trace's last event, for "
                 "the timers still pending there to fire (default 0: the replay ends with the trace, and those timers "
                 "are reported as pending at end)")
                ("trace-memory", po::value<std::uint64_t>(),
                 fmt::format("with --trace or --ftrace: MiB the trace's events may take in memory, 32 bytes each "
                             "(default {}); a trace with more is not kept, and each replay reads its events again "
                             "from the input as a stream (docs/trace-format.md)",
                             TraceLoadOptions::kDefaultMaxEventBytes >> 20).c_str());
        }
        options.add(group);
        first = false;
    }
    add_trace_filter_options(options);
}

WorkloadChoice workload_choice(const po::variables_map& vm, unsigned hz) {
    if (vm.count("trace") || vm.count("ftrace")) return trace_choice(vm, hz);
    for (const char* name : {"cpu", "function", "from", "to"})
        if (vm.count(name)) throw UsageError(fmt::format("--{}: a trace filter, only with --trace or --ftrace", name));
    if (vm["costs-from-trace"].as<bool>()) throw UsageError("--costs-from-trace: only with --ftrace");
    if (vm.count("trace-memory")) throw UsageError("--trace-memory: only with --trace or --ftrace");
    if (vm.count("kernel")) throw UsageError("--kernel: only with --ftrace (a generated workload models no kernel's version)");
    if (vm.count("machine")) {
        const std::string machine = vm["machine"].as<std::string>();
        if (machine == "recorded")
            throw UsageError("--machine recorded: only with --ftrace (a kernel trace records its machine)");
        if (machine != "ticking") throw UsageError(fmt::format("--machine: recorded or ticking, got '{}'", machine));
    }

    GeneratorParams params;
    params.seed = vm["seed"].as<std::uint64_t>();
    const std::string list = vm["workload"].as<std::string>();
    GeneratorWorkload generators;
    try {
        for (const GeneratorParameterGroup& g : generator_parameter_groups())
            for (const GeneratorParameter& p : g.parameters) {
                if (p.integer)
                    set_generator_parameter(params, p, vm[p.name].as<std::uint64_t>());
                else
                    set_generator_parameter(params, p, vm[p.name].as<double>());
            }
        generators = generator_workload(list, params);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // names the option at fault
    }
    const auto& parts = generators.parts;
    WorkloadChoice choice;
    bool only_bursts = true;
    for (const auto& [name, n] : parts) {
        const bool burst = name == "burst";
        only_bursts = only_bursts && burst;
        choice.memory.bytes_per_design += bytes_per_connection(name) * (burst ? params.burst.size : n);
    }
    choice.memory.option = only_bursts ? "--burst-size" : "--connections";
    choice.memory.what = only_bursts ? fmt::format("a burst of {} timers", params.burst.size)
                                     : fmt::format("'{}' with {} connections", list, params.connections);
    choice.workload = GeneratorRequest{.list = list,
                                       .params = params,
                                       .description = std::move(generators.description),
                                       .params_json = std::move(generators.params)};
    return choice;
}

std::string_view kernel_design_name(KernelTimerEra era) noexcept {
    switch (era) {
    case KernelTimerEra::cascading: return "classic";
    case KernelTimerEra::in_place: return "modern";
    case KernelTimerEra::pull_model: return "modern-6.9";
    }
    return "modern";
}

void use_traced_kernel_rules(const po::variables_map& vm, std::optional<KernelTimerEra> kernel_era,
                             bool slots_oldest_first, std::optional<std::int64_t>& classic_slack,
                             bool& classic_oldest_first) {
    if (kernel_era == KernelTimerEra::cascading && vm["slack"].defaulted()) classic_slack.reset();
    classic_oldest_first = slots_oldest_first;
}

void use_traced_kernel_rules(const po::variables_map& vm, const PlannedRun& run, MachineConfig& config) {
    use_traced_kernel_rules(vm, run.kernel_era, run.kernel_slots_oldest_first, config.classic_slack,
                            config.classic_oldest_first);
}

PlannedRun planned_run(const po::variables_map& vm, MachineConfig machine, unsigned hz, double default_duration_s) {
    RunRequest request{.machine = std::move(machine),
                       .hz = hz,
                       .length = run_length_option(vm, hz),
                       .default_duration_s = default_duration_s,
                       .cpus_given = !vm["cpus"].defaulted(),
                       .workload = {}};
    WorkloadChoice choice = workload_choice(vm, hz);
    std::optional<KernelTimerEra> kernel_era;
    bool oldest_first = false;
    if (const auto* trace = std::get_if<TraceRequest>(&choice.workload)) {
        kernel_era = trace->kernel_era;
        oldest_first = trace->kernel_slots_oldest_first;
    }
    request.workload = std::move(choice.workload);
    try {
        return {.plan = plan_run(std::move(request)),
                .memory = std::move(choice.memory),
                .kernel_era = kernel_era,
                .kernel_slots_oldest_first = oldest_first};
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // names the option at fault
    }
}

} // namespace timersim::cli
