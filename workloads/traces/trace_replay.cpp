#include "workloads/traces/trace_replay.hpp"

#include "workloads/traces/hz_inference.hpp"
#include "workloads/traces/trace_dat.hpp"

#include "workloads/traces/ftrace_reader.hpp"
#include "workloads/traces/trace_error.hpp"
#include "workloads/traces/trace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace timersim {

namespace {

// Events of either kind of trace, as trace v1 events with dense timer ids.
class EventSource {
public:
    virtual ~EventSource() = default;
    virtual bool next(TraceEvent& e) = 0;
    virtual const TraceHeader& header() = 0; // after the first next() for ftrace
    virtual std::uint64_t line() const = 0;
    virtual std::uint64_t skipped_lines() const = 0;
    virtual const TraceFilterCounts& filter_counts() const = 0;
};

class TimersimSource final : public EventSource {
public:
    TimersimSource(InputFile& in, const TraceFilter& filter) : reader_(in) { reader_.set_filter(filter); }
    const TraceFilterCounts& filter_counts() const override { return reader_.filter_counts(); }
    bool next(TraceEvent& e) override { return reader_.next(e); }
    const TraceHeader& header() override { return reader_.header(); }
    std::uint64_t line() const override { return reader_.line(); }
    std::uint64_t skipped_lines() const override { return 0; }

private:
    TraceReader reader_;
};

// Kernel ftrace text, converted on the fly by FtraceImporter (no temporary
// trace v1): the same events `timersim import` would write.
class FtraceSource final : public EventSource {
public:
    // The text read whole (its HZ was found in a first pass over it).
    FtraceSource(std::string_view text, const std::string& name, unsigned hz, const TraceFilter& filter,
                 FtraceObserver* observer)
        : reader_(text, name, hz), importer_(reader_) {
        reader_.set_filter(filter);
        reader_.set_observer(observer);
    }
    const TraceFilterCounts& filter_counts() const override { return reader_.filter_counts(); }
    bool next(TraceEvent& e) override {
        const bool got = importer_.next(e);
        header_ = importer_.header();
        return got;
    }
    const TraceHeader& header() override { return header_; }
    // The importer holds events up to its pair window, so this is the line
    // read last, at most that window past the event.
    std::uint64_t line() const override { return reader_.line(); }
    std::uint64_t skipped_lines() const override { return reader_.stats().other_events; }

private:
    FtraceReader reader_;
    FtraceImporter importer_;
    TraceHeader header_;
};

constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr std::uint32_t kNoCpu = 0xFFFFFFFFu;

// One event, compact, as the replay keeps it between reading and applying.
struct ReplayEvent {
    std::uint64_t value = 0; // expiry value (see ExpiryForm)
    std::uint32_t timer = 0; // dense trace id
    std::uint32_t cpu = kNoCpu;
    TraceEventKind kind = TraceEventKind::arm;
    ExpiryForm form = ExpiryForm::none;
    bool pinned = false;
};

// One event as a LoadedTrace keeps it: what a replay needs, 32 bytes.
struct StoredEvent {
    std::uint64_t time_ns = 0;
    std::uint64_t value = 0;       // expiry value (see ExpiryForm)
    std::uint32_t timer = 0;       // dense trace id
    std::uint32_t cpu = kNoCpu;
    std::uint32_t cb = kNone;      // cb=: dense id of the timer whose callback made it
    TraceEventKind kind = TraceEventKind::arm;
    ExpiryForm form = ExpiryForm::none;
    bool pinned = false;
    bool deferrable = false;
};
static_assert(sizeof(StoredEvent) == 32);

} // namespace

// Events in chunks of 8Ki (256 KiB): growing never copies what was read, and
// at most one chunk is partly empty.
struct LoadedTrace::Data {
    static constexpr unsigned kChunkShift = 13;
    static constexpr std::size_t kChunk = std::size_t{1} << kChunkShift;

    std::string file;
    TraceKind kind = TraceKind::timersim;
    TraceSummary summary;
    std::uint64_t skipped_lines = 0;
    // Each event whose cpu= is higher than every one before it, with its
    // line: the first event on a CPU >= N is the first of these with cpu >=
    // N, so a replay on N CPUs can name its line.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> cpu_firsts;
    std::vector<std::unique_ptr<StoredEvent[]>> chunks;
    std::size_t count = 0;
    TraceFilter filter;
    TraceFilterCounts filter_counts;
    // --costs-from-trace: the costs, and each timer's callback cost (by
    // dense id: the p50 of its function's callbacks).
    std::optional<TraceCosts> costs;
    std::vector<std::uint64_t> callback_cost_ns;
    // By dense id: the timer's key as the trace writes it, and the label of
    // its first event that has one (the event log's name and label).
    std::vector<std::string> names;
    std::vector<std::string> labels;

    // `done` (by id, while loading: kNamed, kLabelled) answers "already
    // set?" from one byte per timer: names and labels take 32 bytes each,
    // and looking at them for every event was a cache miss per event at
    // 100K timers (15 % of a replay's time). Ids can come out of order (a
    // cb= interns its timer first), so this is not "id >= names.size()".
    static constexpr std::uint8_t kNamed = 1, kLabelled = 2;
    void name(std::uint32_t id, const TimerKey& key, std::string_view label, std::vector<std::uint8_t>& done) {
        if (id >= names.size()) {
            names.resize(std::size_t{id} + 1);
            labels.resize(std::size_t{id} + 1);
            done.resize(std::size_t{id} + 1, 0);
        }
        std::uint8_t& d = done[id];
        if (!(d & kNamed)) {
            names[id] = key.symbolic ? std::string(key.token) : std::to_string(key.number);
            d |= kNamed;
        }
        if (!label.empty() && !(d & kLabelled)) {
            labels[id] = std::string(label);
            d |= kLabelled;
        }
    }

    // Each timer's label (its first label=, for ftrace the callback), by
    // dense id, as an index into label_names; kNone: none.
    std::vector<std::uint32_t> label_of;
    std::vector<std::string> label_names;

    void note_label(std::uint32_t timer, std::string_view label,
                    std::unordered_map<std::string, std::uint32_t>& index) {
        if (timer >= label_of.size()) label_of.resize(std::size_t{timer} + 1, kNone);
        if (label_of[timer] != kNone) return;
        const auto [it, added] = index.try_emplace(std::string(label), static_cast<std::uint32_t>(label_names.size()));
        if (added) label_names.emplace_back(label);
        label_of[timer] = it->second;
    }

    void push(const StoredEvent& e) {
        if ((count & (kChunk - 1)) == 0) chunks.emplace_back(new StoredEvent[kChunk]);
        chunks.back()[count & (kChunk - 1)] = e;
        ++count;
    }
    const StoredEvent& at(std::size_t i) const { return chunks[i >> kChunkShift][i & (kChunk - 1)]; }
    std::uint64_t line_of_first_on_cpu_at_least(std::uint32_t cpu) const {
        for (const auto& [c, line] : cpu_firsts)
            if (c >= cpu) return line;
        return 0;
    }
};

namespace {

// Top-level events with the same time and CPU, read one after another: one
// engine action (a workload step that arms several timers is one action).
// Most groups hold one event: it is kept inline.
struct Group {
    std::uint64_t time = 0;
    std::uint32_t cpu = 0;
    ReplayEvent first;
    std::vector<ReplayEvent> more;
};

// A callback block: the events recorded inside one callback of timer `cb`.
struct Block {
    std::uint64_t time = 0;
    std::uint32_t cb = 0;
    std::uint32_t next = kNone; // in its timer's waiting list
    std::vector<ReplayEvent> events;
};

struct TimerState {
    TimerId sim = kNoTimer;
    std::uint32_t wait_head = kNone; // blocks reached, waiting for this timer's next fire
    std::uint32_t wait_tail = kNone;
    std::uint32_t waiting = 0;
    std::uint32_t pending_arms = 0;  // arm/modify events of this timer in groups scheduled, not yet run
    bool unconsumed_fire = false;    // fired in the replay since its last arm, and no block used that fire
};

// Tag of the action that only moves the reader on (see pump()).
constexpr std::uint64_t kPumpTag = std::numeric_limits<std::uint64_t>::max();
// Read-ahead limit: callback events read but not yet due. Past it the
// reader waits (a trace whose callbacks never fire in the replay would
// otherwise be read whole into memory).
constexpr std::size_t kMaxFutureEvents = 1u << 20;
// Blocks one timer may have waiting for its fire; older ones are dropped
// (counted as unmatched) when a timer that never fires collects more.
constexpr std::uint32_t kMaxWaitingBlocks = 64;
// Look-ahead in the stored events (read_one()): the event this many places
// on gets its TimerState fetched (kLookState), then its sim timer's
// requested expiry and queue node (kLookNode: needs the TimerState, fetched
// by then). An event is applied about one read after it is read, so these
// are distances in events applied.
constexpr std::size_t kLookState = 24;
constexpr std::size_t kLookNode = 12;

class TraceReplay final : public Workload {
public:
    TraceReplay(Sim& sim, std::shared_ptr<const LoadedTrace> trace, TraceReplayStats* stats, bool callback_costs)
        : trace_(std::move(trace)), data_(trace_->data()), header_(data_.summary.header), stats_out_(stats),
          callback_costs_(callback_costs && !data_.callback_cost_ns.empty()) {
        if (sim.hz() != header_.hz || sim.start_jiffies() != header_.start_jiffies)
            throw std::invalid_argument(
                fmt::format("{}: the trace's clock (hz={} start_jiffies={}) differs from the machine's (hz={} "
                            "start_jiffies={})",
                            data_.file, header_.hz, header_.start_jiffies, sim.hz(), sim.start_jiffies()));
        cpus_ = sim.cpus();
        // Every timer the trace names, so look_ahead() can fetch a
        // TimerState before its timer's first event.
        timers_.resize(data_.names.size());
        // Events at time 0 on CPU 0 are applied while the workload is built,
        // as a generator arms timers in its constructor (a recorder writes
        // the steps of time 0 at 1 ns).
        building_ = true;
        pump(sim);
        building_ = false;
    }

    ~TraceReplay() override {
        std::uint64_t unmatched = stats_.callback_events_unmatched;
        for (const std::uint32_t b : future_) unmatched += blocks_[b].events.size();
        for (const TimerState& t : timers_)
            for (std::uint32_t b = t.wait_head; b != kNone; b = blocks_[b].next) unmatched += blocks_[b].events.size();
        stats_.callback_events_unmatched = unmatched;
        publish();
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        if (tag == kPumpTag) {
            stats_.bookkeeping_steps += pump_times_.size();
            pump_times_.erase(std::min_element(pump_times_.begin(), pump_times_.end()));
            pump(sim);
            publish();
            return;
        }
        const auto g = static_cast<std::uint32_t>(tag);
        --pending_groups_;
        if (open_group_ == g) open_group_ = kNone;
        running_time_ = groups_[g].time;
        running_cpu_ = groups_[g].cpu;
        running_ = true;
        unpend(groups_[g].first);
        for (const ReplayEvent& e : groups_[g].more) unpend(e);
        apply(sim, groups_[g].first);
        for (const ReplayEvent& e : groups_[g].more) apply(sim, e);
        groups_[g].more.clear();
        free_groups_.push_back(g);
        pump(sim); // events of the same time and CPU that follow are applied here too
        running_ = false;
        publish();
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        const std::uint32_t x = trace_id_of(fired.id);
        if (x == kNone) return;
        TimerState& t = timers_[x];
        // This fire supersedes an older one nobody used: a block of x reached
        // now belongs to this callback.
        t.unconsumed_fire = false;
        in_callback_of_ = x;
        pump(sim);
        in_callback_of_ = kNone;
        TimerState& s = timers_[x];
        if (s.wait_head != kNone) {
            const std::uint32_t b = s.wait_head;
            s.wait_head = blocks_[b].next;
            if (s.wait_head == kNone) s.wait_tail = kNone;
            --s.waiting;
            apply_block(sim, b);
        } else {
            s.unconsumed_fire = true;
            come_back_for_block_of(sim, x);
        }
    }

    // Only where sim and trace ids are the same: otherwise finding the
    // TimerState is itself the miss to avoid.
    void prefetch_fire(TimerId id) override {
        if (same_ids_ && id < timers_.size()) prefetch_state(id);
    }

    std::optional<std::uint64_t> callback_cost_ns(const FireRecord& fired) const override {
        if (!callback_costs_) return std::nullopt;
        const std::uint32_t x = trace_id_of(fired.id);
        if (x == kNone) return std::nullopt;
        if (x >= data_.callback_cost_ns.size()) return data_.costs->callbacks.p50;
        return data_.callback_cost_ns[x];
    }

    // Not applied and later than end_ns: events not read yet, steps
    // scheduled but not run, and callback events whose time never came or
    // whose timer did not fire by then (those at or before end_ns that
    // never ran are callback_events_unmatched).
    std::uint64_t operations_past(std::uint64_t end_ns) const override {
        std::uint64_t n = 0;
        for (std::size_t i = next_; i < data_.count; ++i) n += data_.at(i).time_ns > end_ns;
        std::vector<bool> free(groups_.size());
        for (const std::uint32_t g : free_groups_) free[g] = true;
        for (std::size_t g = 0; g < groups_.size(); ++g)
            if (!free[g] && groups_[g].time > end_ns) n += 1 + groups_[g].more.size();
        std::vector<bool> released(blocks_.size());
        for (const std::uint32_t b : free_blocks_) released[b] = true;
        for (std::size_t b = 0; b < blocks_.size(); ++b)
            if (!released[b] && blocks_[b].time > end_ns) n += blocks_[b].events.size();
        return n;
    }

private:
    void publish() {
        stats_.skipped_lines = data_.skipped_lines;
        if (stats_out_) *stats_out_ = stats_;
    }

    // The sim timer of dense id `id`, created at its first appearance (with
    // the flags of that event: TIMER_DEFERRABLE is fixed at timer_setup()).
    void ensure_timer(Sim& sim, std::uint32_t id, const StoredEvent& e) {
        if (id >= timers_.size()) timers_.resize(std::size_t{id} + 1);
        TimerState& t = timers_[id];
        if (t.sim != kNoTimer) return;
        t.sim = sim.create_timer(TimerFlags{.deferrable = e.deferrable});
        if (id < data_.names.size()) sim.name_timer(t.sim, data_.names[id], data_.labels[id]);
        if (id < data_.label_of.size() && data_.label_of[id] != kNone)
            sim.label_timer(t.sim, data_.label_names[data_.label_of[id]]);
        if (t.sim >= trace_of_sim_.size()) trace_of_sim_.resize(std::size_t{t.sim} + 1, kNone);
        trace_of_sim_[t.sim] = id;
        same_ids_ = same_ids_ && t.sim == id;
    }

    // The dense trace id of a sim timer (kNone: not one of ours). Timers
    // are mostly made in trace-id order, and then the ids are the same and
    // a fire needs no look-up in trace_of_sim_ (a cache miss per fire on a
    // large trace, before the TimerState's own).
    std::uint32_t trace_id_of(TimerId sim) const noexcept {
        if (same_ids_) return sim < timers_.size() && timers_[sim].sim == sim ? sim : kNone;
        return sim < trace_of_sim_.size() ? trace_of_sim_[sim] : kNone;
    }

    // A group's events go in and out of TimerState::pending_arms as the
    // group is scheduled and run, so a fire can tell in O(1) whether a step
    // still to run arms its timer (scanning the groups made replays of many
    // events waiting behind a long softirq quadratic).
    void pend(const ReplayEvent& e) {
        if (e.kind != TraceEventKind::cancel) ++timers_[e.timer].pending_arms;
    }
    void unpend(const ReplayEvent& e) {
        if (e.kind != TraceEventKind::cancel) --timers_[e.timer].pending_arms;
    }

    ReplayEvent compact(const StoredEvent& e) const {
        ReplayEvent r;
        r.value = e.value;
        r.timer = e.timer;
        r.kind = e.kind;
        r.form = e.form;
        r.pinned = e.pinned;
        if (e.cpu != kNoCpu) {
            if (e.cpu >= cpus_)
                throw TraceError(data_.file, data_.line_of_first_on_cpu_at_least(cpus_), "cpu",
                                 fmt::format("cpu {} is not on the machine: it has {} CPU{} (--cpus)", e.cpu, cpus_,
                                             cpus_ == 1 ? "" : "s"));
            r.cpu = e.cpu;
        }
        return r;
    }

    void apply(Sim& sim, const ReplayEvent& e) {
        TimerState& t = timers_[e.timer];
        ++stats_.events;
        if (e.kind == TraceEventKind::cancel) {
            sim.cancel(t.sim);
            return;
        }
        Jiffies expires = e.value;
        if (e.form == ExpiryForm::in_jiffies) {
            expires = sim.jiffies() + e.value;
        } else if (e.form == ExpiryForm::in_ns) {
            using u128 = unsigned __int128;
            const u128 j = (static_cast<u128>(e.value) * header_.hz + 999999999u) / 1000000000u;
            expires = sim.jiffies() + static_cast<Jiffies>(j);
        }
        t.unconsumed_fire = false; // an older fire is history once the timer is armed again
        if (e.cpu != kNoCpu && e.cpu != sim.current_cpu())
            sim.arm_on(t.sim, expires, e.cpu); // add_timer_on() from a callback on another CPU
        else
            sim.arm(t.sim, expires, e.pinned ? ArmCall::mod_timer_pinned : ArmCall::mod_timer);
    }

    void apply_block(Sim& sim, std::uint32_t b) {
        for (const ReplayEvent& e : blocks_[b].events) apply(sim, e);
        stats_.callback_events += blocks_[b].events.size();
        release_block(b);
    }

    std::uint32_t new_block() {
        if (!free_blocks_.empty()) {
            const std::uint32_t b = free_blocks_.back();
            free_blocks_.pop_back();
            return b;
        }
        blocks_.emplace_back();
        return static_cast<std::uint32_t>(blocks_.size() - 1);
    }
    void release_block(std::uint32_t b) {
        blocks_[b].events.clear();
        blocks_[b].next = kNone;
        free_blocks_.push_back(b);
    }

    std::uint32_t new_group() {
        if (!free_groups_.empty()) {
            const std::uint32_t g = free_groups_.back();
            free_groups_.pop_back();
            return g;
        }
        groups_.emplace_back();
        return static_cast<std::uint32_t>(groups_.size() - 1);
    }

    // Reads one event and files it: a top-level event is applied now (same
    // time and CPU as the group being run), appended to the group scheduled
    // last, or scheduled as a new group; a callback event joins the block
    // read last or starts a new one in future_. False at the end.
    bool read_one(Sim& sim) {
        if (next_ == data_.count) {
            eof_ = true;
            return false;
        }
        look_ahead(sim);
        const StoredEvent& e = data_.at(next_++);
        ensure_timer(sim, e.timer, e);
        if (e.cb != kNone) {
            if (e.cb >= timers_.size()) timers_.resize(std::size_t{e.cb} + 1);
            const ReplayEvent r = compact(e);
            if (last_block_ == kNone || blocks_[last_block_].time != e.time_ns || blocks_[last_block_].cb != e.cb) {
                last_block_ = new_block();
                blocks_[last_block_].time = e.time_ns;
                blocks_[last_block_].cb = e.cb;
                future_.push_back(last_block_);
            }
            blocks_[last_block_].events.push_back(r);
            ++future_events_;
            open_group_ = kNone;
            return true;
        }
        last_block_ = kNone;
        const ReplayEvent r = compact(e);
        const std::uint32_t cpu = r.cpu == kNoCpu ? 0 : r.cpu;
        if (building_ && e.time_ns == 0 && cpu == 0 && pending_groups_ == 0) {
            apply(sim, r);
            return true;
        }
        if (running_ && e.time_ns == running_time_ && cpu == running_cpu_ && in_callback_of_ == kNone &&
            pending_groups_ == 0) {
            apply(sim, r);
            return true;
        }
        if (open_group_ != kNone && groups_[open_group_].time == e.time_ns && groups_[open_group_].cpu == cpu) {
            groups_[open_group_].more.push_back(r);
            pend(r);
            return true;
        }
        const std::uint32_t g = new_group();
        groups_[g].time = e.time_ns;
        groups_[g].cpu = cpu;
        groups_[g].first = r;
        pend(r);
        open_group_ = g;
        ++pending_groups_;
        latest_group_time_ = e.time_ns;
        Action action;
        action.kind = Action::Kind::call;
        action.cpu = cpu;
        action.tag = g;
        sim.schedule_action(e.time_ns, action);
        return true;
    }

    // With 100K timers each event's first touch of its TimerState, the
    // engine's slot and the queue node is a cache miss, one after another
    // (each ~150 ns on this VM). The replay knows its next events: fetching
    // what they touch a few events early lets the misses overlap. Hints
    // only (Sim::prefetch_timer changes nothing): the run is the same.
    void look_ahead(Sim& sim) const {
        if (next_ + kLookState < data_.count) {
            const std::uint32_t x = data_.at(next_ + kLookState).timer;
            if (x < timers_.size()) prefetch_state(x);
        }
        if (next_ + kLookNode < data_.count) {
            const std::uint32_t x = data_.at(next_ + kLookNode).timer;
            if (x < timers_.size() && timers_[x].sim != kNoTimer) sim.prefetch_timer(timers_[x].sim);
        }
    }

    void prefetch_state(std::uint32_t x) const noexcept {
        // 24 bytes: a third of them straddle two cache lines.
        const char* t = reinterpret_cast<const char*>(&timers_[x]);
        __builtin_prefetch(t, 1);
        __builtin_prefetch(t + sizeof(TimerState) - 1, 1);
    }

    // Moves the blocks whose time has come out of future_: applied at once
    // if their timer already fired unused, else queued for its next fire.
    bool reach(Sim& sim, std::uint64_t now) {
        bool any = false;
        while (!future_.empty()) {
            const std::uint32_t b = future_.front();
            if (blocks_[b].time > now) break;
            future_.pop_front();
            future_events_ -= blocks_[b].events.size();
            if (b == last_block_) last_block_ = kNone;
            any = true;
            TimerState& t = timers_[blocks_[b].cb];
            if (t.unconsumed_fire) {
                t.unconsumed_fire = false;
                apply_block(sim, b);
                continue;
            }
            if (t.waiting == kMaxWaitingBlocks) {
                const std::uint32_t old = t.wait_head;
                t.wait_head = blocks_[old].next;
                if (t.wait_head == kNone) t.wait_tail = kNone;
                --t.waiting;
                stats_.callback_events_unmatched += blocks_[old].events.size();
                release_block(old);
            }
            if (t.wait_tail == kNone)
                t.wait_head = b;
            else
                blocks_[t.wait_tail].next = b;
            t.wait_tail = b;
            ++t.waiting;
        }
        return any;
    }

    // Reads ahead until a top-level event later than now is scheduled (so
    // every callback block up to it is known before its fire can come), then
    // files the blocks that are due.
    void pump(Sim& sim) {
        const std::uint64_t now = sim.now_ns();
        while (true) {
            while (!eof_ && !(pending_groups_ > 0 && latest_group_time_ > now) &&
                   future_events_ < kMaxFutureEvents)
                read_one(sim);
            const bool reached = reach(sim, now);
            if (!(reached && future_events_ < kMaxFutureEvents && !eof_)) break;
        }
        // Nothing may fire to move us on: come back when the oldest block is due.
        if (!eof_ && future_events_ >= kMaxFutureEvents) pump_at(sim, blocks_[future_.front()].time);
    }

    // An action that runs pump() at `time`, unless one will run by then.
    void pump_at(Sim& sim, std::uint64_t time) {
        for (const std::uint64_t t : pump_times_) {
            ++stats_.bookkeeping_steps;
            if (t <= time) return;
        }
        pump_times_.push_back(time);
        Action action;
        action.kind = Action::Kind::call;
        action.tag = kPumpTag;
        sim.schedule_action(time, action);
    }

    // Timer x fired and no block was due for it. If the next block read
    // ahead for x is its (it comes before any arm of x), the design fired x
    // earlier than the recording did: that block is to be applied at its
    // own time, so make sure the replay looks then (with nothing else due,
    // no fire or event might come to move it on). Only the first blocks are
    // looked at: this is for sparse traces, where they are few.
    void come_back_for_block_of(Sim& sim, std::uint32_t x) {
        constexpr std::size_t kMaxScan = 256;
        if (pending_groups_ > kMaxScan) return;
        // A step read but not yet run (it waits for this softirq) arms x
        // again: the next block of x is for that arm's fire.
        ++stats_.bookkeeping_steps; // one look at x, not at every step still to run
        if (timers_[x].pending_arms > 0) return;
        std::size_t scanned = 0;
        for (const std::uint32_t b : future_) {
            if (++scanned > kMaxScan) return;
            ++stats_.bookkeeping_steps;
            if (blocks_[b].cb == x) return pump_at(sim, blocks_[b].time);
            for (const ReplayEvent& e : blocks_[b].events) {
                ++stats_.bookkeeping_steps;
                if (e.timer == x && e.kind != TraceEventKind::cancel) return; // armed again first: another fire
            }
        }
    }

    std::shared_ptr<const LoadedTrace> trace_;
    const LoadedTrace::Data& data_;
    TraceHeader header_;
    TraceReplayStats* stats_out_;
    bool callback_costs_ = false;
    TraceReplayStats stats_;
    unsigned cpus_ = 1;
    std::size_t next_ = 0; // the next event of data_ to read
    bool eof_ = false;

    std::vector<TimerState> timers_;         // by dense trace id
    std::vector<std::uint32_t> trace_of_sim_; // sim TimerId -> dense trace id
    bool same_ids_ = true;                    // every sim TimerId so far is its dense trace id

    std::vector<Group> groups_;
    std::vector<std::uint32_t> free_groups_;
    std::uint32_t open_group_ = kNone;   // the group scheduled last, if nothing was read after it
    std::uint32_t pending_groups_ = 0;   // scheduled, not yet run
    std::uint64_t latest_group_time_ = 0;
    bool building_ = false;              // in the constructor
    bool running_ = false;               // inside a group's action
    std::uint64_t running_time_ = 0;
    std::uint32_t running_cpu_ = 0;
    std::uint32_t in_callback_of_ = kNone;

    std::vector<Block> blocks_;
    std::vector<std::uint32_t> free_blocks_;
    std::deque<std::uint32_t> future_;   // read, not yet due, in file order
    std::size_t future_events_ = 0;
    std::uint32_t last_block_ = kNone;   // the block read last, while still in future_
    std::vector<std::uint64_t> pump_times_; // pending pump actions
};

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

std::shared_ptr<const LoadedTrace> load_trace(InputFile& in, TraceKind kind, const HzChoice& hz) {
    return load_trace(in, kind, hz, TraceLoadOptions{});
}

namespace {

// "tcp_delack_timer[mod]" -> "tcp_delack_timer": the importer's label names
// the module too, the cost collector the function alone.
std::string_view function_of_label(std::string_view label) { return label.substr(0, label.find('[')); }

} // namespace

std::shared_ptr<const LoadedTrace> load_trace(InputFile& in, TraceKind kind, const HzChoice& hz,
                                              const TraceLoadOptions& options) {
    if (options.costs_from_trace && kind != TraceKind::ftrace)
        throw std::invalid_argument("costs_from_trace needs a kernel trace");
    auto data = std::make_unique<LoadedTrace::Data>();
    data->filter = options.filter;
    TraceCostCollector collector;
    // Dense id -> its first label's function, while reading (costs only).
    std::vector<std::string> timer_functions;
    data->file = in.name();
    data->kind = kind;
    // Kernel text: read whole, a first pass decides its HZ (never assumed:
    // hz_inference.hpp), the second imports it. A timersim trace's header
    // fixes its clock.
    std::string text;
    std::unique_ptr<EventSource> source;
    if (kind == TraceKind::ftrace) {
        text = read_kernel_trace_text(in);
        const HzResolution resolved = resolve_ftrace_hz(text, in.name(), hz);
        data->summary.hz_source = resolved.source;
        source = std::make_unique<FtraceSource>(text, in.name(), resolved.hz, options.filter,
                                                options.costs_from_trace ? &collector : nullptr);
    } else {
        source = std::make_unique<TimersimSource>(in, options.filter);
    }
    TraceSummary& summary = data->summary;
    TraceEvent e;
    std::unordered_map<std::string, std::uint32_t> label_index;
    std::vector<std::uint8_t> named; // Data::name()'s flags, by dense id
    while (source->next(e)) {
        if (!e.label.empty()) data->note_label(e.timer, e.label, label_index);
        StoredEvent s;
        s.time_ns = e.time_ns;
        s.value = e.expiry_value;
        s.timer = e.timer;
        s.kind = e.kind;
        s.form = e.expiry;
        s.pinned = e.flags.pinned;
        s.deferrable = e.flags.deferrable;
        if (e.cpu) s.cpu = *e.cpu;
        if (e.cb) s.cb = *e.cb;
        data->push(s);
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
    data->skipped_lines = source->skipped_lines();
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
    InputFile in(path);
    return load_trace(in, kind, hz);
}

WorkloadFactory trace_replay(std::shared_ptr<const LoadedTrace> trace, TraceReplayStats* stats, bool callback_costs) {
    return [trace = std::move(trace), stats, callback_costs](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<TraceReplay>(sim, trace, stats, callback_costs);
    };
}

TraceSummary summarize_trace(const std::string& path, TraceKind kind, std::optional<unsigned> hz) {
    return load_trace(path, kind, HzChoice{.option = hz})->summary();
}

WorkloadFactory trace_replay(const std::string& path, TraceKind kind, const TraceHeader& header,
                             TraceReplayStats* stats) {
    return [=](Sim& sim) -> std::unique_ptr<Workload> {
        const auto trace = load_trace(path, kind, HzChoice{.option = header.hz});
        return std::make_unique<TraceReplay>(sim, trace, stats, false);
    };
}

} // namespace timersim
