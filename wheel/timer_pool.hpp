// TimerPool: the timers of one queue, stored contiguously and named by 32-bit
// handles. Creating and destroying timers reuses slots through a free list, so
// arming, re-arming and cancelling never allocate (the pool only grows when
// more timers exist at once than ever before).
#pragma once

#include "wheel/timer_queue.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace timersim {

// Node requirements: a `next` handle field (reused as the free-list link) and
// a `live` flag distinguishing created timers from free slots. Handles stay
// below Limit (the wheels reserve the handles above kFirstHeadLink to name
// list heads, wheel/bucket_lists.hpp).
template <class Node, TimerId Limit = kNoTimer>
class TimerPool {
public:
    TimerId create() {
        TimerId id;
        if (free_head_ != kNoTimer) {
            id = free_head_;
            free_head_ = nodes_[id].next;
            nodes_[id] = Node{};
        } else {
            if (nodes_.size() >= Limit) throw std::length_error("timer pool exhausted");
            id = static_cast<TimerId>(nodes_.size());
            nodes_.emplace_back();
            size_ = id + 1;
        }
        nodes_[id].live = true;
        ++live_;
        return id;
    }

    // The caller has already taken the timer off its queue.
    void destroy(TimerId id) {
        check(id);
        nodes_[id].live = false;
        nodes_[id].next = free_head_;
        free_head_ = id;
        --live_;
    }

    void check(TimerId id) const {
        if (id >= nodes_.size() || !nodes_[id].live) [[unlikely]] no_such_timer(id);
    }
    // The node of handle `id`, checked against the pool's size only: the
    // queues' hot paths know that a pending node is live and check the rest
    // only for an idle one.
    Node& at(TimerId id) {
        if (id >= size_) [[unlikely]] no_such_timer(id);
        return nodes_[id];
    }
    // check() for the node at() returned.
    static void check_live(const Node& n, TimerId id) {
        if (!n.live) [[unlikely]] no_such_timer(id);
    }

    Node& operator[](TimerId id) noexcept { return nodes_[id]; }
    const Node& operator[](TimerId id) const noexcept { return nodes_[id]; }
    std::vector<Node>& nodes() noexcept { return nodes_; }
    const std::vector<Node>& nodes() const noexcept { return nodes_; }
    std::size_t live() const noexcept { return live_; }
    void reserve(std::size_t n) { nodes_.reserve(n); }

private:
    // Out of line and cold: the string building stays off the inlined paths.
    [[noreturn, gnu::cold, gnu::noinline]] static void no_such_timer(TimerId id) {
        throw std::invalid_argument("no such timer: " + std::to_string(id));
    }

    std::vector<Node> nodes_;
    TimerId size_ = 0; // nodes_.size(), one load for the hot paths' bound check
    TimerId free_head_ = kNoTimer;
    std::size_t live_ = 0;
};

} // namespace timersim
