// HeapQueue: the exact reference. A binary min-heap on (expires, arm order):
// every timer runs in the first softirq with jiffies >= expires, so on a
// ticking CPU it fires at exactly its expiry jiffy. It answers "when should
// this timer have fired" for the wheels' precision error.
//
// Each node stores its heap position, so cancel and re-arm are O(log n)
// without searching. There is no slack, no bucket and no shortcut; deferrable
// timers are treated like any other (the reference ignores idle policy).
#pragma once

#include "wheel/core/queue_basics.hpp"
#include "wheel/core/queue_config.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"

#include <optional>
#include <stdexcept>
#include <vector>

namespace timersim {

class HeapQueue : public QueueBasics<HeapQueue> {
public:
    static constexpr std::string_view name = "heap";
    using Config = ClockConfig;

    struct Node {
        TimerId next = kNoTimer;         // free-list link only
        std::uint32_t heap_pos = kNoTimer; // kNoTimer when not pending
        bool live = false;
        Jiffies expires = 0;
        std::uint64_t order = 0;         // arm sequence: FIFO among equal expiries
    };

    explicit HeapQueue(Config config)
        : jiffies_(config.start_jiffies.value_or(initial_jiffies(config.hz))) {
        check_config_hz(config.hz);
    }

    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer);
    // An arm from another CPU (wheel/core/timer_queue.hpp): no shortcut, so the
    // timer leaves unless it is mod_timer_pending() on an idle timer.
    ArmOutcome arm_detach(TimerId id, Jiffies& expires, ArmCall call = ArmCall::mod_timer);
    bool cancel(TimerId id);

    bool softirq_due() const noexcept {
        return !heap_.empty() && time_after_eq(jiffies_, pool_[heap_.front()].expires);
    }
    // Nothing is collected ahead: what a budget leaves is still in the heap.
    static constexpr bool carry_over() noexcept { return false; }
    static constexpr void hold_carry_over() noexcept {}

    template <class F>
    void run_softirq(F&& on_fire) {
        ++counters_.softirq_runs;
        while (softirq_due()) expire_first(on_fire);
    }
    // With a budget (wheel/core/timer_queue.hpp). Nothing is collected ahead, so
    // the carry-over is simply the due timers still in the heap.
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        ++counters_.softirq_runs;
        return resume_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        if (budget == 0) return true;
        while (softirq_due()) {
            expire_first(on_fire);
            if (--budget == 0) return true;
        }
        return false;
    }

    std::optional<Jiffies> next_timer_interrupt() {
        if (heap_.empty()) return std::nullopt;
        const Jiffies e = pool_[heap_.front()].expires;
        return time_before_eq(e, jiffies_) ? jiffies_ : e;
    }

    std::size_t pending() const noexcept { return heap_.size(); }
    // Pending is being in the heap (the node has no flag): hides
    // QueueBasics::is_pending().
    bool is_pending(TimerId id) const {
        pool_.check(id);
        return pool_[id].heap_pos != kNoTimer;
    }
    Placement placement(TimerId id) const;
    // The node plus its 4-byte slot in the heap array.
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node) + sizeof(TimerId); }
    void reserve_beside_pool(std::size_t timers) { heap_.reserve(timers); }

private:
    friend class QueueBasics<HeapQueue>;

    // The earliest timer leaves the heap and runs.
    template <class F>
    void expire_first(F& on_fire) {
        const TimerId id = heap_.front();
        remove_at(0);
        ++counters_.expired;
        const FiredTimer fired{id, pool_[id].expires, pool_[id].expires};
        on_fire(fired);
    }
    bool before(TimerId a, TimerId b) const noexcept {
        const Node& x = pool_[a];
        const Node& y = pool_[b];
        return x.expires == y.expires ? x.order < y.order : time_before(x.expires, y.expires);
    }
    void put(std::size_t pos, TimerId id) noexcept {
        heap_[pos] = id;
        pool_[id].heap_pos = static_cast<std::uint32_t>(pos);
    }
    void sift_up(std::size_t pos) noexcept;
    void sift_down(std::size_t pos) noexcept;
    void remove_at(std::size_t pos) noexcept;

    Jiffies jiffies_;
    std::uint64_t next_order_ = 0;
    std::vector<TimerId> heap_;
    TimerPool<Node> pool_;
    QueueCounters counters_;
};

} // namespace timersim
