#include "wheel/kernel/modern69_wheel.hpp"

#include <stdexcept>
#include <string>

namespace timersim {

TimerId Modern69Wheel::create(TimerFlags flags) {
    // The wheels' pools are created and destroyed together, so they hand
    // out the same id; the timer's flags are kept here, not on the wheels
    // (which have no deferrable base of their own).
    const TimerId id = wheels_[0].create();
    for (unsigned b = 1; b < kBases; ++b)
        if (wheels_[b].create() != id) throw std::logic_error("modern-6.9: the bases' timer ids diverged");
    if (id >= nodes_.size()) nodes_.resize(std::size_t{id} + 1);
    nodes_[id] = Node{.base = flags.deferrable ? base_def : base_global, .deferrable = flags.deferrable};
    return id;
}

void Modern69Wheel::destroy(TimerId id) {
    for (ModernWheel& w : wheels_) w.destroy(id);
}

void Modern69Wheel::reserve(std::size_t timers) {
    for (ModernWheel& w : wheels_) w.reserve(timers);
    nodes_.reserve(timers);
}

ArmOutcome Modern69Wheel::arm(TimerId id, Jiffies expires, ArmCall call) {
    Node& n = nodes_.at(id);
    const BaseIndex target = target_base(n, call);
    ModernWheel& from = wheels_[n.base];
    ArmOutcome outcome;
    if (target == n.base || !from.is_pending(id)) {
        // 6.9 __mod_timer() of an idle timer locks, forwards and enqueues on
        // the target base; of a pending one that stays on its base, as 6.1.
        outcome = wheels_[target].arm(id, expires, call);
    } else {
        // Pending on another of this CPU's bases: the shortcuts against that
        // base first, then the base switch (6.9 __mod_timer(): new_base !=
        // base, the timer's callback not running there).
        Jiffies e = expires;
        outcome = from.arm_detach(id, e, call);
        if (outcome == ArmOutcome::queued) outcome = wheels_[target].arm(id, e, call);
    }
    if (outcome == ArmOutcome::queued) n.base = target;
    const std::uint64_t now_pending = pending();
    if (now_pending > peak_pending_) peak_pending_ = now_pending;
    return outcome;
}

Modern69Wheel::NextEvents Modern69Wheel::next_timer_events() {
    // Each base forwards its own clk and sets its own is_idle, as 6.9
    // fetch_next_timer_interrupt() does for LOCAL and GLOBAL; DEF's clk is
    // forwarded too (6.9 timer_use_tmigr() path), its timers not counted.
    NextEvents next{wheels_[base_local].next_timer_interrupt(), wheels_[base_global].next_timer_interrupt()};
    wheels_[base_def].next_timer_interrupt();
    return next;
}

std::optional<Jiffies> Modern69Wheel::next_timer_interrupt() {
    const auto [local, global] = next_timer_events();
    if (!local) return global;
    if (!global) return local;
    return time_before(*global, *local) ? global : local;
}

QueueLayout Modern69Wheel::layout() const {
    QueueLayout l;
    static constexpr std::array<BaseIndex, kBases> order{base_global, base_local, base_def};
    static constexpr std::array<const char*, kBases> prefix{"L", "pL", "dL"};
    for (unsigned i = 0; i < kBases; ++i) {
        const ModernWheel& w = wheels_[order[i]];
        const Jiffies clk = w.base(ModernWheel::base_std).clk;
        if (order[i] == base_def) l.deferrable_row = static_cast<unsigned>(l.rows.size());
        for (unsigned level = 0; level < depth(); ++level) {
            LayoutRow row;
            row.name = prefix[i] + std::to_string(level);
            row.first_slot = level * modern::kLevelSize;
            row.pointer = static_cast<unsigned>((clk >> modern::level_shift(level)) & modern::kLevelMask);
            for (unsigned slot = 0; slot < modern::kLevelSize; ++slot) {
                const std::uint32_t n = w.bucket_count(ModernWheel::base_std, row.first_slot + slot);
                row.counts.push_back(n);
                row.total += n;
            }
            l.rows.push_back(std::move(row));
        }
    }
    l.summary = "modern-6.9: global clk " + std::to_string(wheels_[base_global].base(ModernWheel::base_std).clk) +
                ", local clk " + std::to_string(wheels_[base_local].base(ModernWheel::base_std).clk) +
                ", deferrable clk " + std::to_string(wheels_[base_def].base(ModernWheel::base_std).clk) + ", " +
                std::to_string(pending()) + " pending";
    return l;
}

const QueueCounters& Modern69Wheel::counters() const noexcept {
    counters_ = wheels_[0].counters();
    for (unsigned b = 1; b < kBases; ++b) counters_.merge(wheels_[b].counters());
    counters_.softirq_runs = wheels_[base_local].counters().softirq_runs;
    counters_.peak_pending = peak_pending_;
    return counters_;
}

} // namespace timersim
