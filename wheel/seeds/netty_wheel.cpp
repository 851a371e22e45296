#include "wheel/seeds/netty_wheel.hpp"

#include <bit>
#include <string>

namespace timersim {

static_assert(TimerQueue<NettyWheel>);

namespace {

// HashedWheelTimer's normalizeTicksPerWheel(): the next power of two.
unsigned normalized_length(unsigned ticks) {
    if (ticks < 1 || ticks > (1u << 20)) throw std::invalid_argument("ticks per wheel must be 1..1048576");
    return std::bit_ceil(ticks);
}

} // namespace

NettyWheel::NettyWheel(Config config)
    : TickedQueue<NettyWheel>(config.start_jiffies.value_or(initial_jiffies(config.hz))),
      wheel_length_(normalized_length(config.ticks_per_wheel)), mask_(wheel_length_ - 1),
      transfers_per_tick_(config.transfers_per_tick),
      head_(wheel_length_ + 2, kNoTimer), tail_(wheel_length_ + 2, kNoTimer) {
    check_config_hz(config.hz);
    if (transfers_per_tick_ == 0) throw std::invalid_argument("transfers per tick must be positive");
}

void NettyWheel::push_back(std::size_t list, TimerId t) noexcept {
    Timeout& o = timeouts_[t];
    o.list = static_cast<std::uint32_t>(list);
    o.next = kNoTimer;
    o.prev = tail_[list];
    if (tail_[list] == kNoTimer)
        head_[list] = t;
    else
        timeouts_[tail_[list]].next = t;
    tail_[list] = t;
}

void NettyWheel::unlink(TimerId t) noexcept {
    Timeout& o = timeouts_[t];
    if (o.prev == kNoTimer)
        head_[o.list] = o.next;
    else
        timeouts_[o.prev].next = o.next;
    if (o.next == kNoTimer)
        tail_[o.list] = o.prev;
    else
        timeouts_[o.next].prev = o.prev;
}

std::size_t NettyWheel::count(std::size_t list) const noexcept {
    std::size_t n = 0;
    for (TimerId t = head_[list]; t != kNoTimer; t = timeouts_[t].next) ++n;
    return n;
}

// HashedWheelTimeout.cancel(): mark it and queue it for the next tick.
void NettyWheel::cancel_timeout(TimerId t) {
    Timeout& o = timeouts_[t];
    o.cancelled = true;
    o.in_cancelled_queue = true;
    cancelled_.push_back(t);
    ++counters_.paper.stop;
    ++counters_.garbage;
    if (counters_.garbage > counters_.peak_garbage) counters_.peak_garbage = counters_.garbage;
}

// A cancelled timeout is garbage until neither a list nor the cancelled
// queue refers to it; an expired one is freed at once.
void NettyWheel::release(TimerId t) {
    Timeout& o = timeouts_[t];
    if (o.where != Where::gone || o.in_cancelled_queue) return;
    if (o.cancelled) --counters_.garbage;
    timeouts_.destroy(t);
    if (--entries_ == 0) clk_ = jiffies_;
}

// newTimeout(): a new timeout at the queue's tail.
void NettyWheel::start(Node& n, TimerId id, Jiffies expires) {
    const TimerId t = timeouts_.create();
    if (entries_++ == 0) clk_ = jiffies_; // an idle worker does not walk stale ticks
    Timeout& o = timeouts_[t];
    o.timer = id;
    o.deadline = expires;
    o.where = Where::queue;
    push_back(queue_list(), t);
    n.timeout = t;
    n.pending = true;
    n.expires = expires;
    count_started();
}

// One pass of Netty's Worker.run() loop for tick t: processCancelledTasks(),
// transferTimeoutsToBuckets(), then bucket t & mask's expireTimeouts(),
// which here collects into the work list (run before the next tick).
void NettyWheel::netty_tick(Jiffies t) {
    ++counters_.paper.per_tick;
    ++counters_.buckets_scanned;
    // processCancelledTasks(): out of the bucket (HashedWheelTimeout.remove());
    // one still in the queue stays there until the transfer drops it.
    std::vector<TimerId> cancelled;
    cancelled.swap(cancelled_);
    for (const TimerId c : cancelled) {
        Timeout& o = timeouts_[c];
        o.in_cancelled_queue = false;
        ++counters_.paper.per_tick;
        ++counters_.list_steps;
        if (o.where == Where::bucket) {
            unlink(c);
            o.where = Where::gone;
        }
        release(c);
    }
    cancelled.clear();
    if (cancelled_.empty()) cancelled_.swap(cancelled); // keep the capacity
    // transferTimeoutsToBuckets(): at most transfers_per_tick_ from the queue.
    for (std::uint32_t i = 0; i < transfers_per_tick_ && head_[queue_list()] != kNoTimer; ++i) {
        const TimerId q = head_[queue_list()];
        unlink(q);
        Timeout& o = timeouts_[q];
        ++counters_.paper.per_tick;
        if (o.cancelled) {
            o.where = Where::gone;
            release(q);
            continue;
        }
        o.rounds = jiffies_diff(o.deadline, t) / static_cast<std::int64_t>(wheel_length_);
        const Jiffies at = time_after(o.deadline, t) ? o.deadline : t; // never the past
        o.where = Where::bucket;
        push_back(at & mask_, q);
        ++counters_.cascade_moves;
    }
    // expireTimeouts(): every entry of the bucket.
    const std::size_t bucket = t & mask_;
    for (TimerId e = head_[bucket]; e != kNoTimer;) {
        Timeout& o = timeouts_[e];
        const TimerId next = o.next;
        ++counters_.paper.per_tick;
        ++counters_.list_steps;
        if (o.rounds <= 0) {
            unlink(e);
            o.where = Where::work;
            push_back(work_list(), e);
        } else if (o.cancelled) {
            unlink(e);
            o.where = Where::gone;
            release(e);
        } else {
            --o.rounds;
        }
        e = next;
    }
}

QueueLayout NettyWheel::layout() const {
    QueueLayout l;
    l.summary = "netty HashedWheelTimer of " + std::to_string(wheel_length_) + " buckets: tick " +
                std::to_string(clk_) + ", " + std::to_string(pending_) + " pending, " +
                std::to_string(counters_.garbage) + " cancelled timeouts held";
    LayoutRow wheel{"wheel", {}, 0, static_cast<unsigned>(clk_ & mask_)};
    for (std::size_t b = 0; b < wheel_length_; ++b) {
        wheel.counts.push_back(static_cast<std::uint32_t>(count(b)));
        wheel.total += wheel.counts.back();
    }
    l.rows.push_back(std::move(wheel));
    l.rows.push_back({"queue", {}, count(queue_list()), 0});
    l.rows.push_back({"cancelled", {}, cancelled_.size(), 0});
    return l;
}

} // namespace timersim
