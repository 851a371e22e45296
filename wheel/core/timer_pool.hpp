// TimerPool: the timers of one queue, stored contiguously and named by 32-bit
// handles. Creating and destroying timers reuses slots through a free list, so
// arming, re-arming and cancelling never allocate (the pool only grows when
// more timers exist at once than ever before).
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace timersim {

// The pool's storage. A large pool (2 MiB and up) starts on a 2 MiB
// boundary and its whole 2 MiB units are marked MADV_HUGEPAGE (Linux, where
// transparent huge pages are commonly in "madvise" mode): arming,
// cancelling and expiring touch nodes in no particular order, and with 4 KiB
// pages nearly every such node is also a TLB miss (a million 32-byte nodes
// span 7,800 pages, more than the TLB holds), which huge pages remove. The
// tail beyond the last whole unit keeps 4 KiB pages, so the resident size
// stays the nodes' own. Every block comes from malloc/aligned_alloc and goes
// back through free.
template <class T>
struct PoolAllocator {
    using value_type = T;
    static constexpr std::size_t kHugePage = std::size_t{2} << 20;

    PoolAllocator() = default;
    template <class U>
    PoolAllocator(const PoolAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = n * sizeof(T);
        void* p = bytes < kHugePage ? std::malloc(bytes) : huge_page_block(bytes);
        if (p == nullptr) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t) noexcept { std::free(p); }
    friend bool operator==(const PoolAllocator&, const PoolAllocator&) noexcept { return true; }

private:
    static void* huge_page_block(std::size_t bytes) noexcept {
        // aligned_alloc() takes a whole number of alignments; the pages past
        // `bytes` are never touched, so they never become resident.
        void* p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (p != nullptr) ::madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE); // advice only
#endif
        return p;
    }
};

// A vector of records indexed by timer or connection, on PoolAllocator's
// pages: the simulator's and the generators' per-timer arrays are touched
// in no particular order too, so at a million timers 4 KiB pages make most
// of those touches TLB misses as well.
template <class T>
using HugePageVector = std::vector<T, PoolAllocator<T>>;

// Node requirements: a `next` handle field, or for a node queued without
// links a `ticket` field (wheel/core/bucket_arrays.hpp), reused as the free-list
// link; and a `live` flag distinguishing created timers from free slots. Handles stay
// below Limit (the wheels reserve the handles above kFirstHeadLink to name
// list heads, wheel/core/bucket_lists.hpp).
template <class Node, TimerId Limit = kNoTimer>
class TimerPool {
public:
    TimerId create() {
        TimerId id;
        if (free_head_ != kNoTimer) {
            id = free_head_;
            free_head_ = free_link(nodes_[id]);
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
        free_link(nodes_[id]) = free_head_;
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
    // Is `id` below the pool's size (at() would not throw)?
    bool contains(TimerId id) const noexcept { return id < size_; }
    // check() for the node at() returned.
    static void check_live(const Node& n, TimerId id) {
        if (!n.live) [[unlikely]] no_such_timer(id);
    }

    // A hint that the node of `id` will be written soon; nothing for a
    // handle the pool does not have.
    void prefetch(TimerId id) const noexcept {
        if (id < size_) __builtin_prefetch(&nodes_[id], 1);
    }

    Node& operator[](TimerId id) noexcept { return nodes_[id]; }
    const Node& operator[](TimerId id) const noexcept { return nodes_[id]; }
    std::vector<Node, PoolAllocator<Node>>& nodes() noexcept { return nodes_; }
    const std::vector<Node, PoolAllocator<Node>>& nodes() const noexcept { return nodes_; }
    std::size_t live() const noexcept { return live_; }
    void reserve(std::size_t n) { nodes_.reserve(n); }

private:
    static TimerId& free_link(Node& n) noexcept {
        if constexpr (requires { n.next; }) return n.next;
        else return n.ticket;
    }
    // Out of line and cold: the string building stays off the inlined paths.
    [[noreturn, gnu::cold, gnu::noinline]] static void no_such_timer(TimerId id) {
        throw std::invalid_argument("no such timer: " + std::to_string(id));
    }

    std::vector<Node, PoolAllocator<Node>> nodes_;
    TimerId size_ = 0; // nodes_.size(), one load for the hot paths' bound check
    TimerId free_head_ = kNoTimer;
    std::size_t live_ = 0;
};

} // namespace timersim
