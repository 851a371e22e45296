#include "sim/validate/replay_input.hpp"

#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/input/trace_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <utility>

namespace timersim::validate {

namespace {

std::size_t count_lines(std::string_view text) {
    std::size_t lines = 0;
    for (const char *p = text.data(), *end = p + text.size(); p < end; ++lines) {
        const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
        p = nl ? static_cast<const char*>(nl) + 1 : end;
    }
    return lines;
}

// At least the number of timer events in `text`, for reserving: each is on
// a line of its own that names its tracepoint (timer_start, ...), so holds
// "timer_". Not the line count: a capture recorded with other events too
// (sched_switch, irq, ...) may hold mostly lines that are not timer events,
// and a line count would reserve a ~150-byte Event for every one of them.
std::size_t count_timer_mentions(std::string_view text) {
    constexpr std::string_view kMention = "timer_";
    std::size_t mentions = 0;
    for (const char *p = text.data(), *end = p + text.size();; ++mentions) {
        const void* hit = memmem(p, static_cast<std::size_t>(end - p), kMention.data(), kMention.size());
        if (hit == nullptr) return mentions;
        p = static_cast<const char*>(hit) + kMention.size();
    }
}

// The line of the first "tracing_mark_write:" line that holds `marker`.
// Only lines holding the marker are looked at: a search of the whole text,
// not of every line.
std::optional<std::uint64_t> find_marker_line(std::string_view text, std::string_view marker) {
    const std::boyer_moore_horspool_searcher search(marker.begin(), marker.end());
    const auto find_from = [&](std::size_t from) {
        const auto hit = std::search(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(), search);
        return hit == text.end() ? std::string_view::npos : static_cast<std::size_t>(hit - text.begin());
    };
    for (std::size_t at = find_from(0); at != std::string_view::npos; at = find_from(at + 1)) {
        const std::size_t newline_before = text.rfind('\n', at);
        const std::size_t begin = newline_before == std::string_view::npos ? 0 : newline_before + 1;
        const std::size_t end = std::min(text.find('\n', at), text.size());
        if (text.substr(begin, end - begin).find("tracing_mark_write:") == std::string_view::npos) continue;
        return 1 + count_lines(text.substr(0, begin));
    }
    return std::nullopt;
}

// The lines that say a CPU's events are missing, in line order.
std::vector<LostMarker> find_lost_markers(std::string_view text) {
    std::vector<LostMarker> out;
    std::uint64_t line = 1;
    std::size_t pos = 0;
    const auto cpu_after = [](std::string_view rest, unsigned& cpu) {
        const auto end = rest.find_first_not_of("0123456789");
        const std::string_view digits = rest.substr(0, end);
        return !digits.empty() && std::from_chars(digits.data(), digits.data() + digits.size(), cpu).ec == std::errc{};
    };
    while (pos < text.size()) {
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view l = text.substr(pos, end - pos);
        l.remove_prefix(static_cast<std::size_t>(detail::skip_blanks(l.data(), l.data() + l.size()) - l.data()));
        unsigned cpu = 0;
        if (l.starts_with("CPU:") && (l.find("[LOST ") != std::string_view::npos ||
                                      l.find("EVENTS DROPPED]") != std::string_view::npos)) {
            if (cpu_after(l.substr(4), cpu)) out.push_back(LostMarker{line, cpu, "ring buffer lost events"});
        } else if (l.starts_with("##### CPU ") && l.find("buffer started") != std::string_view::npos) {
            if (cpu_after(l.substr(10), cpu)) out.push_back(LostMarker{line, cpu, "CPU buffer started"});
        }
        pos = end + 1;
        ++line;
    }
    return out;
}

} // namespace

ReplayInput read_replay_input(std::string_view text, std::string file_name, const ReplayOptions& options,
                              ReplayResult& result) {
    result.file = file_name;
    result.workload_start_line = find_marker_line(text, "timersim: workload start");

    FtraceReader reader(text, std::move(file_name), options.hz);
    if (options.force_hz) reader.force_hz();
    reader.set_filter(options.filter);
    ReplayInput input;
    std::vector<Event>& events = input.events;
    events.reserve(count_timer_mentions(text));
    // timer= -> its current incarnation and the index of its last event
    struct TimerState {
        std::size_t incarnation = 0;
        std::size_t last_event = 0;
    };
    std::unordered_map<std::uint64_t, TimerState> current;
    std::size_t& incarnations = input.incarnations;
    unsigned cpus = 1;
    FtraceEvent fe;
    while (reader.next(fe)) {
        Event e;
        e.type = fe.type;
        e.line = fe.line;
        e.timestamp_ns = fe.timestamp_ns;
        e.line_cpu = fe.line_cpu;
        e.timer = fe.timer;
        if (!fe.function.empty()) {
            // A handful of callbacks name most events: look the name up, copy it once.
            auto name = input.functions.find(fe.function);
            if (name == input.functions.end()) name = input.functions.emplace(fe.function).first;
            e.function = *name;
        }
        e.expires = fe.expires;
        e.cpu = fe.cpu;
        e.idx = fe.idx;
        e.deferrable = (fe.flags & kFtraceDeferrable) != 0;
        e.baseclk = fe.baseclk;
        e.jiffies = fe.jiffies();
        if (fe.bucket_expiry) result.kernel_6_9 = true;
        const auto [it, added] = current.try_emplace(e.timer);
        if (added) ++result.timers;
        else events[it->second.last_event].next_same_timer = events.size();
        if (added || e.type == FtraceEventType::timer_init) {
            if (!added) e.previous_incarnation = it->second.incarnation;
            it->second.incarnation = incarnations++;
        }
        it->second.last_event = events.size();
        e.incarnation = it->second.incarnation;
        // One wheel per CPU up to the highest seen: a CPU number no kernel
        // can have (a corrupt line) must not make millions of them.
        for (const auto& [field, cpu] : {std::pair{"cpu", e.cpu.value_or(0)}, std::pair{"CPU", e.line_cpu}})
            if (cpu >= kMaxReplayCpus)
                throw TraceError(result.file, e.line, field,
                                 fmt::format("CPU {} is beyond the {} CPUs a kernel can have (NR_CPUS)", cpu,
                                             kMaxReplayCpus));
        cpus = std::max(cpus, e.line_cpu + 1);
        if (e.cpu) cpus = std::max(cpus, *e.cpu + 1);
        events.push_back(std::move(e));
    }
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

    // next_same_cpu: the index of the next event printed by the same CPU.
    std::vector<std::size_t> next_of_cpu(cpus, events.size());
    for (std::size_t i = events.size(); i-- > 0;) {
        events[i].next_same_cpu = next_of_cpu[events[i].line_cpu];
        next_of_cpu[events[i].line_cpu] = i;
    }
    input.markers = find_lost_markers(text);
    return input;
}

} // namespace timersim::validate
