// Reading a trace into memory (LoadedTrace, workloads/traces/replay/trace_replay.hpp):
// any trace's events (trace_source.hpp), in one pass into LoadedTrace::Data.
#include "workloads/traces/replay/loaded_trace_data.hpp"
#include "workloads/traces/replay/shared_pass.hpp"

#include "workloads/traces/replay/trace_source.hpp"
#include "workloads/traces/input/trace_error.hpp"

#include <fmt/format.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <charconv>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace timersim {

namespace {

using trace_store::StoredEvent;

} // namespace

LoadedTrace::LoadedTrace(std::unique_ptr<Data> data) : data_(std::move(data)) {}
LoadedTrace::~LoadedTrace() = default;
const std::string& LoadedTrace::file() const noexcept { return data_->file; }
TraceKind LoadedTrace::kind() const noexcept { return data_->kind; }
const TraceSummary& LoadedTrace::summary() const noexcept { return data_->summary; }
std::size_t LoadedTrace::memory_bytes() const noexcept {
    std::size_t names = (data_->names.capacity() + data_->labels.capacity()) * sizeof(std::string);
    for (const auto* v : {&data_->names, &data_->labels})
        for (const std::string& s : *v) names += s.capacity() > 15 ? s.capacity() + 1 : 0; // beyond the SSO buffer
    return data_->chunks.size() * Data::kChunk * sizeof(StoredEvent) +
           data_->cpu_firsts.capacity() * sizeof(data_->cpu_firsts[0]) + names +
           data_->label_of.capacity() * sizeof(std::uint32_t);
}

const TraceFilter& LoadedTrace::filter() const noexcept { return data_->filter; }
const TraceFilterCounts& LoadedTrace::filter_counts() const noexcept { return data_->filter_counts; }
const TraceCosts* LoadedTrace::costs() const noexcept { return data_->costs ? &*data_->costs : nullptr; }
std::shared_ptr<const RecordedMachine> LoadedTrace::recorded_machine() const noexcept { return data_->recorded; }

std::shared_ptr<const LoadedTrace> load_trace(InputFile& in, TraceKind kind, const HzChoice& hz) {
    return load_trace(in, kind, hz, TraceLoadOptions{});
}

namespace {

// The events let go are up to --trace-memory of 2 MiB blocks, freed in
// the middle of the heap once glibc's dynamic mmap threshold has risen past
// them: glibc keeps such memory resident for reuse, and the load's later
// allocations (large, so mapped on their own) never reuse it: a 10 GB
// trace's load would keep its 256 MiB of dropped events resident to the end.
void give_back_freed_memory() noexcept {
#if defined(__GLIBC__)
    ::malloc_trim(0);
#endif
}

// "tcp_delack_timer[mod]" -> "tcp_delack_timer": the importer's label names
// the module too, the cost collector the function alone.
std::string_view function_of_label(std::string_view label) { return label.substr(0, label.find('[')); }

} // namespace

namespace {

// The kernel's version decides which design here is the recording
// kernel's: 6.9+ (LOCAL, GLOBAL and DEF bases, the pull model of timer
// migration) runs modern-6.9, not modern. Empty for 6.8 and before.
std::string unmodelled_kernel(const KernelVersionResolution& kernel) {
    const std::optional<KernelTimerEra> era = kernel.era();
    if (era == KernelTimerEra::pull_model)
        return fmt::format("the recording kernel is {} ({}): its design, with three timer bases and the pull model "
                           "of timer migration, is modern-6.9 (modern is 4.8-6.8's)",
                           kernel.range.describe(), kernel.source);
    if (!era && kernel.range.at_least >= KernelVersion{6, 8})
        return fmt::format("the recording kernel is {} ({}): its design is modern-6.9 if it is 6.9 or later, modern "
                           "if 6.8; pass --kernel to say which",
                           kernel.range.describe(), kernel.source);
    return "";
}

} // namespace

std::shared_ptr<const LoadedTrace> load_trace(InputFile& in, TraceKind kind, const HzChoice& hz,
                                              const TraceLoadOptions& options) {
    if (options.costs_from_trace && kind != TraceKind::ftrace)
        throw std::invalid_argument("costs_from_trace needs a kernel trace");
    // A timersim trace is read once here; kept for reading again in case
    // its events are too many to keep (a kernel text's KernelText keeps it).
    if (kind == TraceKind::timersim) in.keep_for_reading_again();
    auto data = std::make_unique<LoadedTrace::Data>();
    data->filter = options.filter;
    TraceCostCollector collector;
    KernelFireCollector fires;
    fires.spill_to_file(in.name());
    FtraceObserverTee observers{&fires, options.costs_from_trace ? &collector : nullptr};
    // Dense id -> its first label's function, while reading (costs only).
    std::vector<std::string> timer_functions;
    data->file = in.name();
    data->kind = kind;
    // Kernel text: read twice, a first pass decides its HZ (never assumed:
    // hz_inference.hpp), the second imports it. A timersim trace's header
    // fixes its clock.
    const std::unique_ptr<TraceSource> source =
        open_trace_source(in, kind, hz, options.filter, kind == TraceKind::ftrace ? &observers : nullptr);
    if (const FtraceImporter* importer = source->kernel_importer()) fires.use_clock(importer->clock());
    data->summary.hz_source = source->hz_source();
    if (const KernelVersionEvidence* evidence = source->kernel_evidence())
        data->summary.kernel = resolve_kernel_version(*evidence, options.kernel, in.name());
    data->summary.inferred_deferrable_timers = source->use_kernel(data->summary.kernel.range);
    TraceSummary& summary = data->summary;
    TraceEvent e;
    std::unordered_map<std::string, std::uint32_t> label_index;
    std::vector<std::uint8_t> named; // Data::name()'s flags, by dense id
    bool keep = true; // the events fit max_event_bytes so far
    while (source->next(e)) {
        if (!e.label.empty()) data->note_label(e.timer, e.label, label_index);
        if (keep && (data->count + 1) * sizeof(StoredEvent) > options.max_event_bytes) {
            data->drop_events();
            give_back_freed_memory();
            keep = false;
        }
        if (keep)
            data->push(trace_store::stored_event(e));
        else
            ++data->count;
        if (options.costs_from_trace) {
            if (e.timer >= timer_functions.size()) timer_functions.resize(std::size_t{e.timer} + 1);
            if (timer_functions[e.timer].empty()) timer_functions[e.timer] = function_of_label(e.label);
        }
        data->name(e.timer, e.key, e.label, named);
        summary.last_event_ns = e.time_ns;
        summary.last_event_line = source->line();
        ++summary.events;
        if (e.cpu && *e.cpu + 1 > summary.cpus) {
            summary.cpus = *e.cpu + 1;
            data->cpu_firsts.emplace_back(*e.cpu, source->line());
        }
    }
    summary.header = source->header();
    // Too many to keep: each replay reads them again (event_cursor.hpp).
    if (!keep) {
        data->reopen = source->reopener();
        data->passes = std::make_shared<SharedPasses>();
    }
    if (kind == TraceKind::ftrace) {
        data->unmodelled_kernel = unmodelled_kernel(data->summary.kernel);
        data->kernel_6_9 = data->summary.kernel.era() == KernelTimerEra::pull_model;
        // 6.9+ without timer_migration events: the remote runs the
        // recorded machine replays are inferred from the fires (none on one
        // CPU: 6.9 tmigr_init() builds no hierarchy there).
        if (data->kernel_6_9 && !fires.saw_timer_migration() && summary.cpus > 1) {
            const std::uint64_t inferred = fires.use_inferred_remote_runs();
            data->remote_inference = fmt::format(
                "remote expiries inferred: the trace has no timer_migration events; {} fires of another CPU's global "
                "timers taken as {} remote runs",
                inferred, fires.remote_runs().size());
        }
        // Kept only while the load needs them: the replays match theirs
        // against fire_index, built below.
        const KernelFires kernel_fires = fires.take_fires();
        // The kernel was seen running until its last fire: the replay goes
        // that far (tick n at floor(n * 1e9 / HZ), as the machine's).
        for (const KernelFire& f : kernel_fires) {
            const std::int64_t tick = jiffies_diff(f.now, summary.header.start_jiffies);
            if (tick > 0)
                summary.last_fire_ns = std::max(summary.last_fire_ns,
                                                tick_time_ns(static_cast<std::uint64_t>(tick), summary.header.hz));
        }
        const FtraceImporter* importer = source->kernel_importer();
        data->recorded = std::make_shared<const RecordedMachine>(RecordedMachine::from(
            kernel_fires, importer ? importer->recorded_runs() : std::vector<RecordedRunTime>{}, fires.unfired(),
            importer ? importer->clock() : nullptr, fires.remote_runs()));
        // The importer names each timer by its pointer, "0x%016x".
        for (std::uint32_t id = 0; id < data->names.size(); ++id) {
            const std::string& name = data->names[id];
            std::uint64_t pointer = 0;
            if (name.size() > 2 && std::from_chars(name.data() + 2, name.data() + name.size(), pointer, 16).ec == std::errc{})
                data->id_by_pointer.emplace(pointer, id);
        }
        // Lost history as validate classes it, where the trace gives cause
        // and its kernel's design is known (validate refuses a trace whose
        // version spans two designs).
        std::optional<LostHistoryClasses> classes;
        const std::optional<KernelTimerEra> era = data->summary.kernel.era();
        if (std::unique_ptr<InputFile> text;
            options.lost_history && era &&
            (fires.history_in_doubt() || options.filter.active() || era == KernelTimerEra::cascading) &&
            (text = source->kernel_text())) {
            auto passes = std::make_shared<InputPasses>(std::move(text));
            try {
                classes = options.lost_history(LostHistoryRequest{.pass = [passes] { return passes->next(); },
                                                                  .hz = summary.header.hz,
                                                                  .forced_hz = hz.force,
                                                                  .kernel = data->summary.kernel,
                                                                  .filter = options.filter});
            } catch (const TraceError& e) {
                // What the replay accepts does not depend on whether it asked.
                data->lost_history_unclassed = fmt::format(
                    "lost history not classed as validate classes it: validate's replay refuses the trace ({}); "
                    "a line saying a CPU lost events leaves out that CPU's fires to its base's next one",
                    e.what());
            }
        }
        data->fire_index = std::make_shared<const KernelFireIndex>(
            kernel_fires, fires.functions(),
            [&](std::uint64_t pointer) -> std::optional<std::uint32_t> {
                const auto it = data->id_by_pointer.find(pointer);
                if (it == data->id_by_pointer.end()) return std::nullopt;
                return it->second;
            },
            importer ? importer->clock() : nullptr, fires.lost_lines(), classes ? &*classes : nullptr);
    }
    data->skipped_lines = source->skipped_lines();
    if (const FtraceImporter* importer = source->kernel_importer())
        summary.inferred_deferrable_arms = importer->stats().inferred_deferrable_arms;
    data->filter_counts = source->filter_counts();
    if (options.costs_from_trace) {
        const TraceCosts& costs = data->costs.emplace(collector.result(in.name()));
        data->callback_cost_ns.reserve(timer_functions.size());
        for (const std::string& f : timer_functions) {
            const auto it = costs.callback_by_function.find(f);
            data->callback_cost_ns.push_back(it != costs.callback_by_function.end() ? it->second.p50
                                                                                    : costs.callbacks.p50);
        }
    }
    return std::make_shared<const LoadedTrace>(std::move(data));
}

std::shared_ptr<const LoadedTrace> load_trace(const std::string& path, TraceKind kind, const HzChoice& hz) {
    InputFile in(path, kind == TraceKind::ftrace ? InputFile::Directories::opened : InputFile::Directories::refused);
    return load_trace(in, kind, hz);
}

TraceSummary summarize_trace(const std::string& path, TraceKind kind, std::optional<unsigned> hz) {
    return load_trace(path, kind, HzChoice{.option = hz})->summary();
}

} // namespace timersim
