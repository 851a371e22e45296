// NettyWheel: Netty's HashedWheelTimer (io.netty.util.HashedWheelTimer,
// netty/netty common/src/main/java/io/netty/util/HashedWheelTimer.java, as
// of commit 06cabb70), on the simulated machine's tick. Our own code after
// its documented behaviour, not a translation.
//
//   NettyWheel w(NettyWheel::Config{.hz = 250});
//   const TimerId t = w.create();
//   w.arm(t, w.jiffies() + 600);   // newTimeout(): a new timeout, into the queue
//   w.cancel(t);                   // Timeout.cancel(): only marked, removed next tick
//   tick_to(w, w.jiffies() + 1, fire);
//
// Callbacks passed to run_softirq may arm and cancel any timer (wheel/
// timer_queue.hpp), including one collected in the same pass: it is then
// skipped, as Netty's expire() skips a cancelled timeout.
//
// What Netty does and this model does too:
//   * a ring of ticksPerWheel buckets, rounded up to a power of two (512 by
//     default); each bucket a doubly linked list, appended at its tail and
//     walked from its head;
//   * newTimeout() creates a timeout and adds it to a queue ("processed on
//     the next tick"); each tick moves at most 100,000 of them into buckets
//     (transferTimeoutsToBuckets()): bucket max(deadline, tick) & mask,
//     remainingRounds = (deadline - tick) / wheel length, cancelled ones
//     dropped;
//   * cancel() only marks the timeout and adds it to a cancelled queue; the
//     next tick, before the transfer, takes each out of its bucket
//     (processCancelledTasks()): "a GC latency of max. 1 tick duration". A
//     cancelled timeout still in the queue is only dropped when the
//     transfer reaches it. Until then its memory is held: counted as
//     `garbage` (now) and `peak_garbage`;
//   * each tick, after the transfer, walks its bucket: rounds <= 0 expires,
//     a cancelled timeout is removed, anything else loses a round.
//
// A timer here is a handle that lives on (our TimerId); Netty's timeouts are
// one-shot objects, so each arm of a timer creates a new timeout, and a
// re-arm of a pending timer cancels the old one first, as a Netty user's
// timeout.cancel(); timer.newTimeout(...) does.
//
// Ticks: Netty's tick k is our jiffy k, and a timeout's deadline in ticks
// is the timer's expires, so a timeout transferred in time fires on its
// exact jiffy (Netty rounds a deadline in ns down to a tick, which our
// jiffies have already done). It fires late only when the 100,000 a tick
// limit leaves it in the queue past its tick. Netty's worker thread ticks
// as long as it runs, so next_timer_interrupt() is the next tick while the
// timer holds anything: the idle CPU's tick is never stopped.
#pragma once

#include "wheel/core/clock.hpp"
#include "wheel/core/queue_layout.hpp"
#include "wheel/core/ticked_queue.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"

#include <optional>
#include <stdexcept>
#include <vector>

namespace timersim {

class NettyWheel : public TickedQueue<NettyWheel> {
    friend class TickedQueue<NettyWheel>;
    friend class QueueBasics<NettyWheel>;

public:
    static constexpr std::string_view name = "netty";
    static constexpr unsigned kDefaultTicksPerWheel = 512;
    static constexpr std::uint32_t kTransfersPerTick = 100'000; // transferTimeoutsToBuckets()

    struct Config {
        unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
        std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
        unsigned ticks_per_wheel = kDefaultTicksPerWheel; // rounded up to a power of two, as Netty does
        std::uint32_t transfers_per_tick = kTransfersPerTick;
    };

    // Our timer: which timeout it currently has.
    struct Node {
        TimerId next = kNoTimer; // free-list link only
        TimerId timeout = kNoTimer;
        bool live = false;
        bool pending = false;
        Jiffies expires = 0;
    };
    // Netty's HashedWheelTimeout.
    enum class Where : std::uint8_t { queue, bucket, work, gone };
    struct Timeout {
        TimerId next = kNoTimer; // bucket / queue links; the free list
        TimerId prev = kNoTimer;
        TimerId timer = kNoTimer;
        bool live = false;
        bool cancelled = false;
        bool in_cancelled_queue = false;
        Where where = Where::gone;
        std::uint32_t list = 0; // bucket, or the queue
        Jiffies deadline = 0;
        std::int64_t rounds = 0; // remainingRounds
    };

    explicit NettyWheel(Config config);

    bool carry_over() const noexcept { return head_[work_list()] != kNoTimer; }

    // Our timer handle plus Netty's timeout object (its links, rounds, deadline).
    static constexpr std::size_t bytes_per_timer() noexcept { return sizeof(Node) + sizeof(Timeout); }
    // What one held cancelled timeout keeps (counters().garbage counts them).
    static constexpr std::size_t garbage_entry_bytes() noexcept { return sizeof(Timeout); }
    void reserve_beside_pool(std::size_t timers) { timeouts_.reserve(timers); }
    QueueLayout layout() const;
    unsigned wheel_length() const noexcept { return wheel_length_; }
    Jiffies tick_clock() const noexcept { return clk_; }
    std::size_t queued_timeouts() const noexcept { return count(queue_list()); }

private:
    std::size_t queue_list() const noexcept { return wheel_length_; }
    std::size_t work_list() const noexcept { return wheel_length_ + 1; }
    std::size_t count(std::size_t list) const noexcept;

    // TickedQueue's steps (wheel/core/ticked_queue.hpp). The worker has
    // ticks to process while it holds any timeout, cancelled ones included.
    bool holds_timers() const noexcept { return entries_ > 0; }
    void start(Node& n, TimerId id, Jiffies expires);
    void stop(Node& n, TimerId) {
        cancel_timeout(n.timeout);
        n.pending = false;
        n.timeout = kNoTimer;
        --pending_;
    }
    void process_tick() { netty_tick(clk_++); }
    // The worker wakes every tick while it holds a timeout.
    Jiffies next_event() const noexcept { return clk_; }
    // Level 0: a bucket (slot = its index); level 1: still in the queue.
    void place_of(const Node& n, Placement& p) const noexcept {
        const Timeout& o = timeouts_[n.timeout];
        p.level = o.where == Where::queue ? 1 : 0;
        p.slot = o.where == Where::bucket ? o.list : 0;
    }

    void push_back(std::size_t list, TimerId t) noexcept;
    void unlink(TimerId t) noexcept;
    void cancel_timeout(TimerId t);
    void release(TimerId t); // free the timeout if nothing refers to it any more
    void netty_tick(Jiffies t);

    template <bool Bounded, class F>
    bool expire_work(F& on_fire, std::uint64_t& budget) {
        const Jiffies base_clk = clk_ - 1; // before release() may snap an emptied wheel's clock
        while (head_[work_list()] != kNoTimer) {
            const TimerId t = head_[work_list()];
            unlink(t);
            Timeout& o = timeouts_[t];
            o.where = Where::gone;
            if (o.cancelled) { // cancelled after it was collected: expire() does nothing
                release(t);
                continue;
            }
            const TimerId id = o.timer;
            const Jiffies deadline = o.deadline;
            Node& n = pool_[id];
            n.timeout = kNoTimer;
            release(t);
            if (expire<Bounded>(n, FiredTimer{id, deadline, base_clk}, on_fire, budget)) return true;
        }
        return false;
    }

    unsigned wheel_length_;
    Jiffies mask_;
    std::uint32_t transfers_per_tick_;
    // clk_ is Netty's worker `tick`; pending_ counts the timers with a live
    // (not cancelled) timeout.
    std::size_t entries_ = 0;  // timeouts not yet freed, cancelled ones included
    std::vector<TimerId> head_, tail_; // buckets, then the queue, then the work list
    std::vector<TimerId> cancelled_;   // cancelledTimeouts
    TimerPool<Node> pool_;
    TimerPool<Timeout> timeouts_;
    QueueCounters counters_;
};

} // namespace timersim
