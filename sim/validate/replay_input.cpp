#include "sim/validate/replay_input.hpp"

#include "sim/validate/timer_bases.hpp"

#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
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

// text.find(" " + word): the word found by its first letter, rarer than
// the spaces that pad a line's task column (a search for the space stops at
// each of them, and this runs for every line but a timer's).
std::size_t find_after_space(std::string_view text, std::string_view word) {
    for (auto at = text.find(word, 1); at != std::string_view::npos; at = text.find(word, at + 1))
        if (text[at - 1] == ' ') return at - 1;
    return std::string_view::npos;
}

bool cpu_after(std::string_view rest, unsigned& cpu) {
    const auto end = rest.find_first_not_of("0123456789");
    const std::string_view digits = rest.substr(0, end);
    return !digits.empty() && std::from_chars(digits.data(), digits.data() + digits.size(), cpu).ec == std::errc{};
}

// The lines besides the timer events that the replay's pass needs, as the
// reader passes them: the lines that say a CPU's events are missing, in
// line order.
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
        }
    }

    std::deque<LostMarker> lost; // read, not yet taken by the replay
    std::vector<std::uint32_t> remote_of; // by CPU: the CPU whose global timers it expires remotely, or kNoCpu
    // Without timer_migration events (6.9+), the remote expiries inferred
    // from the timer events (remote_inference.hpp).
    RemoteExpiryInference inferred;

    std::uint32_t remote_cpu_of(std::uint32_t cpu) const { return cpu < remote_of.size() ? remote_of[cpu] : kNoCpu; }
};

} // namespace

IncarnationIndex IncarnationSlots::allocate() {
    IncarnationIndex i = 0;
    if (!free_.empty()) {
        i = free_.back();
        free_.pop_back();
    } else {
        // Numbers in use at once: the live timers, far below 2^32.
        if (size_ >= kNoIncarnation) throw std::length_error("IncarnationSlots: more than 2^32 timer objects at once");
        i = static_cast<IncarnationIndex>(size_++);
        birth_.push_back(0);
    }
    birth_[i] = born_++;
    return i;
}

struct ReplayStream::Impl {
    Impl(FtraceReader& r, const ReplayOptions& o, ReplayResult& res, IncarnationSlots& s)
        : reader(r), options(o), result(res), slots(s), survey(*o.survey) {}

    // timer= -> its current timer object, its last event read and its last
    // function= (a timer keeps its callback: compared, not looked up).
    struct TimerState {
        IncarnationIndex incarnation = 0;
        EventSeq last_event = kNoEvent;
        FunctionIndex function = kNoFunction;
        // The idx= of its last timer_start, while the trace shows it pending
        // (no cancel or expiry since): what its cancel was queued at.
        std::uint16_t queued_idx = Event::kNone16;
    };

    FtraceReader& reader;
    const ReplayOptions& options;
    ReplayResult& result;
    IncarnationSlots& slots;
    const ReplaySurvey& survey;
    MarkerLines marker_lines;
    bool infer_remote = false; // a 6.9+ trace without timer_migration events on more than one CPU

    std::deque<Event> window; // window[0] is event front_seq
    EventSeq front_seq = 0;
    bool current = false;     // window[0] is being replayed
    bool end_of_trace = false;
    std::vector<EventSeq> last_of_cpu; // by CPU: its last event read, or kNoEvent
    std::unordered_map<std::uint64_t, TimerState> timers;
    std::deque<std::string> functions; // never moved: function_index's keys are views of them
    std::unordered_map<std::string_view, FunctionIndex> function_index;
    std::uint64_t events_read = 0;
    std::uint64_t inferred_expiries = 0;
    std::uint64_t inferred_runs = 0;

    Event* in_window(EventSeq seq) {
        return seq >= front_seq && seq - front_seq < window.size() ? &window[seq - front_seq] : nullptr;
    }

    FunctionIndex function_of(TimerState& t, std::string_view name) {
        if (t.function != kNoFunction && functions[t.function] == name) return t.function;
        auto it = function_index.find(name);
        if (it == function_index.end()) {
            functions.emplace_back(name);
            it = function_index.emplace(functions.back(), static_cast<FunctionIndex>(functions.size() - 1)).first;
        }
        return t.function = it->second;
    }

    // Reads one more timer event into the window: false at the end.
    bool read_one() {
        FtraceEvent fe;
        if (!reader.next(fe)) return false;
        // One wheel per CPU up to the highest seen: a CPU number no kernel
        // can have (a corrupt line) must not make millions of them. (And
        // Event keeps CPUs in 16 bits.)
        for (const auto& [field, cpu] : {std::pair{"cpu", fe.cpu.value_or(0)}, std::pair{"CPU", fe.line_cpu}}) {
            if (cpu >= kMaxReplayCpus)
                throw TraceError(result.file, fe.line, field,
                                 fmt::format("CPU {} is beyond the {} CPUs a kernel can have (NR_CPUS)", cpu,
                                             kMaxReplayCpus));
            if (cpu >= survey.cpus)
                throw TraceError(result.file, fe.line, field,
                                 fmt::format("CPU {}, which the first pass over the trace did not see (did the "
                                             "file change while it was read?)",
                                             cpu));
        }
        // FtraceReader refuses an idx beyond 1023: it fits Event's 16 bits.
        if (fe.idx && *fe.idx >= Event::kNone16) throw std::logic_error("ReplayStream: idx beyond 16 bits");
        const EventSeq seq = front_seq + window.size();
        Event& e = window.emplace_back();
        ++events_read;
        e.type = fe.type;
        e.line = fe.line;
        e.timestamp_ns = fe.timestamp_ns;
        e.line_cpu = static_cast<std::uint16_t>(fe.line_cpu);
        e.timer = fe.timer;
        const auto [it, added] = timers.try_emplace(e.timer);
        TimerState& t = it->second;
        if (!fe.function.empty()) e.function = function_of(t, fe.function);
        e.expires = fe.expires;
        e.set_cpu(fe.cpu);
        e.set_idx(fe.idx);
        e.deferrable = (fe.flags & kFtraceDeferrable) != 0;
        e.pinned = (fe.flags & kFtracePinned) != 0;
        set_remote_cpu(e, fe);
        e.set_baseclk(fe.baseclk);
        e.set_jiffies(fe.jiffies());
        if (added) {
            ++result.timers;
        } else if (Event* previous = in_window(t.last_event)) {
            previous->next_of_timer_read = true;
            if (previous->type == FtraceEventType::timer_cancel)
                previous->next_of_timer_detaches = detaches_for(neighbour(*previous), neighbour(e));
        }
        if (added || e.type == FtraceEventType::timer_init) {
            if (!added) e.previous_incarnation = t.incarnation;
            t.incarnation = slots.allocate();
        }
        t.last_event = seq;
        track_queued_idx(t, e);
        e.incarnation = t.incarnation;
        if (Event* previous = in_window(last_of_cpu[e.line_cpu])) {
            previous->next_same_cpu = seq;
            previous->next_same_cpu_read = true;
        }
        last_of_cpu[e.line_cpu] = seq;
        return true;
    }

    // The idx= a timer_cancel's timer was queued at (cancel_meaning.hpp),
    // kept as FtraceImporter keeps it: set by a timer_start, given up by a
    // timer_cancel or timer_expire_entry.
    static void track_queued_idx(TimerState& t, Event& e) noexcept {
        switch (e.type) {
        case FtraceEventType::timer_start:
            t.queued_idx = e.idx() ? static_cast<std::uint16_t>(*e.idx()) : Event::kNone16;
            return;
        case FtraceEventType::timer_cancel:
            e.set_queued_idx(t.queued_idx);
            t.queued_idx = Event::kNone16;
            return;
        case FtraceEventType::timer_expire_entry: t.queued_idx = Event::kNone16; return;
        default: return;
        }
    }

    // Before 4.8 no CPU expires another's timers (the classic replay
    // treats a line of a later kernel's tmigr_handle_remote_cpu as any
    // other). A 6.9+ trace without any timer_migration event has its remote
    // expiries inferred, checked as a tmigr_handle_remote_cpu line would
    // have had them checked; with one, the trace's own lines decide.
    void set_remote_cpu(Event& e, const FtraceEvent& fe) {
        if (result.kernel_classic) return;
        if (!infer_remote) {
            e.set_remote_cpu(marker_lines.remote_cpu_of(fe.line_cpu));
            return;
        }
        RemoteExpiryInference& infer = marker_lines.inferred;
        if (e.type == FtraceEventType::timer_init) infer.forget(e.timer);
        if (e.type == FtraceEventType::timer_start) infer.start(e.timer, fe.cpu, e.deferrable, e.pinned);
        if (e.type == FtraceEventType::timer_expire_entry) {
            const RemoteExpiryInference::Expiry x = infer.expiry(e.timer, fe.line_cpu);
            if (x.remote_of != RemoteExpiryInference::kNone) ++inferred_expiries;
            inferred_runs += x.opens_run;
        }
        e.set_remote_cpu(infer.remote_of(fe.line_cpu));
    }

    // May `f` (window[0]) be replayed: does the window hold every event its
    // replay may look at? The events with its timestamp (a later one is
    // read), and for a timer_cancel its timer's next event (with the CPU's
    // next, if that comes first), for a timer_expire_exit the CPU's next
    // two, unless the window already reaches past the time they could
    // count.
    bool ready(const Event& f) {
        if (end_of_trace) return true;
        const std::uint64_t newest = window.back().timestamp_ns;
        if (newest <= f.timestamp_ns) return false;
        const std::uint64_t reached = newest - f.timestamp_ns;
        switch (f.type) {
        case FtraceEventType::timer_cancel: return f.next_of_timer_read || reached > kDetachReachNs;
        case FtraceEventType::timer_expire_exit: {
            if (reached > kSameRunGapNs) return true;
            if (!f.next_same_cpu_read) return false;
            const Event& n = *in_window(f.next_same_cpu);
            return n.type != FtraceEventType::timer_cancel || n.next_same_cpu_read;
        }
        default: return true;
        }
    }

    void finish() {
        reader.set_observer(nullptr);
        result.timer_events = events_read;
        const FtraceReaderStats& read = reader.stats();
        result.flags_garbled = read.starts_with_flags >= 2 && read.starts_with_dpi == read.starts_with_flags;
        result.filter = options.filter;
        result.filter_counts = reader.filter_counts();
        if (events_read == 0) result.hz = options.hz.value_or(0);
        if (infer_remote && events_read > 0)
            result.remote_inferred = RemoteInference{.expiries = inferred_expiries, .runs = inferred_runs};
    }
};

ReplayStream::ReplayStream(FtraceReader& reader, const ReplayOptions& options, ReplayResult& result,
                           IncarnationSlots& slots)
    : impl_(options.survey ? std::make_unique<Impl>(reader, options, result, slots)
                           : throw std::logic_error("ReplayStream: ReplayOptions::survey not given")),
      markers_(impl_->marker_lines.lost) {
    result.file = reader.file_name();
    if (!options.kernel) throw std::logic_error("ReplayStream: ReplayOptions::kernel not resolved");
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
    const ReplaySurvey& survey = *options.survey;
    result.workload_start_line = survey.workload_start;
    // On one CPU there is nothing to infer: no other CPU's timers, and no
    // hierarchy to trace (6.9 tmigr_init() returns early with one CPU).
    impl_->infer_remote = result.kernel_6_9 && !survey.timer_migration && survey.cpus > 1;
    impl_->last_of_cpu.assign(survey.cpus, kNoEvent);
    if (options.force_hz) reader.force_hz();
    reader.set_filter(options.filter);
    reader.set_observer(&impl_->marker_lines);
}

ReplayStream::~ReplayStream() = default;

bool ReplayStream::primed() {
    Impl& s = *impl_;
    if (s.window.empty() && !s.read_one()) {
        s.end_of_trace = true;
        s.finish();
        return false;
    }
    s.result.hz = s.reader.hz();
    s.result.cpus = s.survey.cpus;
    return true;
}

Event* ReplayStream::next() {
    Impl& s = *impl_;
    if (s.current) {
        last_ = s.window.front();
        s.window.pop_front();
        ++s.front_seq;
        s.current = false;
    }
    for (;;) {
        if (!s.window.empty() && s.ready(s.window.front())) {
            s.current = true;
            return &s.window.front();
        }
        if (s.end_of_trace) return nullptr;
        if (!s.read_one()) {
            s.end_of_trace = true;
            s.finish();
        }
    }
}

const Event* ReplayStream::next_same_cpu(const Event& e) const {
    return e.next_same_cpu_read ? impl_->in_window(e.next_same_cpu) : nullptr;
}

const Event& ReplayStream::current() const { return impl_->current ? impl_->window.front() : last_; }

Event* ReplayStream::ahead(std::size_t i) { return i < impl_->window.size() ? &impl_->window[i] : nullptr; }

std::size_t ReplayStream::window() const noexcept { return impl_->window.size(); }

const std::deque<std::string>& ReplayStream::functions() const noexcept { return impl_->functions; }

} // namespace timersim::validate
