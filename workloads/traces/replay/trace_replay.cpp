// Replaying a LoadedTrace (workloads/traces/replay/trace_replay.hpp) on the
// simulated machine: TraceReplay reads the stored events in order, groups
// the top-level ones by time and CPU into engine actions and keeps the
// callback blocks (cb=) until their timer fires. Loading: trace_load.cpp.
#include "workloads/traces/replay/trace_replay.hpp"

#include "workloads/traces/replay/event_cursor.hpp"
#include "workloads/traces/replay/loaded_trace_data.hpp"

#include "workloads/traces/input/trace_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

namespace {

using trace_store::kNoCpu;
using trace_store::kNone;
using trace_store::StoredEvent;

// One event, compact, as the replay keeps it between reading and applying.
struct ReplayEvent {
    std::uint64_t value = 0; // expiry value (see ExpiryForm)
    std::uint32_t timer = 0; // dense trace id
    std::uint32_t cpu = kNoCpu;
    TraceEventKind kind = TraceEventKind::arm;
    ExpiryForm form = ExpiryForm::none;
    bool pinned = false;
};

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
static_assert(kLookState < EventCursor::kRing);

class TraceReplay final : public Workload {
public:
    TraceReplay(Sim& sim, std::shared_ptr<const LoadedTrace> trace, TraceReplayStats* stats, ReplayCallbackCosts costs)
        : trace_(std::move(trace)), data_(trace_->data()), events_(data_), header_(data_.summary.header), stats_out_(stats),
          callback_costs_(costs.by_function && !data_.callback_cost_ns.empty()), recorded_callbacks_(costs.as_recorded) {
        if (sim.hz() != header_.hz || sim.start_jiffies() != header_.start_jiffies)
            throw std::invalid_argument(
                fmt::format("{}: the trace's clock (hz={} start_jiffies={}) differs from the machine's (hz={} "
                            "start_jiffies={})",
                            data_.file, header_.hz, header_.start_jiffies, sim.hz(), sim.start_jiffies()));
        cpus_ = sim.cpus();
        if (data_.kind == TraceKind::ftrace)
            kernel_fires_.emplace(*data_.fire_index);
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
            come_back_for_unconsumed_fires(sim);
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
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        const std::uint32_t x = trace_id_of(fired.id);
        if (x == kNone) return;
        if (kernel_fires_) kernel_fires_->replayed(x, fired.fired_jiffies, fired.cpu, fired.base_cpu);
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
        if (!callback_costs_ && !recorded_callbacks_) return std::nullopt;
        const std::uint32_t x = trace_id_of(fired.id);
        if (x == kNone) return std::nullopt;
        if (recorded_callbacks_ && data_.fire_index) {
            if (const std::optional<RecordedCallback> r = data_.fire_index->nearest_callback(x, fired.fired_jiffies))
                return callback_on_grid(*r, fired.fire_ns, header_.start_jiffies, fired.fired_jiffies, header_.hz);
        }
        if (!callback_costs_) return std::nullopt;
        if (x >= data_.callback_cost_ns.size()) return data_.costs->callbacks.p50;
        return data_.callback_cost_ns[x];
    }

    // Not applied and later than end_ns: events not read yet, steps
    // scheduled but not run, and callback events whose time never came or
    // whose timer did not fire by then (those at or before end_ns that
    // never ran are callback_events_unmatched).
    std::optional<FireAgreement> kernel_fire_agreement() const override {
        if (!kernel_fires_) return std::nullopt;
        FireAgreement a = kernel_fires_->agreement();
        a.unmodelled_kernel = data_.unmodelled_kernel;
        a.remote_inference = data_.remote_inference;
        a.lost_history_unclassed = data_.lost_history_unclassed;
        return a;
    }

    std::uint64_t operations_past(std::uint64_t end_ns) const override {
        std::uint64_t n = 0;
        for (std::size_t i = next_; i < events_.size(); ++i) n += events_.at(i).time_ns > end_ns;
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
    // Once, when the replay ends (the workload is destroyed with the run,
    // also when an error ends it): copying the stats after every action was
    // 1 % of a replay's instructions.
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
        // add_timer_on() from a callback on another CPU; on a 6.9+ kernel,
        // where add_timer_on() sets TIMER_PINNED, an unpinned timer_start
        // on another CPU's base is a mod_timer() made there (a callback
        // applied after its own fire, a remote expiry's re-arm).
        if (e.cpu != kNoCpu && e.cpu != sim.current_cpu())
            sim.arm_on(t.sim, expires, e.cpu,
                       data_.kernel_6_9 && !e.pinned ? ArmCall::mod_timer : ArmCall::mod_timer_pinned);
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
        if (next_ == events_.size()) {
            eof_ = true;
            return false;
        }
        look_ahead(sim);
        const StoredEvent& e = events_.at(next_++);
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
        if (next_ + kLookState < events_.size()) {
            const std::uint32_t x = events_.at(next_ + kLookState).timer;
            if (x < timers_.size()) prefetch_state(x);
        }
        if (next_ + kLookNode < events_.size()) {
            const std::uint32_t x = events_.at(next_ + kLookNode).timer;
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

    // A pump ran: come_back_for_block_of() may have left a later block to
    // it (pump_at() keeps one pump per earliest time). If the first block
    // whose timer fired unused is still ahead, look again at its time.
    void come_back_for_unconsumed_fires(Sim& sim) {
        constexpr std::size_t kMaxScan = 256;
        std::size_t scanned = 0;
        for (const std::uint32_t b : future_) {
            if (++scanned > kMaxScan) return;
            ++stats_.bookkeeping_steps;
            if (timers_[blocks_[b].cb].unconsumed_fire) return pump_at(sim, blocks_[b].time);
        }
    }

    std::shared_ptr<const LoadedTrace> trace_;
    const LoadedTrace::Data& data_;
    // Read in order; looked into ahead by look_ahead() (const) and
    // operations_past() (const, at the end), hence mutable.
    mutable EventCursor events_;
    TraceHeader header_;
    TraceReplayStats* stats_out_;
    bool callback_costs_ = false;
    bool recorded_callbacks_ = false;
    TraceReplayStats stats_;
    // A kernel trace: the kernel's fires, matched against ours as they come.
    std::optional<FireTally> kernel_fires_;
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

WorkloadFactory trace_replay(std::shared_ptr<const LoadedTrace> trace, TraceReplayStats* stats,
                             ReplayCallbackCosts costs) {
    return [trace = std::move(trace), stats, costs](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<TraceReplay>(sim, trace, stats, costs);
    };
}

WorkloadFactory trace_replay(const std::string& path, TraceKind kind, const TraceHeader& header,
                             TraceReplayStats* stats) {
    return [=](Sim& sim) -> std::unique_ptr<Workload> {
        const auto trace = load_trace(path, kind, HzChoice{.option = header.hz});
        return std::make_unique<TraceReplay>(sim, trace, stats, ReplayCallbackCosts{});
    };
}


} // namespace timersim
