#include "wheel/core/heap_queue.hpp"

#include <algorithm>

namespace timersim {

void HeapQueue::sift_up(std::size_t pos) noexcept {
    const TimerId id = heap_[pos];
    while (pos > 0) {
        const std::size_t parent = (pos - 1) / 2;
        if (!before(id, heap_[parent])) break;
        put(pos, heap_[parent]);
        pos = parent;
    }
    put(pos, id);
}

void HeapQueue::sift_down(std::size_t pos) noexcept {
    const TimerId id = heap_[pos];
    const std::size_t n = heap_.size();
    for (;;) {
        std::size_t child = 2 * pos + 1;
        if (child >= n) break;
        if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
        if (!before(heap_[child], id)) break;
        put(pos, heap_[child]);
        pos = child;
    }
    put(pos, id);
}

void HeapQueue::remove_at(std::size_t pos) noexcept {
    const TimerId id = heap_[pos];
    pool_[id].heap_pos = kNoTimer;
    const TimerId last = heap_.back();
    heap_.pop_back();
    if (pos == heap_.size()) return;
    put(pos, last);
    // The moved element may belong above or below its new position.
    if (pos > 0 && before(last, heap_[(pos - 1) / 2]))
        sift_up(pos);
    else
        sift_down(pos);
}

ArmOutcome HeapQueue::arm(TimerId id, Jiffies expires, ArmCall call) {
    pool_.check(id);
    ++counters_.arms;
    Node& n = pool_[id];
    const bool pending = n.heap_pos != kNoTimer;
    if (!pending && call == ArmCall::mod_timer_pending) return ArmOutcome::not_pending;
    if (pending) remove_at(n.heap_pos);
    n.expires = expires;
    n.order = next_order_++;
    heap_.push_back(id);
    sift_up(heap_.size() - 1);
    ++counters_.enqueues;
    counters_.peak_pending = std::max<std::uint64_t>(counters_.peak_pending, heap_.size());
    return ArmOutcome::queued;
}

ArmOutcome HeapQueue::arm_detach(TimerId id, Jiffies& /*expires*/, ArmCall call) {
    pool_.check(id);
    Node& n = pool_[id];
    if (n.heap_pos == kNoTimer) {
        if (call == ArmCall::mod_timer_pending) {
            ++counters_.arms;
            return ArmOutcome::not_pending;
        }
        return ArmOutcome::queued;
    }
    remove_at(n.heap_pos);
    return ArmOutcome::queued;
}

bool HeapQueue::cancel(TimerId id) {
    pool_.check(id);
    Node& n = pool_[id];
    if (n.heap_pos == kNoTimer) return false;
    remove_at(n.heap_pos);
    ++counters_.cancels;
    return true;
}

Placement HeapQueue::placement(TimerId id) const {
    pool_.check(id);
    const Node& n = pool_[id];
    Placement p;
    p.pending = n.heap_pos != kNoTimer;
    p.expires = n.expires;
    if (!p.pending) return p;
    p.slot = n.heap_pos;
    p.bucket_expiry = n.expires;
    return p;
}

} // namespace timersim
