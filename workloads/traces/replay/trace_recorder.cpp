#include "workloads/traces/replay/trace_recorder.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

namespace {

constexpr TimerId kNoCallback = kNoTimer;

// The Sim the inner workload sees: forwards everything to the machine and
// writes each arm and cancel first.
class RecordingSim final : public Sim {
public:
    RecordingSim(Sim& real, TraceWriter& writer) : real_(real), writer_(writer) {}

    std::uint64_t now_ns() const override { return real_.now_ns(); }
    Jiffies jiffies() const override { return real_.jiffies(); }
    Jiffies start_jiffies() const override { return real_.start_jiffies(); }
    unsigned hz() const override { return real_.hz(); }
    unsigned cpus() const override { return real_.cpus(); }
    unsigned current_cpu() const override { return real_.current_cpu(); }
    std::uint64_t next_tick_ns() const override { return real_.next_tick_ns(); }

    TimerId create_timer(TimerFlags flags = {}) override {
        const TimerId id = real_.create_timer(flags);
        if (id >= timers_.size()) timers_.resize(std::size_t{id} + 1);
        timers_[id] = TimerInfo{.deferrable = flags.deferrable, .written = false};
        return id;
    }
    // The label goes to the trace with the timer's first event (label=), so
    // a replay groups it as the recording did.
    void label_timer(TimerId id, std::string_view label) override {
        real_.label_timer(id, label);
        if (id >= timers_.size()) timers_.resize(std::size_t{id} + 1);
        if (labels_.empty() || labels_.back() != label) labels_.emplace_back(label);
        timers_[id].label = static_cast<std::uint32_t>(labels_.size() - 1);
    }
    void reserve_timers(std::size_t n) override {
        timers_.reserve(n);
        real_.reserve_timers(n);
    }

    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) override {
        const std::uint64_t t = event_time(real_.current_cpu());
        if (call == ArmCall::mod_timer_pending) {
            // Only a pending timer is re-armed: write what happened.
            const ArmOutcome outcome = real_.arm(id, expires, call);
            if (outcome != ArmOutcome::not_pending)
                write(t, TraceEventKind::modify, id, expires, false, real_.current_cpu());
            return outcome;
        }
        write(t, TraceEventKind::arm, id, expires, call == ArmCall::mod_timer_pinned, real_.current_cpu());
        return real_.arm(id, expires, call);
    }
    ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned cpu,
                      ArmCall call = ArmCall::mod_timer_pinned) override {
        write(event_time(real_.current_cpu()), TraceEventKind::arm, id, expires, call == ArmCall::mod_timer_pinned,
              cpu);
        return real_.arm_on(id, expires, cpu, call);
    }
    bool cancel(TimerId id) override {
        write(event_time(real_.current_cpu()), TraceEventKind::cancel, id, 0, false, real_.current_cpu());
        return real_.cancel(id);
    }

    // Every action goes through the recording workload's on_action (as a
    // call whose tag is a slot here), so its arms and cancels are written
    // and its scheduled time is known.
    void schedule_action(std::uint64_t time_ns, const Action& action) override {
        std::uint32_t slot;
        if (!free_slots_.empty()) {
            slot = free_slots_.back();
            free_slots_.pop_back();
        } else {
            slot = static_cast<std::uint32_t>(slots_.size());
            slots_.emplace_back();
        }
        slots_[slot] = Scheduled{time_ns, action};
        Action call;
        call.kind = Action::Kind::call;
        call.cpu = action.cpu;
        call.tag = slot;
        real_.schedule_action(time_ns, call);
    }

    // The action behind `tag`, its slot freed.
    std::pair<std::uint64_t, Action> take(std::uint64_t tag) {
        const auto slot = static_cast<std::uint32_t>(tag);
        free_slots_.push_back(slot);
        return {slots_[slot].time_ns, slots_[slot].action};
    }

    void enter_action(std::uint64_t scheduled_ns) {
        callback_ = kNoCallback;
        action_ns_ = scheduled_ns;
        ++step_;
    }
    void enter_callback(TimerId id) { callback_ = id; }
    void leave() {
        callback_ = kNoCallback;
        action_ns_.reset();
    }

private:
    static constexpr std::uint32_t kNoLabel = 0xFFFFFFFFu;
    struct TimerInfo {
        bool deferrable = false;
        bool written = false; // first event written (it carried the creation flags)
        std::uint32_t label = kNoLabel; // in labels_
    };
    struct Scheduled {
        std::uint64_t time_ns = 0;
        Action action;
    };

    // Inside an action: its scheduled time; inside a callback (or outside
    // both, e.g. while the workload is built): now. Never before the event
    // written last (the trace's times must not decrease). A replay applies
    // the events of one time and CPU that follow one another as one step, so
    // an action that would land on the time of the step written just before
    // on its CPU (two steps due at the same ns, or two that both waited for
    // a softirq) is written 1 ns later, to stay a step of its own.
    // Time 0 is the workload's construction: a replay applies the events of
    // time 0 while it is built, so an action due at 0 is written at 1 ns.
    std::uint64_t event_time(unsigned cpu) const {
        std::uint64_t t = action_ns_ && callback_ == kNoCallback ? *action_ns_ : real_.now_ns();
        if (step_ > 0 && t == 0) t = 1;
        if (callback_ == kNoCallback && last_was_step_ && last_step_ != step_ && last_cpu_ == cpu && t <= last_ns_)
            return last_ns_ + 1;
        return std::max(t, last_ns_);
    }

    void write(std::uint64_t t, TraceEventKind kind, TimerId id, Jiffies expires, bool pinned, unsigned cpu) {
        if (id >= timers_.size()) timers_.resize(std::size_t{id} + 1);
        TimerInfo& info = timers_[id];
        TraceEvent e;
        e.time_ns = t;
        e.kind = kind;
        e.key = TimerKey{false, id, {}};
        if (kind != TraceEventKind::cancel) {
            e.expiry = ExpiryForm::at_jiffies;
            e.expiry_value = expires;
        }
        if (!info.written) {
            e.flags.deferrable = info.deferrable;
            if (info.label != kNoLabel) e.label = labels_[info.label];
        }
        info.written = true;
        e.flags.pinned = pinned;
        if (real_.cpus() > 1) e.cpu = cpu;
        if (callback_ != kNoCallback) e.cb_key = TimerKey{false, callback_, {}};
        writer_.write(e);
        last_ns_ = t;
        last_was_step_ = callback_ == kNoCallback;
        last_step_ = step_;
        last_cpu_ = cpu;
    }

    Sim& real_;
    TraceWriter& writer_;
    std::vector<TimerInfo> timers_;
    std::vector<std::string> labels_; // consecutive timers with one label share an entry
    std::vector<Scheduled> slots_;
    std::vector<std::uint32_t> free_slots_;
    TimerId callback_ = kNoCallback;
    std::optional<std::uint64_t> action_ns_;
    std::uint64_t step_ = 0;       // actions entered so far (0: building the workload)
    std::uint64_t last_ns_ = 0;    // the event written last: its time,
    bool last_was_step_ = false;   // whether it was outside a callback,
    std::uint64_t last_step_ = 0;  // from which action,
    unsigned last_cpu_ = 0;        // on which CPU
};

class RecordingWorkload final : public Workload {
public:
    RecordingWorkload(Sim& real, TraceWriter& writer, const WorkloadFactory& inner)
        : sim_(std::make_unique<RecordingSim>(real, writer)) {
        inner_ = inner(*sim_);
    }

    void on_action(Sim&, std::uint64_t tag) override {
        const auto [time_ns, action] = sim_->take(tag);
        sim_->enter_action(time_ns);
        switch (action.kind) {
        case Action::Kind::arm: sim_->arm(action.timer, action.expires, action.call); break;
        case Action::Kind::cancel: sim_->cancel(action.timer); break;
        case Action::Kind::call:
            if (inner_) inner_->on_action(*sim_, action.tag);
            break;
        }
        sim_->leave();
    }

    void on_fire(Sim&, const FireRecord& fired) override {
        sim_->enter_callback(fired.id);
        if (inner_) inner_->on_fire(*sim_, fired);
        sim_->leave();
    }

private:
    std::unique_ptr<RecordingSim> sim_; // declared first: outlives inner_
    std::unique_ptr<Workload> inner_;
};

} // namespace

WorkloadFactory recording(WorkloadFactory inner, TraceWriter& writer) {
    return [inner = std::move(inner), &writer](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<RecordingWorkload>(sim, writer, inner);
    };
}

} // namespace timersim
