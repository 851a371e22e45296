// BucketLists: the kernel's hlist buckets, as intrusive doubly linked lists
// threaded through the timer pool by 32-bit handles.
//
// Operations mirror what kernel/time/timer.c does to `vectors[]`:
//   push_front     hlist_add_head (new timers go to the head: LIFO order)
//   insert_after   hlist_add_behind (a sorted list's insertion)
//   unlink         __hlist_del: O(1) from anywhere, via the node's own links
//   move_list      hlist_move_list: O(1) hand-over of a whole bucket to a
//                  work list, after which the bucket is empty again
//
// Like an hlist node's pprev, a node's back link `pprev` names whatever
// holds the link to it: the node before it, or, for a list's first node,
// the list's head (a tagged handle, kFirstHeadLink + list, above every
// timer handle). So unlinking, and asking whether a node is alone in a
// given list, read only the node itself, and move_list relabels one node
// (the first), as hlist_move_list() rewrites first->pprev.
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace timersim {

// Back links at or above this name a list head, below it a node: timer
// handles of a pool whose nodes live in BucketLists stay below it.
inline constexpr TimerId kFirstHeadLink = kNoTimer - 0x10000u;

// Node requirements: TimerId next, pprev. At most 0x10000 lists.
class BucketLists {
public:
    explicit BucketLists(std::size_t lists) : head_(lists, kNoTimer) {}

    std::size_t size() const noexcept { return head_.size(); }
    bool empty(std::size_t list) const noexcept { return head_[list] == kNoTimer; }
    TimerId front(std::size_t list) const noexcept { return head_[list]; }
    // Entries of `list`, by walking it: only views of the wheel ask, so the
    // arm/cancel hot path keeps no counters (they cost ~1.5 ns per pair).
    template <class Nodes>
    std::uint32_t count(const Nodes& nodes, std::size_t list) const noexcept {
        std::uint32_t n = 0;
        for (TimerId t = head_[list]; t != kNoTimer; t = nodes[t].next) ++n;
        return n;
    }

    // Is this pending node linked into `list` (as opposed to a work list it
    // was moved to)? Follows the back links to the head: O(the node's
    // position), for callers off the hot path.
    template <class Nodes, class Node>
    bool holds(const Nodes& nodes, std::size_t list, const Node& node) const noexcept {
        TimerId link = node.pprev;
        while (link < kFirstHeadLink) link = nodes[link].pprev;
        return link == head_link(list);
    }

    // hlist_is_singular_node(): the node is the only entry of `list` (a node
    // moved to a work list is not in its bucket any more).
    template <class Node>
    static bool is_only(std::size_t list, const Node& node) noexcept {
        return node.pprev == head_link(list) && node.next == kNoTimer;
    }

    // Returns whether `list` was empty before.
    template <class Nodes>
    bool push_front(Nodes& nodes, std::size_t list, TimerId id) noexcept {
        auto& node = nodes[id];
        const TimerId first = head_[list];
        node.next = first;
        node.pprev = head_link(list);
        head_[list] = id;
        if (first == kNoTimer) return true;
        nodes[first].pprev = id;
        return false;
    }

    // Links `id` right after the linked node `prev` (sorted lists: the
    // seeds' schemes 2 and 5).
    template <class Nodes>
    void insert_after(Nodes& nodes, TimerId prev, TimerId id) noexcept {
        auto& node = nodes[id];
        const TimerId next = nodes[prev].next;
        node.next = next;
        node.pprev = prev;
        nodes[prev].next = id;
        if (next != kNoTimer) nodes[next].pprev = id;
    }

    // The node's own links are left as they were: nothing reads them until
    // the node is linked again.
    template <class Nodes>
    void unlink(Nodes& nodes, TimerId id) noexcept {
        const auto& node = nodes[id];
        const TimerId pprev = node.pprev;
        const TimerId next = node.next;
        if (pprev >= kFirstHeadLink)
            head_[pprev - kFirstHeadLink] = next;
        else
            nodes[pprev].next = next;
        if (next != kNoTimer) nodes[next].pprev = pprev;
    }

    // unlink() and is_only(list) in one: returns whether `id` was the only
    // entry of `list`. One test on the back link serves both: only a first
    // node can be the only one, so the common case (a node behind another)
    // costs no more than unlink().
    template <class Nodes>
    bool unlink_was_only(Nodes& nodes, TimerId id, std::size_t list) noexcept {
        const auto& node = nodes[id];
        const TimerId pprev = node.pprev;
        const TimerId next = node.next;
        if (pprev < kFirstHeadLink) [[likely]] {
            nodes[pprev].next = next;
            if (next != kNoTimer) nodes[next].pprev = pprev;
            return false;
        }
        head_[pprev - kFirstHeadLink] = next;
        if (next != kNoTimer) {
            nodes[next].pprev = pprev;
            return false;
        }
        return pprev == head_link(list);
    }

    // Hand every node of `from` to the (empty) list `to`; `from` is empty after.
    template <class Nodes>
    void move_list(Nodes& nodes, std::size_t from, std::size_t to) noexcept {
        const TimerId first = head_[from];
        head_[to] = first;
        head_[from] = kNoTimer;
        if (first != kNoTimer) nodes[first].pprev = head_link(to);
    }

private:
    static constexpr TimerId head_link(std::size_t list) noexcept {
        return kFirstHeadLink + static_cast<TimerId>(list);
    }

    std::vector<TimerId> head_; // by list id
};

} // namespace timersim
