#include "sim/validate/replay_input.hpp"

#include "sim/validate/timer_bases.hpp"

#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/remote_inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace timersim::validate {

namespace {

// The lines besides the timer events that validate needs, as the reader
// passes them: the first "tracing_mark_write:" line holding the workload
// marker, and the lines that say a CPU's events are missing, in line order.
//
// And, for a 6.9+ trace, which idle CPU's global timers each CPU is expiring
// remotely: 6.9 tmigr_handle_remote_cpu() prints "tmigr_handle_remote_cpu:
// cpu=N" on the migrator CPU just before timer_expire_remote(N), whose
// expiries follow on the migrator's lines, still in its TIMER softirq.
class MarkerLines final : public FtraceObserver {
public:
    void timer_event(const FtraceEvent&) override {}
    void timer_softirq(const FtraceTimerSoftirq& s) override {
        // A TIMER softirq's start or end ends any remote expiry on that CPU.
        if (s.line_cpu < remote_of.size()) remote_of[s.line_cpu] = kNoCpu;
        inferred.softirq(s.line_cpu);
    }
    void other_line(std::uint64_t line, std::string_view text) override {
        std::uint32_t cpu = 0;
        if (!timer_migration && is_timer_migration_line(text)) timer_migration = true;
        if (const auto at = find_after_space(text, "tmigr_handle_remote_cpu: cpu="); at != std::string_view::npos) {
            unsigned remote = 0;
            if (other_line_cpu(text.substr(0, at), cpu) && cpu_after(text.substr(at + 30), remote) &&
                cpu < kMaxReplayCpus && remote < kMaxReplayCpus) {
                if (remote_of.size() <= cpu) remote_of.resize(cpu + 1, kNoCpu);
                remote_of[cpu] = remote;
            }
        } else if (text.starts_with("CPU:") && (text.find("[LOST ") != std::string_view::npos ||
                                         text.find("EVENTS DROPPED]") != std::string_view::npos)) {
            if (cpu_after(text.substr(4), cpu)) lost.push_back(LostMarker{line, cpu, "ring buffer lost events"});
        } else if (text.starts_with("##### CPU ") && text.find("buffer started") != std::string_view::npos) {
            if (cpu_after(text.substr(10), cpu)) lost.push_back(LostMarker{line, cpu, "CPU buffer started"});
        } else if (!workload_start && text.find("timersim: workload start") != std::string_view::npos &&
                   text.find("tracing_mark_write:") != std::string_view::npos) {
            workload_start = line;
        }
    }

    std::vector<LostMarker> lost;
    std::optional<std::uint64_t> workload_start;
    std::vector<std::uint32_t> remote_of; // by CPU: the CPU whose global timers it expires remotely, or kNoCpu
    // Without timer_migration events (6.9+), the remote expiries inferred
    // from the timer events (remote_inference.hpp).
    bool timer_migration = false;
    RemoteExpiryInference inferred;

    std::uint32_t remote_cpu_of(std::uint32_t cpu) const { return cpu < remote_of.size() ? remote_of[cpu] : kNoCpu; }

private:
    // text.find(" " + word): the word found by its first letter, rarer than
    // the spaces that pad a line's task column (a search for the space
    // stops at each of them, and this runs for every line but a timer's).
    static std::size_t find_after_space(std::string_view text, std::string_view word) {
        for (auto at = text.find(word, 1); at != std::string_view::npos; at = text.find(word, at + 1))
            if (text[at - 1] == ' ') return at - 1;
        return std::string_view::npos;
    }
    static bool cpu_after(std::string_view rest, unsigned& cpu) {
        const auto end = rest.find_first_not_of("0123456789");
        const std::string_view digits = rest.substr(0, end);
        return !digits.empty() && std::from_chars(digits.data(), digits.data() + digits.size(), cpu).ec == std::errc{};
    }
};

} // namespace

KernelVersionResolution kernel_version_of_text(std::string_view text, const std::string& file_name,
                                               std::optional<unsigned> hz) {
    KernelVersionEvidence evidence;
    FtraceReader pass(text, file_name, hz);
    pass.allow_unknown_hz();
    pass.set_observer(&evidence);
    FtraceEvent e;
    while (pass.next(e)) {}
    evidence.finish(pass.stats());
    return resolve_kernel_version(evidence, std::nullopt, file_name);
}

ReplayInput read_replay_input(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result) {
    result.file = reader.file_name();
    if (!options.kernel) throw std::logic_error("read_replay_input(): ReplayOptions::kernel not resolved");
    result.kernel = *options.kernel;
    // The era decides the model: the classic wheel before 4.8 (its slots'
    // order by whether the kernel is before 4.2), the wheel of 4.8 and
    // later, and 6.9's bases. A trace with no timer_start or
    // timer_expire_entry line shows no version, and has nothing either
    // check could use either.
    const KernelTimerEra era = result.kernel.source.empty() ? KernelTimerEra::in_place
                                                            : result.kernel.era_for("validate", result.file);
    if (era == KernelTimerEra::cascading) {
        result.kernel_classic = true;
        const KernelVersionRange& range = result.kernel.range;
        constexpr KernelVersion hlist_slots{4, 2}; // 4.2: "timer: Remove FIFO guarantee"
        if (range.classic_slots_oldest_first())
            result.classic_oldest_first = true;
        else if (range.at_least < hlist_slots)
            throw TraceError(result.file, result.kernel.line ? result.kernel.line : 1, "kernel",
                             fmt::format("kernel {}{}: the order of a wheel slot's timers changed in 4.2; give the "
                                         "kernel with --kernel",
                                         range.describe(),
                                         result.kernel.source.empty() ? "" : " from " + result.kernel.source));
    }
    result.kernel_6_9 = era == KernelTimerEra::pull_model;
    if (options.force_hz) reader.force_hz();
    reader.set_filter(options.filter);
    MarkerLines marker_lines;
    reader.set_observer(&marker_lines);
    ReplayInput input;
    std::vector<Event>& events = input.events;
    // A filter keeps fewer; more than kMaxEvents is refused below, by line.
    if (!options.filter.active()) events.reserve(std::min<std::uint64_t>(options.expected_timer_events, kMaxEvents));
    // timer= -> its current incarnation, the index of its last event and its
    // last function= (a timer keeps its callback: compared, not looked up)
    struct TimerState {
        std::size_t incarnation = 0;
        std::size_t last_event = 0;
        FunctionIndex function = kNoFunction;
    };
    std::unordered_map<std::uint64_t, TimerState> current;
    // function= -> its index in input.functions (a handful of callbacks name
    // most events: look the name up, copy it once).
    struct NameHash {
        using is_transparent = void; // find() takes a string_view: no copy to look a name up
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, FunctionIndex, NameHash, std::equal_to<>> function_index;
    std::size_t& incarnations = input.incarnations;
    unsigned cpus = 1;
    std::uint64_t inferred_expiries = 0;
    std::uint64_t inferred_runs = 0;
    FtraceEvent fe;
    while (reader.next(fe)) {
        // Events and timer objects are numbered in 32 bits (EventIndex).
        if (events.size() >= kMaxEvents)
            throw TraceError(result.file, fe.line, "line",
                             fmt::format("more than {} timer events: validate a part (--from/--to, --cpu)", kMaxEvents));
        // One wheel per CPU up to the highest seen: a CPU number no kernel
        // can have (a corrupt line) must not make millions of them. (And
        // Event keeps CPUs in 16 bits.)
        for (const auto& [field, cpu] : {std::pair{"cpu", fe.cpu.value_or(0)}, std::pair{"CPU", fe.line_cpu}})
            if (cpu >= kMaxReplayCpus)
                throw TraceError(result.file, fe.line, field,
                                 fmt::format("CPU {} is beyond the {} CPUs a kernel can have (NR_CPUS)", cpu,
                                             kMaxReplayCpus));
        // FtraceReader refuses an idx beyond 1023: it fits Event's 16 bits.
        if (fe.idx && *fe.idx >= Event::kNone16) throw std::logic_error("read_replay_input(): idx beyond 16 bits");
        Event e;
        e.type = fe.type;
        e.line = fe.line;
        e.timestamp_ns = fe.timestamp_ns;
        e.line_cpu = static_cast<std::uint16_t>(fe.line_cpu);
        e.timer = fe.timer;
        const auto [it, added] = current.try_emplace(e.timer);
        if (!fe.function.empty()) {
            FunctionIndex& last = it->second.function;
            if (last == kNoFunction || input.functions[last] != fe.function) {
                auto name = function_index.find(fe.function);
                if (name == function_index.end()) {
                    name = function_index.emplace(fe.function, static_cast<FunctionIndex>(input.functions.size()))
                               .first;
                    input.functions.emplace_back(fe.function);
                }
                last = name->second;
            }
            e.function = last;
        }
        e.expires = fe.expires;
        e.set_cpu(fe.cpu);
        e.set_idx(fe.idx);
        e.deferrable = (fe.flags & kFtraceDeferrable) != 0;
        e.pinned = (fe.flags & kFtracePinned) != 0;
        // Before 4.8 no CPU expires another's timers (the classic replay
        // treats a line of a later kernel's tmigr_handle_remote_cpu as any other).
        if (!result.kernel_classic) e.set_remote_cpu(marker_lines.remote_cpu_of(fe.line_cpu));
        if (result.kernel_6_9) {
            RemoteExpiryInference& infer = marker_lines.inferred;
            if (e.type == FtraceEventType::timer_init) infer.forget(e.timer);
            if (e.type == FtraceEventType::timer_start) infer.start(e.timer, fe.cpu, e.deferrable, e.pinned);
            if (e.type == FtraceEventType::timer_expire_entry) {
                const RemoteExpiryInference::Expiry x = infer.expiry(e.timer, fe.line_cpu);
                if (x.remote_of != RemoteExpiryInference::kNone) ++inferred_expiries;
                inferred_runs += x.opens_run;
            }
            e.set_inferred_remote_cpu(infer.remote_of(fe.line_cpu));
        }
        e.set_baseclk(fe.baseclk);
        e.set_jiffies(fe.jiffies());
        if (added) ++result.timers;
        else events[it->second.last_event].next_same_timer = events.size();
        if (added || e.type == FtraceEventType::timer_init) {
            if (!added) e.previous_incarnation = it->second.incarnation;
            it->second.incarnation = incarnations++;
        }
        it->second.last_event = events.size();
        e.incarnation = it->second.incarnation;
        cpus = std::max(cpus, fe.line_cpu + 1);
        if (fe.cpu) cpus = std::max(cpus, *fe.cpu + 1);
        events.push_back(std::move(e));
    }
    reader.set_observer(nullptr);
    result.workload_start_line = marker_lines.workload_start;
    input.markers = std::move(marker_lines.lost);
    result.timer_events = events.size();
    const FtraceReaderStats& read = reader.stats();
    result.flags_garbled = read.starts_with_flags >= 2 && read.starts_with_dpi == read.starts_with_flags;
    result.filter = options.filter;
    result.filter_counts = reader.filter_counts();
    if (events.empty()) {
        result.hz = options.hz.value_or(0);
        return input;
    }
    result.hz = reader.hz();
    result.cpus = cpus;
    // A 6.9+ trace without any timer_migration event: its remote expiries
    // are the inferred ones, checked as a tmigr_handle_remote_cpu line
    // would have had them checked. With one, the trace's own lines decide.
    // On one CPU there is nothing to infer: no other CPU's timers, and no
    // hierarchy to trace (6.9 tmigr_init() returns early with one CPU).
    if (result.kernel_6_9 && !marker_lines.timer_migration && cpus > 1) {
        result.remote_inferred = RemoteInference{.expiries = inferred_expiries, .runs = inferred_runs};
        for (Event& e : events) e.set_remote_cpu(e.inferred_remote_cpu());
    }

    // next_same_cpu: the index of the next event printed by the same CPU.
    std::vector<std::size_t> next_of_cpu(cpus, events.size());
    for (std::size_t i = events.size(); i-- > 0;) {
        events[i].next_same_cpu = next_of_cpu[events[i].line_cpu];
        next_of_cpu[events[i].line_cpu] = i;
    }
    return input;
}

} // namespace timersim::validate
