// Modern69Wheel: one CPU's timer bases in Linux 6.9 and later
// (kernel/time/timer.c), the design `modern-6.9`. The wheel is 6.1's
// (ModernWheel: geometry, calc_wheel_index(), forward_timer_base(), the run
// loop); what 6.9 changed is how many bases a CPU has and which runs when:
//
//   BASE_LOCAL   TIMER_PINNED timers (mod_timer() of a pinned timer,
//                add_timer_on(), which sets TIMER_PINNED since 6.9)
//   BASE_GLOBAL  the other non-deferrable timers; an idle CPU's are expired
//                by another CPU (the timer migration's pull model: the
//                engine's business, run_remote_softirq() is the hook)
//   BASE_DEF     TIMER_DEFERRABLE timers, pinned or not
//
// 6.9 get_timer_this_cpu_base() picks the base from the timer's flags at
// every __mod_timer(); here the call says it (ArmCall::mod_timer_pinned is
// a pinned timer's, mod_timer a global one's, mod_timer_pending keeps the
// base the timer is on), and TIMER_DEFERRABLE is fixed at create().
//
// Each base is a single-base ModernWheel (deferrable_base off: the wheel
// code is the same for every base; only the choice of base differs), so
// each has its own clk, next_expiry and pending bitmaps, as in 6.9. A
// timer has a node on all three, with the same id (they are created and
// destroyed together), and is queued on at most one.
#pragma once

#include "wheel/core/queue_layout.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace timersim {

class Modern69Wheel {
public:
    static constexpr std::string_view name = "modern-6.9";

    struct Config {
        unsigned hz = 0; // CONFIG_HZ, as ModernWheel's
        std::optional<Jiffies> start_jiffies;
    };

    // 6.9 kernel/time/timer.c: BASE_LOCAL 0, BASE_GLOBAL 1, BASE_DEF 2.
    enum BaseIndex : std::uint8_t { base_local = 0, base_global = 1, base_def = 2 };
    static constexpr unsigned kBases = 3;
    // The arm's call, not only the timer, decides its base (the engine
    // keeps the call when it moves a timer to another CPU).
    static constexpr bool kPinnedPicksBase = true;

    explicit Modern69Wheel(Config config)
        : wheels_{ModernWheel(single_base(config)), ModernWheel(single_base(config)),
                  ModernWheel(single_base(config))} {}

    TimerId create(TimerFlags flags = {});
    void destroy(TimerId id);
    void reserve(std::size_t timers);

    // 6.9 __mod_timer(): the same-expiry and same-bucket shortcuts are
    // taken against the base the timer is on; otherwise it leaves that base
    // and is queued on the one its flags pick (get_timer_this_cpu_base()).
    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer);
    bool cancel(TimerId id) { return wheel_of(id).cancel(id); }
    // __mod_timer() from another CPU: the timer's own base's shortcuts, then
    // it leaves this CPU (wheel/core/timer_queue.hpp).
    ArmOutcome arm_detach(TimerId id, Jiffies& expires, ArmCall call = ArmCall::mod_timer) {
        return wheel_of(id).arm_detach(id, expires, call);
    }

    Jiffies jiffies() const noexcept { return wheels_[0].jiffies(); }
    void set_jiffies(Jiffies j) {
        for (ModernWheel& w : wheels_) w.set_jiffies(j);
    }

    // 6.9 run_local_timers(): raise when any base's next_expiry is due.
    bool softirq_due() const noexcept {
        for (const ModernWheel& w : wheels_)
            if (w.softirq_due()) return true;
        return false;
    }
    bool carry_over() const noexcept {
        for (const ModernWheel& w : wheels_)
            if (w.carry_over()) return true;
        return false;
    }
    void hold_carry_over() noexcept {
        for (ModernWheel& w : wheels_) w.hold_carry_over();
    }
    // A bucket of any base is due now (ModernWheel::bucket_due()).
    bool bucket_due() const noexcept {
        for (const ModernWheel& w : wheels_)
            if (w.bucket_due()) return true;
        return false;
    }

    // 6.9 run_timer_softirq(): run_timer_base(BASE_LOCAL), then BASE_GLOBAL,
    // then BASE_DEF. tmigr_handle_remote(), which comes after them, is the
    // caller's: run_remote_softirq() on the idle CPU's queue.
    template <class F>
    void run_softirq(F&& on_fire) {
        for (ModernWheel& w : wheels_) w.run_softirq(on_fire);
    }
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        pass_ = PassState{};
        return run_pass(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        return run_pass(on_fire, budget);
    }

    // 6.9 timer_expire_remote(): another CPU runs this (idle) CPU's
    // BASE_GLOBAL, __run_timer_base(), which does nothing unless its
    // next_expiry is due. Budgeted like run_softirq().
    bool remote_due() const noexcept { return wheels_[base_global].softirq_due(); }
    // The counters run_remote_softirq() and resume_remote_softirq() change:
    // the global base's alone, so a caller charging a remote run reads them
    // without the merge counters() does.
    const QueueCounters& remote_counters() const noexcept { return wheels_[base_global].counters(); }
    template <class F>
    bool run_remote_softirq(F&& on_fire, std::uint64_t budget) {
        return wheels_[base_global].run_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_remote_softirq(F&& on_fire, std::uint64_t budget) {
        return wheels_[base_global].resume_softirq(on_fire, budget);
    }

    // 6.9 get_next_timer_interrupt(): the earlier of BASE_LOCAL's and
    // BASE_GLOBAL's next events (deferrable timers never wake a CPU). The
    // kernel hands the global one to the migration hierarchy unless this is
    // the last CPU to go idle; the engine's machine says who expires it.
    std::optional<Jiffies> next_timer_interrupt();
    // The same, BASE_LOCAL's and BASE_GLOBAL's next events apart (6.9
    // fetch_next_timer_interrupt() keeps them apart for
    // tmigr_cpu_deactivate(), which takes the global one).
    struct NextEvents {
        std::optional<Jiffies> local;
        std::optional<Jiffies> global;
    };
    NextEvents next_timer_events();
    // BASE_GLOBAL's next event, changing nothing: what the hierarchy holds
    // for this CPU while it is idle (ModernWheel::peek_next_event()).
    std::optional<Jiffies> global_next_event() const noexcept {
        return wheels_[base_global].peek_next_event();
    }
    void clear_idle() noexcept {
        for (ModernWheel& w : wheels_) w.clear_idle();
    }

    std::size_t pending() const noexcept {
        return wheels_[0].pending() + wheels_[1].pending() + wheels_[2].pending();
    }
    bool is_pending(TimerId id) const { return wheel_of(id).is_pending(id); }
    Placement placement(TimerId id) const { return with_base(id, wheel_of(id).placement(id)); }
    Placement last_placement(TimerId id) const { return with_base(id, wheel_of(id).last_placement(id)); }
    // The base the timer is queued on, or was last.
    BaseIndex base_of(TimerId id) const { return static_cast<BaseIndex>(nodes_.at(id).base); }
    // The three bases' counters, summed; softirq_runs counts the CPU's own
    // runs (BASE_LOCAL's: every run starts there), not the remote ones.
    const QueueCounters& counters() const noexcept;
    // A node on every base; the bucket entries of one.
    static constexpr std::size_t bytes_per_timer() noexcept {
        return kBases * sizeof(ModernWheel::Node) + 2 * sizeof(TimerId) + sizeof(Node);
    }
    void prefetch(TimerId id) const noexcept {
        if (id < nodes_.size()) wheels_[nodes_[id].base].prefetch(id);
    }

    unsigned depth() const noexcept { return wheels_[0].depth(); }
    // The three bases' levels as rows of 64 buckets (`timersim step`, the
    // playground): BASE_GLOBAL's as L0.., where most timers are, then
    // BASE_LOCAL's (pL0..) and BASE_DEF's (dL0..). A pinned timer's
    // placement names its level, drawn on the global rows' names.
    QueueLayout layout() const;
    const ModernWheel& wheel(BaseIndex b) const noexcept { return wheels_[b]; }

private:
    struct Node {
        std::uint8_t base = base_global; // the base it is queued on, or was last
        bool deferrable = false;
    };
    // Where a budgeted pass is: which base, and whether its run has started
    // (then it is resumed, not started again).
    struct PassState {
        unsigned base = base_local;
        bool started = false;
    };

    static ModernWheel::Config single_base(const Config& c) {
        return ModernWheel::Config{.hz = c.hz, .start_jiffies = c.start_jiffies, .deferrable_base = false};
    }
    // 6.9 get_timer_cpu_base(): DEF for a deferrable timer, else LOCAL for a
    // pinned one, else GLOBAL; mod_timer_pending() names no flags of its own.
    BaseIndex target_base(const Node& n, ArmCall call) const noexcept {
        if (n.deferrable) return base_def;
        if (call == ArmCall::mod_timer_pinned) return base_local;
        if (call == ArmCall::mod_timer_pending) return static_cast<BaseIndex>(n.base);
        return base_global;
    }
    ModernWheel& wheel_of(TimerId id) { return wheels_[nodes_.at(id).base]; }
    const ModernWheel& wheel_of(TimerId id) const { return wheels_[nodes_.at(id).base]; }
    Placement with_base(TimerId id, Placement p) const {
        p.deferrable_base = nodes_.at(id).base == base_def;
        return p;
    }

    // Budgeted: through the bases in order, each run started once and
    // resumed after a stop; what the budget allows is what is left of it
    // after the bases before (their expiries, from the counters).
    template <class F>
    bool run_pass(F& on_fire, std::uint64_t budget) {
        for (; pass_.base < kBases; ++pass_.base, pass_.started = false) {
            ModernWheel& w = wheels_[pass_.base];
            const std::uint64_t before = w.counters().expired;
            const bool stopped =
                pass_.started ? w.resume_softirq(on_fire, budget) : w.run_softirq(on_fire, budget);
            pass_.started = true;
            if (stopped) return true;
            const std::uint64_t used = w.counters().expired - before;
            budget = used >= budget ? 0 : budget - used;
            if (budget == 0) return true;
        }
        return false;
    }

    std::array<ModernWheel, kBases> wheels_;
    std::vector<Node> nodes_; // by id, as the wheels' pools
    PassState pass_;
    std::uint64_t peak_pending_ = 0; // of the three bases together
    mutable QueueCounters counters_; // the sum, made when asked for
};

} // namespace timersim
