// KernelEventStream (kernel_event_stream.hpp): timer_* lines read into a
// window of KernelEvents, each with its timer object and its neighbours.
#include "workloads/traces/kernel/kernel_event_stream.hpp"

#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/remote_inference.hpp"
#include "workloads/traces/kernel/ring_fifo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace timersim {

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
//
// Every line is also passed on to `also`, if given.
class MarkerLines final : public FtraceObserver {
public:
    static constexpr std::uint32_t kNoCpu = KernelEvent::kNoWideCpu;

    explicit MarkerLines(FtraceObserver* next) : also(next) {}
    void timer_event(const FtraceEvent& e) override {
        if (also) also->timer_event(e);
    }
    void timer_softirq(const FtraceTimerSoftirq& s) override {
        if (also) also->timer_softirq(s);
        // A TIMER softirq's start or end ends any remote expiry on that CPU.
        if (s.line_cpu < remote_of.size()) remote_of[s.line_cpu] = kNoCpu;
        inferred.softirq(s.line_cpu);
    }
    void other_line(std::uint64_t line, std::string_view text) override {
        if (also) also->other_line(line, text);
        std::uint32_t cpu = 0;
        if (const auto at = find_after_space(text, "tmigr_handle_remote_cpu: cpu="); at != std::string_view::npos) {
            unsigned remote = 0;
            if (other_line_cpu(text.substr(0, at), cpu) && cpu_after(text.substr(at + 30), remote) &&
                cpu < kMaxKernelCpus && remote < kMaxKernelCpus) {
                if (remote_of.size() <= cpu) remote_of.resize(cpu + 1, kNoCpu);
                remote_of[cpu] = remote;
            }
        } else if (std::optional<LostMarker> m = lost_marker_of(line, text)) {
            lost.push_back(std::move(*m));
        }
    }

    FtraceObserver* also = nullptr;
    std::deque<LostMarker> lost; // read, not yet taken by the consumer
    std::vector<std::uint32_t> remote_of; // by CPU: the CPU whose global timers it expires remotely, or kNoCpu
    // Without timer_migration events (6.9+), the remote expiries inferred
    // from the timer events (remote_inference.hpp).
    RemoteExpiryInference inferred;

    std::uint32_t remote_cpu_of(std::uint32_t cpu) const { return cpu < remote_of.size() ? remote_of[cpu] : kNoCpu; }
};

} // namespace

std::optional<LostMarker> lost_marker_of(std::uint64_t line, std::string_view text) {
    unsigned cpu = 0;
    if (text.starts_with("CPU:") &&
        (text.find("[LOST ") != std::string_view::npos || text.find("EVENTS DROPPED]") != std::string_view::npos)) {
        if (cpu_after(text.substr(4), cpu)) return LostMarker{line, cpu, "ring buffer lost events"};
    } else if (text.starts_with("##### CPU ") && text.find("buffer started") != std::string_view::npos) {
        if (cpu_after(text.substr(10), cpu)) return LostMarker{line, cpu, "CPU buffer started"};
    }
    return std::nullopt;
}

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

struct KernelEventStream::Impl {
    Impl(FtraceReader& r, KernelStreamOptions o, IncarnationSlots& s)
        : reader(r), options(std::move(o)), slots(s), marker_lines(options.also) {}

    // timer= -> its current timer object, its last event read and its last
    // function= (a timer keeps its callback: compared, not looked up).
    struct TimerState {
        IncarnationIndex incarnation = 0;
        EventSeq last_event = kNoEvent;
        FunctionIndex function = kNoFunction;
        // The idx= of its last timer_start, while the trace shows it pending
        // (no cancel or expiry since): what its cancel was queued at.
        std::uint16_t queued_idx = KernelEvent::kNone16;
    };

    FtraceReader& reader;
    const KernelStreamOptions options;
    IncarnationSlots& slots;
    MarkerLines marker_lines;
    KernelStreamCounts counts;
    std::optional<JiffiesSample> first_jiffies; // of the first event read that shows jiffies

    RingFifo<KernelEvent> window; // by EventSeq: the front is the event handed out, or next
    bool current = false;     // window[0] is being replayed
    bool end_of_trace = false;
    std::vector<EventSeq> last_of_cpu; // by CPU: its last event read, or kNoEvent
    std::unordered_map<std::uint64_t, TimerState> timers;
    // Never moved: the indexes' keys are views of them.
    std::deque<std::string> functions;
    std::unordered_map<std::string_view, FunctionIndex> function_index;
    std::deque<std::string> modules;
    std::unordered_map<std::string_view, FunctionIndex> module_index;

    KernelEvent* in_window(EventSeq seq) {
        return seq >= window.head() && seq < window.tail() ? &window.at(seq) : nullptr;
    }

    static FunctionIndex intern(std::deque<std::string>& names,
                                std::unordered_map<std::string_view, FunctionIndex>& index, std::string_view name) {
        auto it = index.find(name);
        if (it == index.end()) {
            names.emplace_back(name);
            it = index.emplace(names.back(), static_cast<FunctionIndex>(names.size() - 1)).first;
        }
        return it->second;
    }
    FunctionIndex function_of(TimerState& t, std::string_view name) {
        if (t.function != kNoFunction && functions[t.function] == name) return t.function;
        return t.function = intern(functions, function_index, name);
    }

    // Reads one more timer event into the window: false at the end.
    bool read_one() {
        FtraceEvent fe;
        if (!reader.next(fe)) return false;
        // One wheel per CPU up to the highest seen: a CPU number no kernel
        // can have (a corrupt line) must not make millions of them. (And
        // KernelEvent keeps CPUs in 16 bits.)
        for (const auto& [field, cpu] : {std::pair{"cpu", fe.cpu.value_or(0)}, std::pair{"CPU", fe.line_cpu}}) {
            if (cpu >= kMaxKernelCpus)
                throw TraceError(options.file, fe.line, field,
                                 fmt::format("CPU {} is beyond the {} CPUs a kernel can have (NR_CPUS)", cpu,
                                             kMaxKernelCpus));
            if (options.cpus && cpu >= *options.cpus)
                throw TraceError(options.file, fe.line, field,
                                 fmt::format("CPU {}, which the first pass over the trace did not see (did the "
                                             "file change while it was read?)",
                                             cpu));
        }
        // FtraceReader refuses an idx beyond 1023: it fits KernelEvent's 16 bits.
        if (fe.idx && *fe.idx >= KernelEvent::kNone16) throw std::logic_error("KernelEventStream: idx beyond 16 bits");
        if (last_of_cpu.size() <= fe.line_cpu) last_of_cpu.resize(fe.line_cpu + 1, kNoEvent);
        const EventSeq seq = window.tail();
        KernelEvent& e = window.push_back();
        ++counts.events;
        e.type = fe.type;
        e.line = fe.line;
        e.timestamp_ns = fe.timestamp_ns;
        e.line_cpu = static_cast<std::uint16_t>(fe.line_cpu);
        e.timer = fe.timer;
        const auto [it, added] = timers.try_emplace(e.timer);
        TimerState& t = it->second;
        if (!fe.function.empty()) e.function = function_of(t, fe.function);
        if (!fe.module.empty()) e.module = intern(modules, module_index, fe.module);
        e.expires = fe.expires;
        e.set_cpu(fe.cpu);
        e.set_idx(fe.idx);
        e.deferrable = (fe.flags & kFtraceDeferrable) != 0;
        e.pinned = (fe.flags & kFtracePinned) != 0;
        e.irqsafe = (fe.flags & kFtraceIrqsafe) != 0;
        e.flags_known = fe.flags_known;
        set_remote_cpu(e, fe);
        e.set_baseclk(fe.baseclk);
        e.set_jiffies(fe.jiffies());
        if (!first_jiffies && e.jiffies()) first_jiffies = JiffiesSample{e.timestamp_ns, *e.jiffies()};
        if (added) {
            ++counts.timers;
        } else if (KernelEvent* previous = in_window(t.last_event)) {
            previous->next_of_timer_read = true;
            // (last_of_cpu is still the CPU's event before this one.)
            previous->next_of_timer_is_cpus_next =
                previous->line_cpu == e.line_cpu && last_of_cpu[e.line_cpu] == t.last_event;
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
        if (KernelEvent* previous = in_window(last_of_cpu[e.line_cpu])) {
            previous->next_same_cpu = seq;
            previous->next_same_cpu_read = true;
        }
        last_of_cpu[e.line_cpu] = seq;
        return true;
    }

    // The idx= a timer_cancel's timer was queued at (cancel_meaning.hpp),
    // set by a timer_start, given up by a
    // timer_cancel or timer_expire_entry.
    static void track_queued_idx(TimerState& t, KernelEvent& e) noexcept {
        switch (e.type) {
        case FtraceEventType::timer_start:
            t.queued_idx = e.idx() ? static_cast<std::uint16_t>(*e.idx()) : KernelEvent::kNone16;
            return;
        case FtraceEventType::timer_cancel:
            e.set_queued_idx(t.queued_idx);
            t.queued_idx = KernelEvent::kNone16;
            return;
        case FtraceEventType::timer_expire_entry: t.queued_idx = KernelEvent::kNone16; return;
        default: return;
        }
    }

    // Before 4.8 no CPU expires another's timers (a line of a later
    // kernel's tmigr_handle_remote_cpu is as any other). A 6.9+ trace
    // without any timer_migration event has its remote expiries inferred,
    // as a tmigr_handle_remote_cpu line would have marked them; with one,
    // the trace's own lines decide.
    void set_remote_cpu(KernelEvent& e, const FtraceEvent& fe) {
        if (options.remote == RemoteMarks::none) return;
        if (options.remote == RemoteMarks::from_lines) {
            e.set_remote_cpu(marker_lines.remote_cpu_of(fe.line_cpu));
            return;
        }
        RemoteExpiryInference& infer = marker_lines.inferred;
        if (e.type == FtraceEventType::timer_init) infer.forget(e.timer);
        if (e.type == FtraceEventType::timer_start) infer.start(e.timer, fe.cpu, e.deferrable, e.pinned);
        if (e.type == FtraceEventType::timer_expire_entry) {
            const RemoteExpiryInference::Expiry x = infer.expiry(e.timer, fe.line_cpu);
            if (x.remote_of != RemoteExpiryInference::kNone) ++counts.inferred_expiries;
            counts.inferred_runs += x.opens_run;
        }
        e.set_remote_cpu(infer.remote_of(fe.line_cpu));
    }

    // May `f` (window[0]) be handed out: does the window hold every event
    // its consumer may look at? The events with its timestamp (a later one is
    // read), and for a timer_cancel its timer's next event (with the CPU's
    // next, if that comes first), for a timer_expire_exit the CPU's next
    // two, unless the window already reaches past the time they could
    // count.
    bool ready(const KernelEvent& f) {
        if (end_of_trace) return true;
        const std::uint64_t newest = window.back().timestamp_ns;
        if (newest <= f.timestamp_ns) return false;
        const std::uint64_t reached = newest - f.timestamp_ns;
        switch (f.type) {
        case FtraceEventType::timer_cancel: return f.next_of_timer_read || reached > kDetachReachNs;
        case FtraceEventType::timer_expire_exit: {
            if (reached > kSameRunGapNs) return true;
            if (!f.next_same_cpu_read) return false;
            const KernelEvent& n = *in_window(f.next_same_cpu);
            return n.type != FtraceEventType::timer_cancel || n.next_same_cpu_read;
        }
        default: return true;
        }
    }

    bool read_or_end() {
        if (read_one()) return true;
        end_of_trace = true;
        reader.set_observer(nullptr);
        return false;
    }
};

KernelEventStream::KernelEventStream(FtraceReader& reader, KernelStreamOptions options, IncarnationSlots& slots)
    : impl_(std::make_unique<Impl>(reader, std::move(options), slots)), markers_(impl_->marker_lines.lost) {
    if (impl_->options.cpus) impl_->last_of_cpu.assign(*impl_->options.cpus, kNoEvent);
    reader.set_observer(&impl_->marker_lines);
}

KernelEventStream::~KernelEventStream() {
    // A reader read on after the stream is gone must not call it.
    if (!impl_->end_of_trace) impl_->reader.set_observer(nullptr);
}

bool KernelEventStream::any() {
    Impl& s = *impl_;
    return !s.window.empty() || (!s.end_of_trace && s.read_or_end());
}

KernelEvent* KernelEventStream::next() {
    Impl& s = *impl_;
    if (s.current) {
        last_ = s.window.front();
        s.window.pop_front();
        s.current = false;
    }
    for (;;) {
        if (!s.window.empty() && s.ready(s.window.front())) {
            s.current = true;
            return &s.window.front();
        }
        if (s.end_of_trace) return nullptr;
        s.read_or_end();
    }
}

bool KernelEventStream::ended() const noexcept { return impl_->end_of_trace; }

const KernelEvent* KernelEventStream::next_same_cpu(const KernelEvent& e) const {
    return e.next_same_cpu_read ? impl_->in_window(e.next_same_cpu) : nullptr;
}

KernelEvent* KernelEventStream::next_same_cpu(const KernelEvent& e) {
    return e.next_same_cpu_read ? impl_->in_window(e.next_same_cpu) : nullptr;
}

const KernelEvent& KernelEventStream::current() const { return impl_->current ? impl_->window.front() : last_; }

KernelEvent* KernelEventStream::ahead(std::size_t i) { return i < impl_->window.size() ? &impl_->window[i] : nullptr; }

std::size_t KernelEventStream::window() const noexcept { return impl_->window.size(); }

CancelMeaning KernelEventStream::cancel_meaning(const KernelEvent& e, CancelReach reach) const {
    // The timer's next event was judged as it was read (detaches_for(), at
    // the kernel's reach). A requeue's two lines are traced under the
    // timer's base lock (6.1 __mod_timer(): detach_if_pending() then
    // enqueue_timer() under base->lock), so no other CPU's event of the
    // timer comes between them: its start is both the timer's next event
    // and the CPU's.
    if (e.next_of_timer_read && e.next_of_timer_detaches) return CancelMeaning::expiry_detach;
    const KernelEvent* n = e.next_of_timer_read && e.next_of_timer_is_cpus_next ? next_same_cpu(e) : nullptr;
    const CancelNeighbour next = n ? neighbour(*n) : CancelNeighbour{};
    return timersim::cancel_meaning(neighbour(e), n ? &next : nullptr, nullptr, reach);
}

const std::deque<std::string>& KernelEventStream::functions() const noexcept { return impl_->functions; }
const std::deque<std::string>& KernelEventStream::modules() const noexcept { return impl_->modules; }
const KernelStreamCounts& KernelEventStream::counts() const noexcept { return impl_->counts; }
std::optional<JiffiesSample> KernelEventStream::first_jiffies() const noexcept { return impl_->first_jiffies; }

} // namespace timersim
