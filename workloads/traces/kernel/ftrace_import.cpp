// FtraceImporter: kernel timer events (FtraceReader) turned into timersim
// trace events: timer pointers to dense ids, timer_start/cancel pairs to
// arm, modify and cancel, events inside a callback marked cb=.
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/kernel/cancel_meaning.hpp"
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

// A timer_start's idx= as cancel_meaning.hpp reads it (FtraceReader
// refuses an idx beyond 1023).
std::uint16_t idx_of(const FtraceEvent& e) noexcept {
    return e.idx ? static_cast<std::uint16_t>(*e.idx) : CancelNeighbour::kNoIdx;
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
    // A timer_cancel of this timer awaits its meaning (cancel_meaning.hpp):
    // the timer's next event says. The timer is taken as idle meanwhile, as
    // it is after every meaning but a requeue, whose timer_start makes it
    // pending again.
    bool held = false;
    bool held_was_pending = false; // a del_timer() of a timer the replay has (else dropped)
    std::uint32_t held_cpu = 0;
    std::uint64_t held_time = 0;   // the trace's timestamp
    std::uint64_t held_seq = 0;    // its slot in the output queue
    std::uint64_t held_serial = 0; // its place among held_cpu's timer events (Impl::cpu_serial)
    std::uint16_t held_idx = CancelNeighbour::kNoIdx;   // the idx= it was queued at when cancelled
    std::uint16_t queued_idx = CancelNeighbour::kNoIdx; // its last timer_start's idx=
};

// ready: an event to hand out; held: a timer_cancel awaiting its meaning;
// dropped: a cancel that was an expiry's detach; run: a timer_expire_entry,
// handed out as no event but timed in order with them (recorded_runs()).
enum class Slot : std::uint8_t { ready, held, dropped, run };

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

// A FIFO of OutEvents addressed by ever-increasing sequence numbers; grows by
// doubling, never shrinks, so a steady state allocates nothing.
class OutQueue {
public:
    bool empty() const noexcept { return head_ == tail_; }
    std::uint64_t head() const noexcept { return head_; }
    std::uint64_t tail() const noexcept { return tail_; }
    OutEvent& front() noexcept { return at(head_); }
    void pop() noexcept { ++head_; }
    OutEvent& at(std::uint64_t seq) noexcept { return ring_[seq & (ring_.size() - 1)]; }
    std::uint64_t push(const OutEvent& e) {
        if (tail_ - head_ == ring_.size()) grow();
        at(tail_) = e;
        return tail_++;
    }

private:
    void grow() {
        std::vector<OutEvent> bigger(ring_.empty() ? 64 : ring_.size() * 2);
        for (std::uint64_t s = head_; s != tail_; ++s) bigger[s & (bigger.size() - 1)] = at(s);
        ring_.swap(bigger);
    }
    std::vector<OutEvent> ring_;
    std::uint64_t head_ = 0;
    std::uint64_t tail_ = 0;
};

} // namespace

struct FtraceImporter::Impl {
    Impl(FtraceReader& r, std::uint64_t window) : reader(r), pair_window_ns(std::min(window, kDetachReachNs)) {}

    FtraceReader& reader;
    std::uint64_t pair_window_ns;
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
    OutQueue queue;
    std::unordered_map<std::uint32_t, OpenCallback> callbacks; // by CPU
    // By CPU: the timer events it traced so far (those the reader kept).
    std::unordered_map<std::uint32_t, std::uint64_t> cpu_serial;
    std::uint64_t callback_serial = 0;
    char token[2 + 16 + 1] = {};
    char cb_token[2 + 16 + 1] = {};

    // Marks the event at output position `seq`, traced by `cpu`, if a
    // callback is open there.
    void mark_callback(OutEvent& out, std::uint32_t cpu, std::uint64_t seq) {
        const auto it = callbacks.find(cpu);
        if (it == callbacks.end()) return;
        out.cb = it->second.timer;
        out.cb_serial = it->second.serial;
        out.cb_pending = true;
        it->second.first_seq = std::min(it->second.first_seq, seq); // a held cancel is older than the entry
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

    std::uint32_t label_id(const FtraceEvent& e) { return label_id(e.function, e.module); }
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

    void fill_arm(OutEvent& out, const FtraceEvent& e) {
        out.at = e.expires;
        out.flags.deferrable = e.flags & kFtraceDeferrable;
        if (!e.flags_known && !inferred_deferrable.empty() &&
            std::binary_search(inferred_deferrable.begin(), inferred_deferrable.end(), e.timer)) {
            out.flags.deferrable = true;
            ++stats.inferred_deferrable_arms;
        }
        out.flags.pinned = e.flags & kFtracePinned;
        out.flags.irqsafe = e.flags & kFtraceIrqsafe;
        out.cpu = e.cpu;
        out.kidx = e.idx;
        out.know = e.jiffies();
        out.label = label_id(e);
    }

    // The held timer_cancel of `s` was a del_timer().
    void resolve_as_cancel(TimerState& s) {
        OutEvent& out = queue.at(s.held_seq);
        if (s.held_was_pending) {
            out.slot = Slot::ready;
            out.kind = TraceEventKind::cancel;
            ++stats.cancels;
        } else {
            out.slot = Slot::dropped; // armed before the trace began: the replay never had it
            ++stats.dropped_cancels;
        }
        s.held = false;
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

    void push_run(const FtraceEvent& e, std::uint32_t ti, std::uint64_t rel) {
        if (!e.now) return;
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        out.slot = Slot::run;
        out.cpu = e.line_cpu;
        out.know = *e.now;
        queue.push(out);
    }
    // Timers armed before the trace (arm_before_trace()), armed at its
    // first event.
    std::vector<PreTraceFire> pre_trace;
    bool pre_trace_armed = false;
    std::vector<std::uint64_t> inferred_deferrable; // infer_deferrable()
    void arm_pre_trace(std::uint64_t rel) {
        pre_trace_armed = true;
        for (const PreTraceFire& f : pre_trace) {
            const std::uint32_t ti = timer_index(f.timer);
            OutEvent out;
            out.time_ns = rel;
            out.timer = ti;
            out.kind = TraceEventKind::arm;
            out.at = f.now;
            out.cpu = f.cpu;
            out.label = label_id(f.function, f.module);
            timers[ti].state = Pending::pending;
            queue.push(out);
            ++stats.pre_trace_arms;
        }
        pre_trace = {};
    }
    void time_run(const OutEvent& f);
    void process(const FtraceEvent& e);
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

void FtraceImporter::Impl::process(const FtraceEvent& e) {
    const std::uint64_t rel = e.timestamp_ns - *reader.first_timestamp_ns();
    latest = rel;
    if (clock && !times) {
        times.emplace(*clock, *reader.first_timestamp_ns());
        start_jiffies = times->start_jiffies();
    }
    if (!start_jiffies) {
        if (const auto j = e.jiffies()) start_jiffies = *j - ticks_at(reader.hz(), rel);
    }
    if (!pre_trace_armed) arm_pre_trace(rel);
    const std::uint32_t ti = timer_index(e.timer);
    TimerState& s = timers[ti];

    const std::uint64_t serial = ++cpu_serial[e.line_cpu];

    // The timer's next event after its cancel: what was the cancel?
    if (s.held) {
        const CancelNeighbour cancel{FtraceEventType::timer_cancel, e.timer, s.held_time, s.held_cpu, s.held_idx};
        const CancelNeighbour next{e.type, e.timer, e.timestamp_ns, e.line_cpu, idx_of(e)};
        const bool next_on_cpu = e.line_cpu == s.held_cpu && serial == s.held_serial + 1;
        switch (cancel_meaning(cancel, next_on_cpu ? &next : nullptr, &next,
                               CancelReach{.requeue_ns = pair_window_ns})) {
        case CancelMeaning::requeue: {
            // mod_timer() moving a pending timer: detach (cancel) + enqueue (start).
            OutEvent& out = queue.at(s.held_seq);
            out.slot = Slot::ready;
            out.kind = TraceEventKind::modify;
            fill_arm(out, e);
            if (out.cb == OutEvent::kNoTimer) mark_callback(out, e.line_cpu, s.held_seq);
            s.held = false;
            s.state = Pending::pending;
            s.queued_idx = idx_of(e);
            ++stats.modifies;
            ++stats.requeues;
            return;
        }
        case CancelMeaning::expiry_detach:
            // The run loop's detach before the callback: an expiry.
            queue.at(s.held_seq).slot = Slot::dropped;
            s.held = false;
            ++stats.expiries;
            ++stats.expiry_detaches;
            push_run(e, ti, rel);
            open_callback(e.line_cpu, ti, rel);
            return;
        case CancelMeaning::del_timer:
            resolve_as_cancel(s);
            break;
        }
    }

    switch (e.type) {
    case FtraceEventType::timer_init:
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
        s.queued_idx = idx_of(e);
        mark_callback(out, e.line_cpu, queue.tail());
        queue.push(out);
        return;
    }
    case FtraceEventType::timer_cancel: {
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        out.slot = Slot::held;
        // del_timer() runs on the CPU that traced it (the timer may be
        // queued on another): the cancel is that CPU's work.
        out.cpu = e.line_cpu;
        mark_callback(out, e.line_cpu, queue.tail());
        s.held_seq = queue.push(out);
        s.held = true;
        s.held_was_pending = s.state == Pending::pending;
        s.held_cpu = e.line_cpu;
        s.held_time = e.timestamp_ns;
        s.held_serial = serial;
        s.held_idx = s.state == Pending::pending ? s.queued_idx : CancelNeighbour::kNoIdx;
        s.state = Pending::idle;
        return;
    }
    case FtraceEventType::timer_expire_entry:
        if (s.state == Pending::pending) ++stats.anomalies; // its detach went missing
        s.state = Pending::idle;
        ++stats.expiries;
        push_run(e, ti, rel);
        open_callback(e.line_cpu, ti, rel);
        return;
    }
}

bool FtraceImporter::Impl::next(TraceEvent& out) {
    while (true) {
        while (!queue.empty()) {
            OutEvent& f = queue.front();
            if (f.slot == Slot::dropped) {
                queue.pop();
                continue;
            }
            if (f.slot == Slot::run) {
                time_run(f);
                queue.pop();
                continue;
            }
            if (f.slot == Slot::held) {
                // Its timer showed nothing more within the detach's reach.
                if (!eof && (latest < f.time_ns || latest - f.time_ns <= kDetachReachNs)) break;
                resolve_as_cancel(timers[f.timer]);
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
            queue.pop();
            return true;
        }
        if (eof) {
            if (reader.stats().timer_events == 0)
                reader.fail("event", "no timer events (timer_start, timer_cancel, timer_expire_entry...) found: "
                                     "record the timer:timer_* events");
            return false;
        }
        FtraceEvent e;
        if (!reader.next(e)) {
            eof = true;
            continue;
        }
        process(e);
    }
}

FtraceImporter::FtraceImporter(FtraceReader& reader, std::uint64_t pair_window_ns)
    : impl_(std::make_unique<Impl>(reader, pair_window_ns)) {}

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

} // namespace timersim
