// ModernWheel: one CPU's timer bases in Linux 6.1 (kernel/time/timer.c),
// the non-cascading wheel introduced in 4.8. Geometry: wheel/modern_levels.hpp.
//
// Per base (BASE_STD, and BASE_DEF for deferrable timers when NO_HZ_COMMON):
//   clk            the next jiffy the wheel will process; one *ahead* of the
//                  last processed bucket while its timers run
//   next_expiry    bucket expiry of the earliest pending bucket; lazily
//                  recomputed (only flagged after a delete), so it can be
//                  stale and early, which makes the tick raise a spurious softirq
//   pending_map    one bit per bucket, one 64-bit word per level
//
// What the kernel does and this model does too:
//   * forward_timer_base() before every index computation, so a base that
//     slept does not inflate deltas; it never jumps over a due bucket.
//   * mod_timer() shortcuts: same expires -> nothing; same bucket -> only
//     ->expires changes (no dequeue, no enqueue, no trace event).
//   * the softirq jumps clk straight to next_expiry, collects one bucket per
//     level while the lower clock bits are zero, runs the highest level first
//     and each bucket from its head (LIFO with respect to enqueue order).
#pragma once

#include "wheel/bucket_lists.hpp"
#include "wheel/modern_levels.hpp"
#include "wheel/timer_pool.hpp"
#include "wheel/timer_queue.hpp"

#include <array>
#include <bit>
#include <optional>
#include <stdexcept>

namespace timersim {

class ModernWheel {
public:
    static constexpr std::string_view name = "modern";

    struct Config {
        unsigned hz = 250;
        std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
        // CONFIG_NO_HZ_COMMON: deferrable timers get their own base (BASE_DEF).
        bool deferrable_base = true;
    };

    enum BaseIndex : std::uint8_t { base_std = 0, base_def = 1 };

    struct Node {
        TimerId next = kNoTimer;
        TimerId prev = kNoTimer;
        std::uint16_t slot = 0;     // storage slot of the list it is linked into
        std::uint16_t idx = 0;      // kernel bucket index (timer->flags >> 22)
        bool live = false;
        bool pending = false;
        bool deferrable = false;
        std::uint8_t base = base_std;
        Jiffies expires = 0;
        Jiffies bucket_expiry = 0;
    };

    struct Base {
        explicit Base(unsigned depth, Jiffies start)
            : lists(modern::wheel_size(depth) + depth), clk(start),
              next_expiry(start + modern::kNextTimerMaxDelta) {}
        BucketLists lists;        // buckets 0..64*depth-1, then one work list per level
        Jiffies clk;
        Jiffies next_expiry;      // 6.1 init_timer_cpu(): clk + NEXT_TIMER_MAX_DELTA
        bool next_expiry_recalc = false;
        bool timers_pending = false;
        bool is_idle = false;
        std::array<std::uint64_t, modern::kMaxDepth> pending_map{};
        std::size_t queued = 0;
    };

    ModernWheel();
    explicit ModernWheel(Config config);

    TimerId create(TimerFlags flags = {}) {
        const TimerId id = pool_.create();
        pool_[id].deferrable = flags.deferrable;
        return id;
    }
    void destroy(TimerId id) {
        cancel(id);
        pool_.destroy(id);
    }

    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer);
    bool cancel(TimerId id);

    Jiffies jiffies() const noexcept { return jiffies_; }
    void set_jiffies(Jiffies j) {
        if (time_before(j, jiffies_)) throw std::invalid_argument("jiffies cannot go backwards");
        jiffies_ = j;
    }

    // 6.1 run_local_timers(): raise only when a base's next_expiry is due. It
    // is only called from a running tick, i.e. when the CPU is awake, so the
    // deferrable base is checked too.
    bool softirq_due() const noexcept {
        if (time_after_eq(jiffies_, bases_[base_std].next_expiry)) return true;
        return deferrable_base_ && time_after_eq(jiffies_, bases_[base_def].next_expiry);
    }

    // 6.1 run_timer_softirq(): the standard base, then the deferrable base.
    template <class F>
    void run_softirq(F&& on_fire) {
        ++counters_.softirq_runs;
        run_base(bases_[base_std], on_fire);
        if (deferrable_base_) run_base(bases_[base_def], on_fire);
    }

    // 6.1 get_next_timer_interrupt() for basej = jiffies, on the standard base
    // only (deferrable timers never wake an idle CPU). Forwards clk as the
    // kernel does and sets is_idle when the next event is more than one tick
    // away. Returns the jiffy of the next event (jiffies itself if one is
    // already due), or nothing when no timer is pending.
    std::optional<Jiffies> next_timer_interrupt();
    // timer_clear_idle(): the CPU left idle.
    void clear_idle() noexcept { bases_[base_std].is_idle = false; }

    std::size_t pending() const noexcept {
        return bases_[base_std].queued + bases_[base_def].queued;
    }
    bool is_pending(TimerId id) const {
        pool_.check(id);
        return pool_[id].pending;
    }
    Placement placement(TimerId id) const;
    const QueueCounters& counters() const noexcept { return counters_; }
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node); }

    unsigned hz() const noexcept { return hz_; }
    unsigned depth() const noexcept { return depth_; }
    const Base& base(BaseIndex b) const noexcept { return bases_[b]; }
    // Timers queued in bucket idx (0 .. 64*depth-1) of a base (walks the bucket).
    std::uint32_t bucket_count(BaseIndex b, unsigned idx) const noexcept {
        return bases_[b].lists.count(pool_.nodes(), idx);
    }
    void reserve(std::size_t timers) { pool_.reserve(timers); }

private:
    Base& base_of(const Node& n) noexcept { return bases_[n.base]; }
    std::uint8_t target_base(const Node& n) const noexcept {
        return (deferrable_base_ && n.deferrable) ? base_def : base_std;
    }
    std::size_t work_list(unsigned level) const noexcept {
        return modern::wheel_size(depth_) + level;
    }

    void forward_timer_base(Base& b) noexcept;
    void enqueue_timer(Base& b, TimerId id, const modern::WheelIndex& wi) noexcept;
    void detach_if_pending(Base& b, TimerId id) noexcept;
    unsigned collect_expired_timers(Base& b) noexcept;
    Jiffies next_timer_search(Base& b) noexcept; // __next_timer_interrupt()

    template <class F>
    void run_base(Base& b, F& on_fire);
    template <class F>
    void expire_timers(Base& b, unsigned level, F& on_fire);

    unsigned hz_;
    unsigned depth_;
    bool deferrable_base_;
    Jiffies jiffies_;
    std::array<Base, 2> bases_;
    TimerPool<Node> pool_;
    QueueCounters counters_;
};

// 6.1 __run_timers(): loop while a bucket is due; each pass jumps clk to
// next_expiry, collects, moves clk one ahead, recomputes next_expiry, then
// runs the collected buckets from the highest level down.
template <class F>
void ModernWheel::run_base(Base& b, F& on_fire) {
    if (time_before(jiffies_, b.next_expiry)) return;
    while (time_after_eq(jiffies_, b.clk) && time_after_eq(jiffies_, b.next_expiry)) {
        const unsigned levels = collect_expired_timers(b);
        if (levels == 0) ++counters_.empty_runs;
        ++b.clk;
        b.next_expiry = next_timer_search(b);
        for (unsigned level = depth_; level-- > 0;)
            if (levels & (1u << level)) expire_timers(b, level, on_fire);
    }
}

// 6.1 expire_timers(): take timers from the head; a callback may re-arm or
// delete any timer, including ones still waiting in this work list.
template <class F>
void ModernWheel::expire_timers(Base& b, unsigned level, F& on_fire) {
    const std::size_t list = work_list(level);
    const Jiffies base_clk = b.clk - 1; // trace "baseclk": the collected clock
    auto& nodes = pool_.nodes();
    while (!b.lists.empty(list)) {
        const TimerId id = b.lists.front(list);
        b.lists.unlink(nodes, id);
        Node& n = nodes[id];
        n.pending = false;
        --b.queued;
        ++counters_.expired;
        const FiredTimer fired{id, n.expires, base_clk};
        on_fire(fired);
    }
}

} // namespace timersim
