// BatchedQueue<Q>: a timer queue (wheel/core/timer_queue.hpp) for a caller that
// does not need each arm's or cancel's answer at once.
//
//   timersim::BatchedQueue<timersim::ModernWheel> q;      // or q(ModernWheel(config))
//   const timersim::TimerId t = q.create();
//   q.arm(t, q.jiffies() + 100);   // buffered; t's node is fetched now
//   q.cancel(t);                   // buffered
//   q.set_jiffies(q.jiffies() + 1);// applies both, in order, then the tick
//   if (q.softirq_due()) q.run_softirq(on_fire);
//
// Why. An arm or cancel of a random timer among a million waits on one
// cache miss, its node. A caller that makes one call at a time (a live
// kernel, a blind benchmark loop) can only overlap as many of those misses
// as the core's out-of-order window holds calls: two or three of the
// kernel wheels' calls on the machine of docs/performance.md ("The blind
// pair and its floor"). A caller that hands its calls over and
// asks for their effects later lets the queue fetch each node when its call
// arrives and apply the calls kBatch at a time, when their nodes are in
// cache: kBatch misses in flight instead of two or three. The engine and
// the replay need each call's outcome, so they tell the queue ahead instead
// (Sim::prefetch_timer); this front is for callers that do not.
//
// Contract (what a caller may rely on):
//   * arm() and cancel() return nothing; they are applied later, in the
//     order they were made, each exactly as Q::arm/Q::cancel would be.
//   * Every other call applies the buffered ones first (flush()). Time only
//     moves through set_jiffies(), which flushes before it moves, so every
//     buffered call runs at the jiffies it was made at, and everything a
//     caller can observe (pending(), is_pending(), placement(), counters(),
//     what fires, in which order, with which clocks) is what Q gives for
//     the same calls made one at a time. tests/wheel/test_batched_queue.cpp
//     checks that in lock step against Q.
//   * Callbacks of run_softirq() may arm and cancel through this front:
//     while a pass runs, calls go straight to Q, as a kernel callback's do.
//   * Errors: whatever a buffered call would throw (a destroyed or unknown
//     timer, out of memory) is thrown by the call that applies it, i.e.
//     the next flush. The calls before it have been applied, the failing
//     one is dropped, the calls after it stay buffered for the next flush.
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

namespace timersim {

template <class Q, std::size_t kBatch = 32>
class BatchedQueue {
    static_assert(kBatch > 0);

public:
    static constexpr std::string_view name = Q::name;
    static constexpr std::size_t batch = kBatch;

    BatchedQueue() = default;
    explicit BatchedQueue(Q queue) : q_(std::move(queue)) {}
    explicit BatchedQueue(const typename Q::Config& config)
        requires requires { typename Q::Config; }
        : q_(config) {}
    // The buffer is a window into q_'s future: not copied with it.
    BatchedQueue(const BatchedQueue&) = delete;
    BatchedQueue& operator=(const BatchedQueue&) = delete;

    // Buffered.
    void arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
        if (in_pass_) {
            q_.arm(id, expires, call);
            return;
        }
        push(Call{expires, id, static_cast<std::uint8_t>(call)});
    }
    void cancel(TimerId id) {
        if (in_pass_) {
            q_.cancel(id);
            return;
        }
        push(Call{0, id, kCancel});
    }
    // Calls made and not applied yet.
    std::size_t buffered() const noexcept { return size_ - head_; }
    // Apply every buffered call now, in order.
    void flush() const {
        while (head_ < size_) {
            const Call c = calls_[head_++]; // past the call first: a failing call is dropped
            if (c.kind == kCancel) q_.cancel(c.id);
            else q_.arm(c.id, c.expires, static_cast<ArmCall>(c.kind));
        }
        head_ = size_ = 0;
    }

    // Everything else applies the buffered calls first.
    TimerId create(TimerFlags flags = {}) { return flushed().create(flags); }
    void destroy(TimerId id) { flushed().destroy(id); }
    void reserve(std::size_t timers) { q_.reserve(timers); }
    Jiffies jiffies() const noexcept { return q_.jiffies(); } // only set_jiffies() moves it
    void set_jiffies(Jiffies j) { flushed().set_jiffies(j); }
    bool softirq_due() const { return flushed().softirq_due(); }
    bool carry_over() const { return flushed().carry_over(); }
    template <class F>
    void run_softirq(F&& on_fire) {
        const Pass pass(*this);
        q_.run_softirq(on_fire);
    }
    template <class F>
    bool run_softirq(F&& on_fire, std::uint64_t budget) {
        const Pass pass(*this);
        return q_.run_softirq(on_fire, budget);
    }
    template <class F>
    bool resume_softirq(F&& on_fire, std::uint64_t budget) {
        const Pass pass(*this);
        return q_.resume_softirq(on_fire, budget);
    }
    void hold_carry_over() { flushed().hold_carry_over(); }
    ArmOutcome arm_detach(TimerId id, Jiffies& expires, ArmCall call = ArmCall::mod_timer) {
        return flushed().arm_detach(id, expires, call);
    }
    std::optional<Jiffies> next_timer_interrupt() { return flushed().next_timer_interrupt(); }
    std::size_t pending() const { return flushed().pending(); }
    bool is_pending(TimerId id) const { return flushed().is_pending(id); }
    Placement placement(TimerId id) const { return flushed().placement(id); }
    const QueueCounters& counters() const { return flushed().counters(); }
    static constexpr std::size_t bytes_per_timer() noexcept { return Q::bytes_per_timer(); }
    // The queue itself, with every buffered call applied.
    const Q& queue() const { return flushed(); }

private:
    static constexpr std::uint8_t kCancel = 0xFF; // any other kind is an ArmCall
    struct Call {
        Jiffies expires;
        TimerId id;
        std::uint8_t kind;
    };

    // The node is fetched now and written when the batch is applied, kBatch
    // calls later: by then it is in cache. A queue without prefetch() (the
    // heap: its position in the heap is what a call reads) only buffers.
    void push(const Call& c) {
        if constexpr (requires { q_.prefetch(c.id); }) q_.prefetch(c.id);
        calls_[size_++] = c;
        if (size_ == kBatch) [[unlikely]] flush();
    }
    Q& flushed() const {
        flush();
        return q_;
    }
    // A softirq pass: flushed before it, calls made by its callbacks applied
    // at once.
    struct Pass {
        explicit Pass(BatchedQueue& b) : b_(b), outer_(b.in_pass_) {
            b_.flush();
            b_.in_pass_ = true;
        }
        ~Pass() { b_.in_pass_ = outer_; }
        BatchedQueue& b_;
        bool outer_;
    };

    // mutable: a query applies the buffered calls, which changes what the
    // queue holds but not what the caller has been promised it holds.
    mutable Q q_;
    mutable std::array<Call, kBatch> calls_{};
    mutable std::size_t head_ = 0;
    mutable std::size_t size_ = 0;
    bool in_pass_ = false;
};

} // namespace timersim
