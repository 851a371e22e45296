// timersim step: the wheels tick by tick, drawn in the terminal. Options
// in, the stepper model (sim/machine/stepper.hpp) driven, each frame
// rendered by sim/report/step_report.hpp.
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/timeout_arg.hpp"
#include "sim/cli/trace_filter_options.hpp"
#include "sim/cli/workload_options.hpp"
#include "sim/machine/design_queues.hpp"
#include "sim/machine/machine_stepper.hpp"
#include "sim/machine/migration_hierarchy.hpp"
#include "sim/machine/stepper.hpp"
#include "sim/report/format_time.hpp"
#include "sim/report/json.hpp"
#include "sim/report/step_cpus_report.hpp"
#include "sim/report/step_report.hpp"
#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/replay/trace_feed.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

std::string describe_workload(const StepWorkload& w) {
    if (w.trace) return fmt::format("the trace {}, events applied after their jiffy's tick", *w.trace);
    if (w.churn)
        return fmt::format("connection churn, {} connections, a message every {} ms on average, seed {}",
                           w.churn->connections, w.churn->message_interval_ms, w.churn->seed);
    const bool pinned = std::any_of(w.places.begin(), w.places.end(), [](const TimeoutPlace& p) { return p.pinned; });
    return fmt::format("{} armed with mod_timer(){} at tick 0 (--timeouts {})",
                       plural(w.timeouts.size(), "timer", "timers"), pinned ? " (:pinned: mod_timer_pinned())" : "",
                       fmt::join(w.texts, ","));
}

// One --timeouts entry's place: TIMEOUT, TIMEOUT@CPU or TIMEOUT@CPU:pinned;
// `item` is left holding the TIMEOUT.
TimeoutPlace parse_place(std::string_view& item, unsigned cpus) {
    TimeoutPlace place;
    const auto at = item.find('@');
    if (at == std::string_view::npos) return place;
    const std::string_view whole = item;
    std::string_view cpu = item.substr(at + 1);
    item = item.substr(0, at);
    constexpr std::string_view pinned = ":pinned";
    if (cpu.ends_with(pinned)) {
        place.pinned = true;
        cpu.remove_suffix(pinned.size());
    }
    const auto [end, ec] = std::from_chars(cpu.data(), cpu.data() + cpu.size(), place.cpu);
    if (cpu.empty() || ec != std::errc{} || end != cpu.data() + cpu.size())
        throw UsageError(fmt::format("--timeouts: '{}': expected TIMEOUT@CPU or TIMEOUT@CPU:pinned, CPU a number",
                                     whole));
    if (place.cpu >= cpus)
        throw UsageError(fmt::format("--timeouts: '{}': CPU {}, but --cpus is {} (CPUs 0..{})", whole, place.cpu,
                                     cpus, cpus - 1));
    return place;
}

StepWorkload parse_workload(const po::variables_map& vm, unsigned hz, unsigned cpus) {
    StepWorkload w;
    if (vm.count("trace") && vm.count("ftrace")) throw UsageError("--trace and --ftrace: give one or the other");
    if (vm.count("trace") || vm.count("ftrace")) {
        const char* option = vm.count("trace") ? "trace" : "ftrace";
        if (vm.count("timeouts")) throw UsageError(fmt::format("--{} cannot be combined with --timeouts", option));
        for (const char* churn_option : {"connections", "message-interval", "seed"})
            if (!vm[churn_option].defaulted())
                throw UsageError(fmt::format("--{} cannot be combined with --{} (a connection-churn option)", option,
                                             churn_option));
        w.trace = vm[option].as<std::string>();
        w.trace_kind = vm.count("ftrace") ? TraceKind::ftrace : TraceKind::timersim;
        return w;
    }
    if (vm.count("timeouts")) {
        for (const char* churn_option : {"connections", "message-interval", "seed"})
            if (!vm[churn_option].defaulted())
                throw UsageError(fmt::format("--timeouts cannot be combined with --{} (a connection-churn option)",
                                             churn_option));
        std::string_view rest = vm["timeouts"].as<std::string>();
        while (true) {
            const auto comma = rest.find(',');
            const std::string_view typed = rest.substr(0, comma);
            std::string_view item = typed;
            w.places.push_back(parse_place(item, cpus));
            try {
                w.timeouts.push_back(parse_timeout_jiffies(item, hz));
            } catch (const std::invalid_argument& e) {
                throw UsageError(fmt::format("--timeouts: {}", e.what()));
            }
            w.texts.emplace_back(typed);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
        if (w.timeouts.size() > kMaxStepTimers)
            throw UsageError(fmt::format("--timeouts: at most {} timeouts, got {}", kMaxStepTimers, w.timeouts.size()));
        return w;
    }
    ConnectionChurnConfig c;
    c.hz = hz;
    c.connections = vm["connections"].as<std::uint32_t>();
    c.message_interval_ms = vm["message-interval"].as<double>();
    c.seed = vm["seed"].as<std::uint64_t>();
    if (c.connections < 1 || c.connections > kMaxStepTimers)
        throw UsageError(fmt::format("--connections: must be 1..{}, got {}", kMaxStepTimers, c.connections));
    if (!(c.message_interval_ms >= 1) || c.message_interval_ms > 1e9)
        throw UsageError(fmt::format("--message-interval: must be 1..1e9 ms, got {}", c.message_interval_ms));
    w.churn = c;
    return w;
}

struct Run {
    std::int64_t from;
    std::int64_t ticks;
    bool json;
};

template <class... Steppers>
void run_view(const Run& run, const View& view, const std::string& intro, Steppers&... steppers) {
    if (run.from > 0) {
        ProgressBar bar("step");
        for (std::int64_t t = 0; t < run.from; ++t) {
            (steppers.step(false), ...);
            if ((t & 1023) == 0) bar.update(static_cast<double>(t) / static_cast<double>(run.from));
        }
    }
    if (!run.json) fmt::print("{}", intro);
    // One frame: the same tick of every wheel, in the order given.
    const auto show = [&](const std::vector<TickReport>& reports) {
        if (!run.json) fmt::print("\n{}", frame_title(reports.front(), view));
        std::size_t i = 0;
        const auto one = [&](const auto& stepper) {
            const TickReport& r = reports[i];
            if (run.json) {
                fmt::print("{}", render_json(stepper.queue(), r, view));
            } else {
                if (i > 0) fmt::print("\n");
                fmt::print("{}", render_text(stepper.queue(), r, view));
            }
            ++i;
        };
        (one(steppers), ...);
    };
    // Braced lists evaluate left to right, so the wheels always step in order.
    show(std::vector<TickReport>{steppers.start_frame()...});
    for (std::int64_t t = 0; t < run.ticks; ++t) show(std::vector<TickReport>{steppers.step(true)...});
}

void step_workload(const Run& run, const StepWorkload& workload, TraceFeed* feed, const Clock& clock,
                   std::optional<std::int64_t> slack, bool classic_oldest_first, const classic::Geometry& geometry, const std::string& design,
                   const std::optional<WheelSpec>& wheel);
void step_machine(const Run& run, const StepWorkload& workload, const MachineStepConfig& config);

} // namespace

int run_step(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("ticks", po::value<std::int64_t>()->required(), "ticks to show (1..100000)")
        ("from", po::value<std::int64_t>()->default_value(0), "ticks to run silently first (0..1e9), counted from the start")
        ("timeouts", po::value<std::string>(),
         "arm one timer per listed timeout at tick 0 instead of running connection churn: "
         "comma-separated, jiffies (36) or time (144ms, 60s), each optionally @CPU or @CPU:pinned (--cpus)")
        ("trace", po::value<std::string>(),
         "replay a timersim trace (format v1, docs/trace-format.md) instead of connection churn; "
         "see the notes above")
        ("ftrace", po::value<std::string>(),
         "replay a kernel trace (ftrace text, trace-cmd report, perf script, trace.dat) as run --ftrace reads it; "
         "see the notes above")
        ("connections", po::value<std::uint32_t>()->default_value(200), "connection churn: connections, one timer each (1..1000000)")
        ("message-interval", double_value(1000), "connection churn: mean ms between two messages of one connection")
        ("seed", po::value<std::uint64_t>()->default_value(1), "connection churn: workload seed")
        ("design", po::value<std::string>()->default_value("both"), "classic, modern or both (the heap has no buckets to draw), one of the seeds' designs: "
         "scheme1, scheme2, scheme4, scheme5, scheme6, netty, cog (their rings and lists), or wheel:SPEC "
         "(its levels; timersim run --help lists the keys and presets)")
        ("format", po::value<std::string>()->default_value("text"), "text (80 columns) or json (JSON Lines: one object per tick and wheel)")
        ("cpus", po::value<unsigned>()->default_value(1),
         "simulated CPUs, 1..8: above 1, the machine of timersim run (modern-6.9 only, --timeouts only); "
         "see the notes above")
        ("nohz", po::bool_switch(), "with --cpus 2 or more: NOHZ idle, as timersim run --nohz")
        ("numa-nodes", po::value<unsigned>()->default_value(1),
         "with --cpus 2 or more: NUMA nodes, 1..CPUs, the groups of the timer-migration hierarchy (with --nohz)");
    add_hz_option(options);
    add_classic_options(options);
    add_trace_filter_options(options, {.from = "trace-from", .to = "trace-to"});
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim step (--timeouts LIST | --trace FILE | --ftrace FILE | [churn options]) [--from J] --ticks N "
                     "[options]",
            .description =
                "Show the wheels tick by tick: per tick and wheel, whether the tick raised\n"
                "TIMER_SOFTIRQ, what fired (and how late), what cascaded, what the softirq\n"
                "cost, what was armed, and every level drawn as a row of buckets (1-9 timers,\n"
                "+ for 10 or more, . for none) with ^ under the bucket the clock points at.\n"
                "Tick t sets jiffies to start + t; the start is INITIAL_JIFFIES for the HZ.\n"
                "Without --timeouts or --trace the workload is connection churn, as in\n"
                "timersim compare.\n"
                "\n"
                "--trace FILE: HZ and start_jiffies (tick 0) come from the trace's header (--hz,\n"
                "if given, must agree). Each event is applied at the jiffy its time falls in,\n"
                "after that jiffy's tick, in file order, to every wheel shown: arm and modify\n"
                "call mod_timer() (flags=pinned: mod_timer_pinned(), no classic slack), cancel\n"
                "calls del_timer(). A timer's first event fixes its flags (flags=deferrable: a\n"
                "deferrable timer; the modern view then also draws the deferrable base, rows\n"
                "dL0..) and its name (its label=, else its key). cpu= is ignored: step\n"
                "simulates one CPU. The trace is read as it goes, only as far as the last tick\n"
                "shown; bad input stops the run with FILE:LINE: what (field) and exit status 2.\n"
                "The trace filters (--cpu, --function, --trace-from, --trace-to: --from is the\n"
                "first tick shown) keep only the events they name; the last line counts what they\n"
                "kept and dropped up to the last tick shown.\n"
                "\n"
                "--ftrace FILE: a kernel trace, imported as timersim import and run --ftrace\n"
                "import it (docs/kernel-traces.md); its HZ is --hz if given (checked against\n"
                "its jiffies), else its '# hz=' line, else the HZ its jiffies show. It is read\n"
                "whole first, to decide its HZ; the rest is as for --trace.\n"
                "\n"
                "--cpus N (2..8): N CPUs of modern-6.9 on the simulated machine of timersim run\n"
                "--design modern-6.9 --cpus N [--nohz] [--numa-nodes K] (default costs), one\n"
                "tick at a time: per tick a row per CPU (its tick, TIMER_SOFTIRQ, pending timers\n"
                "of its local, global and deferrable bases, NOHZ idle), then what each CPU\n"
                "armed and fired; a migrator's fire of an idle CPU's global timer is marked\n"
                "'remote for CPU n'. --timeouts TIMEOUT@CPU arms the timer from CPU's task\n"
                "(default CPU 0) with mod_timer(), on its global base; TIMEOUT@CPU:pinned with\n"
                "mod_timer_pinned(), on its local base. The buckets are not drawn (--format\n"
                "json has every CPU's rows).",
            .examples = "timersim step --timeouts 36,300,20000 --ticks 3 --hz 1000\n"
                        "timersim step --timeouts 20000 --hz 1000 --from 19966 --ticks 2 --design classic\n"
                        "timersim step --ticks 5 --connections 200 --design modern\n"
                        "timersim step --timeouts 60s --ticks 1 --format json\n"
                        "timersim step --trace run.trace --from 990 --ticks 20 --design classic\n"
                        "timersim step --ftrace trace.txt.xz --ticks 10 --design modern\n"
                        "timersim step --timeouts 36,300 --ticks 2 --hz 1000 --design wheel:rfc-2015\n"
                        "timersim step --timeouts 20@1,30@1:pinned --cpus 2 --nohz --ticks 30 --hz 1000",
        });
    if (!vm) return kExitOk;

    const unsigned hz = hz_option(*vm);
    std::optional<std::int64_t> slack = slack_option(*vm);
    const classic::Geometry geometry = geometry_option(*vm);
    const unsigned cpus = (*vm)["cpus"].as<unsigned>();
    if (cpus < 1 || cpus > kMaxStepCpus)
        throw UsageError(fmt::format("--cpus: step shows 1..{} CPUs, got {}", kMaxStepCpus, cpus));
    const unsigned numa_nodes = (*vm)["numa-nodes"].as<unsigned>();
    if (numa_nodes < 1 || numa_nodes > cpus)
        throw UsageError(fmt::format("--numa-nodes: must be 1..{} (the CPUs), got {}", cpus, numa_nodes));
    const bool nohz = (*vm)["nohz"].as<bool>();
    if (nohz && cpus == 1)
        throw UsageError("--nohz: only with --cpus 2 or more (one CPU steps its queue with the tick always running)");
    // Several CPUs run the 6.9+ pull model: modern-6.9, the default there.
    const std::string design_text =
        cpus > 1 && (*vm)["design"].defaulted() ? std::string(Modern69Wheel::name) : (*vm)["design"].as<std::string>();
    if (design_from_string(design_text) == Design::heap)
        throw UsageError("--design: the heap has no buckets to draw; choose classic, modern or both");
    // A seed design by name or alias: its own name from here on; a wheel:SPEC
    // its spec (checked at the HZ given; a trace's HZ is checked below).
    std::optional<WheelSpec> wheel;
    std::string design = design_text;
    if (design_text != "both") {
        const DesignChoice c = design_choice(design_text, {}, hz);
        wheel = c.wheel;
        design = c.name;
    }
    const bool json = choice_option(*vm, "format", {"text", "json"}) == "json";
    Run run{(*vm)["from"].as<std::int64_t>(), (*vm)["ticks"].as<std::int64_t>(), json};
    if (run.ticks < 1 || run.ticks > 100000)
        throw UsageError(fmt::format("--ticks: must be 1..100000, got {}", run.ticks));
    if (run.from < 0 || run.from > 1000000000)
        throw UsageError(fmt::format("--from: must be 0..1000000000, got {}", run.from));
    if (cpus > 1 && design != Modern69Wheel::name)
        throw UsageError(fmt::format("--cpus {}: several CPUs run modern-6.9 only (the 6.9+ pull model), "
                                     "not --design {}", cpus, design_text));
    const StepWorkload workload = parse_workload(*vm, hz, cpus);
    if (cpus > 1 && workload.timeouts.empty())
        throw UsageError(fmt::format("--cpus {}: several CPUs take --timeouts only, not {}", cpus,
                                     workload.trace ? "a trace" : "connection churn"));
    const bool kernel_trace = workload.trace && workload.trace_kind == TraceKind::ftrace;
    const TraceFilter filter = trace_filter_option(*vm, kernel_trace, {.from = "trace-from", .to = "trace-to"});
    if (filter.active() && !workload.trace)
        throw UsageError(fmt::format("--{}: a trace filter, only with --trace or --ftrace",
                                     vm->count("cpu") ? "cpu" : vm->count("function") ? "function"
                                                            : vm->count("trace-from") ? "trace-from" : "trace-to"));
    try {
        std::optional<InputFile> file; // FILE or "-", compressed or not; InputError if it cannot be read
        std::optional<TraceFeed> feed;
        bool classic_oldest_first = false;
        if (workload.trace) {
            const HzChoice hz_choice{.option = (*vm)["hz"].defaulted() ? std::nullopt : std::optional(hz)};
            std::unique_ptr<TraceSource> source = open_trace_source(file.emplace(*workload.trace, kernel_trace ? InputFile::Directories::opened : InputFile::Directories::refused), workload.trace_kind, hz_choice, filter);
            // A kernel trace's classic wheel takes its kernel's rules, as
            // run's replay does (no slack up to 4.7; slots oldest first and
            // deferrable timers inferred before 4.2), decided before the
            // first event is read.
            if (kernel_trace) {
                const KernelVersionResolution kernel =
                    resolve_kernel_version(*source->kernel_evidence(), std::nullopt, file->name());
                source->use_kernel(kernel.range);
                use_traced_kernel_rules(*vm, kernel.era(), kernel.range.classic_slots_oldest_first(), slack,
                                        classic_oldest_first);
            }
            feed.emplace(std::move(source));
            if (!(*vm)["hz"].defaulted() && hz != feed->header().hz)
                throw UsageError(fmt::format("--hz {} differs from the trace's hz={}", hz, feed->header().hz));
        }
        // Resolved once: the trace's own clock, else a machine booted at --hz.
        const Clock clock = feed ? clock_of(feed->header()) : boot_clock(hz);
        StepWorkload shown = workload;
        if (file) shown.trace = file->name(); // "<stdin>" for "-"
        if (wheel) try {
                wheel->geometry(clock.hz);
            } catch (const WheelSpecError& e) {
                throw UsageError(fmt::format("--design: {}: {} (at the trace's hz={})", design, e.what(), clock.hz));
            }
        if (cpus > 1)
            step_machine(run, shown, MachineStepConfig{.hz = clock.hz, .start_jiffies = clock.start_jiffies,
                                                       .cpus = cpus, .numa_nodes = numa_nodes, .nohz_idle = nohz});
        else
            step_workload(run, shown, feed ? &*feed : nullptr, clock, slack, classic_oldest_first, geometry, design,
                          wheel);
        // The trace is read only as far as the ticks shown: so are the counts.
        if (feed && filter.active()) {
            if (json) {
                ordered_json line = ordered_json::object();
                line["filter"] = filter_json(filter, feed->filter_counts());
                fmt::print("{}\n", write_json(line, {}));
            } else {
                fmt::print("filter {}: {} (read up to the last tick shown)\n", describe_filter(filter),
                           describe_filter_counts(feed->filter_counts(), "events"));
            }
        }
    } catch (const TraceError& e) {
        // Bad input: exactly one line, no hint (the file is at fault, not the command line).
        std::fflush(stdout);
        fmt::print(stderr, "timersim: {}\n", e.what());
        return kExitUsage;
    }
    return kExitOk;
}

namespace {

// The intro's first line: the workload, the clock and the ticks shown.
std::string intro_line(const Run& run, const StepWorkload& workload, unsigned hz, Jiffies start) {
    std::string intro;
    const std::string shown = run.ticks == 1 ? fmt::format("tick {}", run.from + 1)
                                             : fmt::format("ticks {}..{}", run.from + 1, run.from + run.ticks);
    put(intro, fmt::format("timersim step: {}; HZ={} (a tick is {}), tick 0 is jiffies {}; showing {}.",
                           describe_workload(workload), hz, format_jiffies_as_time(1, hz), start, shown),
        0);
    return intro;
}

// "0-3 4-7; level 1: 0-7": the timer-migration groups, level by level.
std::string describe_groups(const MigrationHierarchy& h) {
    std::vector<std::string> levels;
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
        std::vector<std::string> groups;
        for (const MigrationGroup& g : h.levels[l]) groups.push_back(fmt::format("{}-{}", g.first_cpu, g.end_cpu - 1));
        levels.push_back(fmt::format("level {}: CPUs {}", l, fmt::join(groups, " ")));
    }
    return fmt::format("{}", fmt::join(levels, "; "));
}

void step_machine(const Run& run, const StepWorkload& workload, const MachineStepConfig& config) {
    const std::vector<std::string> labels = timer_labels(workload);
    static const bool no_deferrable = false;
    const View view{config.hz, config.start_jiffies, labels, no_deferrable, Modern69Wheel::name, config.cpus};
    std::string intro = intro_line(run, workload, config.hz, config.start_jiffies);
    const std::string nodes = config.numa_nodes > 1 ? fmt::format(" on {} NUMA nodes", config.numa_nodes) : "";
    put(intro,
        fmt::format("The machine: {} CPUs{}, timersim run's with --design modern-6.9{} (default costs); each CPU "
                    "has a local base (pinned timers), a global one and a deferrable one (6.9+).",
                    config.cpus, nodes, config.nohz_idle ? " --nohz" : ""),
        0);
    if (config.nohz_idle)
        put(intro,
            fmt::format("NOHZ idle: a CPU whose next timer is more than a tick away stops its tick and hands its "
                        "global timers to the timer-migration hierarchy ({}); a group's migrator, its lowest CPU "
                        "whose tick runs, expires them in its own softirq, and the last CPU to go idle wakes for "
                        "the earliest of them (docs/machine.md).",
                        describe_groups(build_migration_hierarchy(config.cpus, config.numa_nodes))),
            0);
    else
        put(intro, "No NOHZ: every tick runs on every CPU, and each CPU expires its own timers.", 0);
    put(intro,
        "Per tick, a row per CPU: its tick (ran; woke: its stopped tick's programmed timer event; -: stopped), "
        "whether the tick raised TIMER_SOFTIRQ, its pending timers (local/global/deferrable base) and what it "
        "does next; then what each CPU armed and fired, a migrator's fire from an idle CPU's global base marked "
        "\"remote for CPU n\". A tick shows the state after its softirqs; ticks in a row where no CPU ticks "
        "are shown once.",
        0);
    MachineStepper machine(config, workload);
    if (run.from > 0) {
        ProgressBar bar("step");
        constexpr std::int64_t kChunk = 1 << 16;
        for (std::int64_t t = 0; t < run.from; t += kChunk) {
            machine.skip(static_cast<std::uint64_t>(std::min(kChunk, run.from - t)));
            bar.update(static_cast<double>(t) / static_cast<double>(run.from));
        }
    }
    if (!run.json) fmt::print("{}", intro);
    // A run of quiet ticks (no CPU ticks, arms or fires) with the same
    // table is drawn once, when it ends.
    std::optional<TickReport> quiet_first, quiet_last;
    std::string quiet_table;
    const auto flush = [&] {
        if (quiet_first) fmt::print("\n{}{}", cpus_quiet_title(*quiet_first, *quiet_last, view), quiet_table);
        quiet_first.reset();
    };
    const auto show = [&](const std::vector<CpuTick>& frame) {
        if (run.json) {
            fmt::print("{}", render_cpus_json(frame, machine, view));
            return;
        }
        std::string table = render_cpus_text(frame, view);
        if (cpus_quiet(frame)) {
            if (quiet_first && table == quiet_table) {
                quiet_last = frame.front().report;
                return;
            }
            flush();
            quiet_first = quiet_last = frame.front().report;
            quiet_table = std::move(table);
            return;
        }
        flush();
        fmt::print("\n{}{}", frame_title(frame.front().report, view), table);
    };
    show(machine.start_frame());
    for (std::int64_t t = 0; t < run.ticks; ++t) show(machine.step());
    flush();
}

void step_workload(const Run& run, const StepWorkload& workload, TraceFeed* feed, const Clock& clock,
                   std::optional<std::int64_t> slack, bool classic_oldest_first, const classic::Geometry& geometry, const std::string& design,
                   const std::optional<WheelSpec>& wheel) {
    const unsigned hz = clock.hz;
    const Jiffies start = clock.start_jiffies;
    const std::vector<std::string> churn_labels = feed ? std::vector<std::string>{} : timer_labels(workload);
    static const bool no_deferrable = false;
    const View view{hz, start, feed ? feed->labels() : churn_labels, feed ? feed->deferrable_seen() : no_deferrable,
                    wheel ? std::string_view(design) : std::string_view()};
    std::string intro = intro_line(run, workload, hz, start);
    const bool seed_design = design != "classic" && design != "modern" && design != "both";
    if (wheel)
        put(intro,
            fmt::format("{}: {}. Each cell is one bucket: 1-9 timers, + for 10 or more, . for none. ^ marks the "
                        "bucket the clock points at on that level: (clk >> shift[L]) & (slots - 1), the clk "
                        "of the in-place base or the timer_jiffies of the cascading loop. A tick shows the "
                        "state after its softirq and its arms.",
                        design, to_string(wheel->geometry(hz))),
            0);
    else if (seed_design)
        put(intro,
            "Each cell is one bucket: 1-9 timers, + for 10 or more, . for none; a list is shown as its length. "
            "^ marks the bucket the next tick processes (clk & mask; cog ring r: (clk >> 6r) & 63). A tick "
            "shows the state after its softirq and its arms.",
            0);
    else
        put(intro,
            "Each cell is one bucket: 1-9 timers, + for 10 or more, . for none. ^ marks the bucket the clock "
            "points at on that level: (clk >> 3L) & 63 for modern level L, the matching index bits of "
            "timer_jiffies for classic tv1..tv5. A tick shows the state after its softirq and its arms.",
            0);

    const QueueParams params{.hz = hz,
                             .start_jiffies = start,
                             .classic_geometry = geometry,
                             .classic_slack = slack,
                             .classic_oldest_first = classic_oldest_first,
                             .wheel = wheel ? std::optional(wheel->geometry(hz)) : std::nullopt};
    if (design == "both") {
        Stepper<ClassicWheel> c(make_queue<ClassicWheel>(params), workload, feed);
        Stepper<ModernWheel> m(make_queue<ModernWheel>(params), workload, feed);
        run_view(run, view, intro, c, m);
        return;
    }
    with_design_queue(wheel ? Design::wheel : *design_from_string(design), params.wheel, [&]<TimerQueue Q>() {
        // Drawing a queue takes a render_text() for it (the heap has none:
        // no buckets, refused with its own words above).
        if constexpr (requires(const Q& q, const TickReport& r) { render_text(q, r, view); }) {
            Stepper<Q> s(make_queue<Q>(params), workload, feed);
            run_view(run, view, intro, s);
        } else {
            throw UsageError(fmt::format("--design: step cannot draw {}", design));
        }
    });
}

} // namespace

} // namespace timersim::cli
