// BucketLists: the kernel's hlist buckets, as intrusive doubly linked lists
// threaded through the timer pool by 32-bit handles.
//
// Operations mirror what kernel/time/timer.c does to `vectors[]`:
//   push_front     hlist_add_head (new timers go to the head: LIFO order)
//   unlink         __hlist_del: O(1) from anywhere, via the node's own links
//   move_list      hlist_move_list: O(1) hand-over of a whole bucket to a
//                  work list, after which the bucket is empty again
//
// move_list must not relabel every node (a bucket can hold a million
// timers), so lists are named in two layers: a *list id* (a wheel bucket or a
// work list) maps to a *storage slot* holding the head, and nodes record the
// storage slot they are linked into. Moving a list swaps two slot mappings.
#pragma once

#include "wheel/timer_queue.hpp"

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace timersim {

// Node requirements: TimerId next, prev; std::uint16_t slot.
class BucketLists {
public:
    explicit BucketLists(std::size_t lists) : head_(lists, kNoTimer), slot_of_(lists) {
        std::iota(slot_of_.begin(), slot_of_.end(), std::uint16_t{0});
    }

    std::size_t size() const noexcept { return slot_of_.size(); }
    bool empty(std::size_t list) const noexcept { return head_[slot_of_[list]] == kNoTimer; }
    TimerId front(std::size_t list) const noexcept { return head_[slot_of_[list]]; }
    // Entries of `list`, by walking it: only views of the wheel ask, so the
    // arm/cancel hot path keeps no counters (they cost ~1.5 ns per pair).
    template <class Nodes>
    std::uint32_t count(const Nodes& nodes, std::size_t list) const noexcept {
        std::uint32_t n = 0;
        for (TimerId t = head_[slot_of_[list]]; t != kNoTimer; t = nodes[t].next) ++n;
        return n;
    }

    // Is this node linked into `list` (as opposed to a work list it was moved to)?
    template <class Node>
    bool holds(std::size_t list, const Node& node) const noexcept {
        return node.slot == slot_of_[list];
    }

    // hlist_is_singular_node(): the node is the only entry of `list`.
    template <class Node>
    bool is_only(std::size_t list, const Node& node) const noexcept {
        return holds(list, node) && node.prev == kNoTimer && node.next == kNoTimer;
    }

    template <class Nodes>
    void push_front(Nodes& nodes, std::size_t list, TimerId id) noexcept {
        const std::uint16_t slot = slot_of_[list];
        auto& node = nodes[id];
        node.next = head_[slot];
        node.prev = kNoTimer;
        node.slot = slot;
        if (node.next != kNoTimer) nodes[node.next].prev = id;
        head_[slot] = id;
    }

    template <class Nodes>
    void unlink(Nodes& nodes, TimerId id) noexcept {
        auto& node = nodes[id];
        if (node.prev == kNoTimer)
            head_[node.slot] = node.next;
        else
            nodes[node.prev].next = node.next;
        if (node.next != kNoTimer) nodes[node.next].prev = node.prev;
        node.next = node.prev = kNoTimer;
    }

    // Hand every node of `from` to the (empty) list `to`; `from` is empty after.
    void move_list(std::size_t from, std::size_t to) noexcept {
        std::swap(slot_of_[from], slot_of_[to]);
    }

private:
    std::vector<TimerId> head_;          // by storage slot
    std::vector<std::uint16_t> slot_of_; // by list id
};

} // namespace timersim
