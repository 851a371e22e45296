// FtraceImporter: kernel timer events (FtraceReader) turned into timersim
// trace events: timer pointers to dense ids, timer_start/cancel pairs to
// arm, modify and cancel, events inside a callback marked cb=.
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/kernel/cancel_meaning.hpp"
#include "workloads/traces/kernel/kernel_event_stream.hpp"
#include "workloads/traces/kernel/ring_fifo.hpp"
#include "workloads/traces/layouts/key_index.hpp"

#include <algorithm>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace timersim {

namespace {

// A timer's key as the importer names it, "0x%016x" of its pointer, into
// `out` (18 characters and a NUL). Made for every event a replay reads:
// fmt::format_to_n took about 650 instructions for it, 7 % of a replay.
void pointer_token(char (&out)[2 + 16 + 1], std::uint64_t pointer) noexcept {
    static constexpr char kHex[] = "0123456789abcdef";
    out[0] = '0';
    out[1] = 'x';
    for (int i = 17; i >= 2; --i, pointer >>= 4) out[i] = kHex[pointer & 0xF];
    out[18] = '\0';
}

// Heterogeneous lookup: find a std::string key by a string_view.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

enum class Pending : std::uint8_t { unseen, pending, idle };

struct TimerState {
    std::uint64_t pointer = 0;
    Pending state = Pending::unseen;
};

// ready: an event to hand out; run: a timer_expire_entry, handed out as no
// event but timed in order with them (recorded_runs()).
enum class Slot : std::uint8_t { ready, run };

struct OutEvent {
    std::uint64_t time_ns = 0;
    TraceEventKind kind = TraceEventKind::cancel;
    Slot slot = Slot::ready;
    TraceFlags flags;
    std::uint32_t timer = 0; // TimerState index
    std::uint32_t label = kNoLabel;
    Jiffies at = 0;
    std::optional<std::uint32_t> cpu;
    std::optional<std::uint32_t> kidx;
    std::optional<Jiffies> know;
    // Inside the callback of timer `cb` (TimerState index) on its CPU;
    // cb_pending: that callback's timer_expire_exit has not been seen yet.
    std::uint32_t cb = kNoTimer;
    bool cb_pending = false;
    std::uint64_t cb_serial = 0;
    std::uint64_t line = 0; // of the kernel's line it comes from (a requeue: its timer_start)
    static constexpr std::uint32_t kNoLabel = 0xFFFFFFFFu;
    static constexpr std::uint32_t kNoTimer = 0xFFFFFFFFu;
};

// A timer callback running on a CPU: from its timer_expire_entry to its
// timer_expire_exit. The events its CPU traces in between come from the
// callback (cb=). Without a timer_expire_exit (the event was not recorded)
// nothing can be attributed: the callback ends unconfirmed at the CPU's next
// timer_expire_entry, after the pair window, or at the end of the trace, and
// its events lose their cb=.
struct OpenCallback {
    std::uint32_t timer = 0;
    std::uint64_t serial = 0;
    std::uint64_t entry_time = 0; // relative ns
    std::uint64_t first_seq = 0;  // output queue position at the entry
};

} // namespace

struct FtraceImporter::Impl {
    Impl(FtraceReader& r, std::uint64_t window, FtraceObserver* also)
        : reader(r), pair_window_ns(std::min(window, kDetachReachNs)),
          stream(r, KernelStreamOptions{.file = r.file_name(), .remote = RemoteMarks::none, .also = also}, slots) {}

    FtraceReader& reader;
    std::uint64_t pair_window_ns;
    // The trace's timer events, each cancel with the neighbours that say
    // what it was (kernel_event_stream.hpp: the one reading validate has).
    IncarnationSlots slots;
    KernelEventStream stream;
    FtraceImportStats stats;
    bool eof = false;
    std::optional<Jiffies> start_jiffies;
    const KernelClock* clock = nullptr;
    std::optional<ReplayTimes> times; // with a clock, from the first event on
    std::uint64_t latest = 0; // relative time of the last event read
    detail::KeyIndex index;
    std::vector<TimerState> timers;
    std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> label_ids;
    std::vector<std::string_view> labels;
    std::string label_buffer;
    RingFifo<OutEvent> queue; // converted events, by output position
    std::unordered_map<std::uint32_t, OpenCallback> callbacks; // by CPU
    std::uint64_t callback_serial = 0;
    char token[2 + 16 + 1] = {};
    char cb_token[2 + 16 + 1] = {};

    // Marks the event traced by `cpu`, if a callback is open there.
    void mark_callback(OutEvent& out, std::uint32_t cpu) {
        const auto it = callbacks.find(cpu);
        if (it == callbacks.end()) return;
        out.cb = it->second.timer;
        out.cb_serial = it->second.serial;
        out.cb_pending = true;
    }

    // Ends the callback open on `cpu`: its events keep cb= if its
    // timer_expire_exit was seen (`confirmed`), else they lose it.
    void close_callback(std::uint32_t cpu, bool confirmed) {
        const auto it = callbacks.find(cpu);
        if (it == callbacks.end()) return;
        const OpenCallback& c = it->second;
        for (std::uint64_t seq = std::max(c.first_seq, queue.head()); seq != queue.tail(); ++seq) {
            OutEvent& o = queue.at(seq);
            if (!o.cb_pending || o.cb_serial != c.serial) continue;
            o.cb_pending = false;
            if (!confirmed) o.cb = OutEvent::kNoTimer;
        }
        if (!confirmed) ++stats.unconfirmed_callbacks;
        callbacks.erase(it);
    }


    std::uint32_t timer_index(std::uint64_t pointer) {
        bool added = false;
        const std::uint32_t id = index.number(pointer, added);
        if (added) {
            timers.push_back(TimerState{.pointer = pointer});
            ++stats.timers;
        }
        return id;
    }

    // The stream numbers function names: a function without a module has
    // its label made once.
    std::vector<std::uint32_t> label_of_function; // by FunctionIndex; kNoLabel until made
    std::uint32_t label_id(const KernelEvent& e) {
        if (e.function == kNoFunction) return OutEvent::kNoLabel;
        const std::string_view function = stream.functions()[e.function];
        if (e.module != kNoFunction) return label_id(function, stream.modules()[e.module]);
        if (label_of_function.size() <= e.function) label_of_function.resize(e.function + 1, OutEvent::kNoLabel);
        std::uint32_t& label = label_of_function[e.function];
        if (label == OutEvent::kNoLabel) label = label_id(function, {});
        return label;
    }
    std::uint32_t label_id(std::string_view function, std::string_view module) {
        if (function.empty()) return OutEvent::kNoLabel;
        label_buffer.assign(function);
        if (!module.empty()) {
            label_buffer += '[';
            label_buffer += module;
            label_buffer += ']';
        }
        if (label_buffer.size() > kMaxLabel) label_buffer.resize(kMaxLabel);
        for (char& c : label_buffer)
            if (!detail::is_graph(c)) c = '?';
        const auto it = label_ids.find(std::string_view(label_buffer));
        if (it != label_ids.end()) return it->second;
        const auto id = static_cast<std::uint32_t>(labels.size());
        const auto [ins, ok] = label_ids.emplace(label_buffer, id);
        (void)ok;
        labels.push_back(std::string_view(ins->first));
        return id;
    }

    void fill_arm(OutEvent& out, const KernelEvent& e) {
        out.line = e.line;
        out.at = e.expires;
        out.flags.deferrable = e.deferrable;
        if (!e.flags_known && !inferred_deferrable.empty() &&
            std::binary_search(inferred_deferrable.begin(), inferred_deferrable.end(), e.timer)) {
            out.flags.deferrable = true;
            ++stats.inferred_deferrable_arms;
        }
        out.flags.pinned = e.pinned;
        out.flags.irqsafe = e.irqsafe;
        out.cpu = e.cpu();
        out.kidx = e.idx();
        out.know = e.jiffies();
        out.label = label_id(e);
    }

    // timer_expire_entry: the callback of `timer` starts on `cpu` (a callback
    // still open there never saw its exit).
    void open_callback(std::uint32_t cpu, std::uint32_t timer, std::uint64_t rel) {
        close_callback(cpu, false);
        callbacks.emplace(cpu, OpenCallback{timer, ++callback_serial, rel, queue.tail()});
    }

    // Each CPU's first timer_expire_entry at a jiffy, at its replay time
    // (none kept after forget_recorded_runs()).
    std::vector<RecordedRunTime> runs;
    bool keep_runs = true;
    std::unordered_map<std::uint32_t, Jiffies> last_run_jiffies; // by CPU

    void push_run(const KernelEvent& e, std::uint32_t ti, std::uint64_t rel) {
        if (!e.jiffies()) return; // a timer_expire_entry's now=
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        out.slot = Slot::run;
        out.cpu = e.line_cpu;
        out.know = *e.jiffies();
        queue.push_back() = out;
    }
    // Timers armed before the trace (arm_before_trace()), armed at its
    // first event.
    std::vector<PreTraceFire> pre_trace;
    bool pre_trace_armed = false;
    std::vector<std::uint64_t> inferred_deferrable; // infer_deferrable()
    void arm_pre_trace(std::uint64_t rel, std::uint64_t line) {
        pre_trace_armed = true;
        for (const PreTraceFire& f : pre_trace) {
            const std::uint32_t ti = timer_index(f.timer);
            OutEvent out;
            out.line = line; // armed at the trace's first event
            out.time_ns = rel;
            out.timer = ti;
            out.kind = TraceEventKind::arm;
            out.at = f.now;
            out.cpu = f.cpu;
            out.label = label_id(f.function, f.module);
            timers[ti].state = Pending::pending;
            queue.push_back() = out;
            ++stats.pre_trace_arms;
        }
        pre_trace = {};
    }
    // The jiffies at time 0, from the first event read that shows jiffies
    // (and the trace's first timestamp), unless a clock gave them.
    void note_start_jiffies() {
        if (start_jiffies) return;
        if (const std::optional<JiffiesSample> j = stream.first_jiffies())
            start_jiffies = j->jiffies - ticks_at(reader.hz(), j->time_ns - *reader.first_timestamp_ns());
    }
    std::uint64_t last_line = 0; // of the event next() gave last
    void time_run(const OutEvent& f);
    void process(KernelEvent& e);
    void process_cancel(const KernelEvent& e, std::uint32_t ti, std::uint64_t rel);
    void end_incarnation(const KernelEvent& e);
    bool next(TraceEvent& out);
};

// A run is timed like the events around it, on the jiffy its `now` shows,
// so a task's cancel traced before it in that jiffy is replayed before it.
void FtraceImporter::Impl::time_run(const OutEvent& f) {
    const std::uint64_t t = times ? times->next(*reader.first_timestamp_ns() + f.time_ns, f.know) : f.time_ns;
    const auto [it, first] = last_run_jiffies.try_emplace(*f.cpu, *f.know);
    if (!first && it->second == *f.know) return;
    it->second = *f.know;
    if (keep_runs) runs.push_back(RecordedRunTime{*f.cpu, *f.know, t});
}

void FtraceImporter::Impl::process(KernelEvent& e) {
    const std::uint64_t rel = e.timestamp_ns - *reader.first_timestamp_ns();
    latest = rel;
    if (clock && !times) {
        times.emplace(*clock, *reader.first_timestamp_ns());
        start_jiffies = times->start_jiffies();
    }
    note_start_jiffies();
    if (!pre_trace_armed) arm_pre_trace(rel, e.line);
    // Lost events are validate's to class; here they are only read past.
    stream.take_markers_before(e.line, [](const LostMarker&) {});
    if (e.consumed) return; // a requeue's timer_start: its cancel made the modify
    const std::uint32_t ti = timer_index(e.timer);
    TimerState& s = timers[ti];

    switch (e.type) {
    case FtraceEventType::timer_init:
        end_incarnation(e);
        return;
    case FtraceEventType::timer_expire_exit: {
        const auto it = callbacks.find(e.line_cpu);
        if (it != callbacks.end() && it->second.timer == ti) close_callback(e.line_cpu, true);
        return;
    }
    case FtraceEventType::timer_start: {
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        fill_arm(out, e);
        if (s.state == Pending::pending) {
            ++stats.anomalies; // a cancel went missing (lost events?)
            out.kind = TraceEventKind::modify;
            ++stats.modifies;
        } else {
            out.kind = TraceEventKind::arm;
            ++stats.arms;
        }
        s.state = Pending::pending;
        mark_callback(out, e.line_cpu);
        queue.push_back() = out;
        return;
    }
    case FtraceEventType::timer_cancel: process_cancel(e, ti, rel); return;
    case FtraceEventType::timer_expire_entry:
        if (s.state == Pending::pending) ++stats.anomalies; // its detach went missing
        s.state = Pending::idle;
        ++stats.expiries;
        push_run(e, ti, rel);
        open_callback(e.line_cpu, ti, rel);
        return;
    }
}

// A timer_cancel, read by the rule every replay reads it by
// (cancel_meaning.hpp), from the neighbours the stream holds.
void FtraceImporter::Impl::process_cancel(const KernelEvent& e, std::uint32_t ti, std::uint64_t rel) {
    TimerState& s = timers[ti];
    const bool was_pending = s.state == Pending::pending;
    s.state = Pending::idle;
    switch (stream.cancel_meaning(e, CancelReach{.requeue_ns = pair_window_ns})) {
    case CancelMeaning::expiry_detach:
        // The run loop's detach before the callback: its timer_expire_entry
        // is the expiry.
        ++stats.expiry_detaches;
        return;
    case CancelMeaning::requeue: {
        // mod_timer() moving a pending timer: detach (cancel) + enqueue
        // (start), one modify at the cancel's place.
        KernelEvent& start = *stream.next_same_cpu(e);
        start.consumed = true;
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        out.kind = TraceEventKind::modify;
        out.cpu = e.line_cpu;
        fill_arm(out, start);
        mark_callback(out, e.line_cpu);
        queue.push_back() = out;
        s.state = Pending::pending;
        ++stats.modifies;
        ++stats.requeues;
        return;
    }
    case CancelMeaning::del_timer:
        if (!was_pending) {
            ++stats.dropped_cancels; // armed before the trace began: the replay never had it
            return;
        }
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        out.kind = TraceEventKind::cancel;
        out.line = e.line;
        // del_timer() runs on the CPU that traced it (the timer may be
        // queued on another): the cancel is that CPU's work.
        out.cpu = e.line_cpu;
        mark_callback(out, e.line_cpu);
        queue.push_back() = out;
        ++stats.cancels;
        return;
    }
}

// A timer_init ends the timer object its timer= was (the stream numbers
// objects; nothing here is kept by them).
void FtraceImporter::Impl::end_incarnation(const KernelEvent& e) {
    if (e.previous_incarnation != kNoIncarnation) slots.end(e.previous_incarnation);
    if (slots.sweep_due()) slots.sweep([](IncarnationIndex) { return false; }, [](IncarnationIndex) {});
}

bool FtraceImporter::Impl::next(TraceEvent& out) {
    while (true) {
        while (!queue.empty()) {
            OutEvent& f = queue.front();
            if (f.slot == Slot::run) {
                time_run(f);
                queue.pop_front();
                continue;
            }
            if (f.cb_pending) {
                const auto open = std::find_if(callbacks.begin(), callbacks.end(),
                                               [&](const auto& c) { return c.second.serial == f.cb_serial; });
                if (!eof && open != callbacks.end() && latest - open->second.entry_time <= pair_window_ns) break;
                if (open != callbacks.end()) {
                    close_callback(open->first, false);
                } else { // cannot happen: a closed callback settles its events
                    f.cb_pending = false;
                    f.cb = OutEvent::kNoTimer;
                }
                continue;
            }
            const TimerState& s = timers[f.timer];
            pointer_token(token, s.pointer);
            out = TraceEvent{};
            out.time_ns = times ? times->next(*reader.first_timestamp_ns() + f.time_ns,
                                              f.kind == TraceEventKind::cancel ? std::nullopt : f.know)
                                : f.time_ns;
            out.kind = f.kind;
            out.timer = f.timer;
            out.key = TimerKey{true, 0, std::string_view(token, 18)};
            last_line = f.line;
            out.cpu = f.cpu;
            if (f.kind != TraceEventKind::cancel) {
                out.expiry = ExpiryForm::at_jiffies;
                out.expiry_value = f.at;
                out.flags = f.flags;
                if (f.label != OutEvent::kNoLabel) out.label = labels[f.label];
                out.kidx = f.kidx;
                out.know = f.know;
            }
            if (f.cb != OutEvent::kNoTimer) {
                pointer_token(cb_token, timers[f.cb].pointer);
                out.cb = f.cb;
                out.cb_key = TimerKey{true, 0, std::string_view(cb_token, 18)};
                ++stats.callback_events;
            }
            queue.pop_front();
            return true;
        }
        if (eof) {
            if (reader.stats().timer_events == 0)
                reader.fail("event", "no timer events (timer_start, timer_cancel, timer_expire_entry...) found: "
                                     "record the timer:timer_* events");
            return false;
        }
        KernelEvent* e = stream.next();
        if (!e) {
            eof = true;
            continue;
        }
        process(*e);
    }
}

FtraceImporter::FtraceImporter(FtraceReader& reader, std::uint64_t pair_window_ns, FtraceObserver* also)
    : impl_(std::make_unique<Impl>(reader, pair_window_ns, also)) {}

FtraceImporter::~FtraceImporter() = default;

bool FtraceImporter::next(TraceEvent& event) { return impl_->next(event); }

const std::vector<RecordedRunTime>& FtraceImporter::recorded_runs() const noexcept { return impl_->runs; }
void FtraceImporter::forget_recorded_runs() noexcept { impl_->keep_runs = false; }

void FtraceImporter::use_clock(const KernelClock* clock) { impl_->clock = clock && !clock->empty() ? clock : nullptr; }

void FtraceImporter::arm_before_trace(std::vector<PreTraceFire> fires) { impl_->pre_trace = std::move(fires); }
void FtraceImporter::infer_deferrable(std::vector<std::uint64_t> timers) {
    impl_->inferred_deferrable = std::move(timers);
}

const KernelClock* FtraceImporter::clock() const noexcept { return impl_->clock; }

TraceHeader FtraceImporter::header() const {
    TraceHeader h;
    h.hz = impl_->reader.hz();
    h.start_jiffies = impl_->start_jiffies ? *impl_->start_jiffies : initial_jiffies(h.hz);
    return h;
}

const FtraceImportStats& FtraceImporter::stats() const noexcept { return impl_->stats; }

std::uint64_t FtraceImporter::line() const noexcept { return impl_->last_line; }

} // namespace timersim
