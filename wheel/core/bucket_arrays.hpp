// BucketArrays: a timer wheel's buckets as arrays of timer handles, whose
// dead entries are dropped lazily.
//
// Why not linked lists (wheel/core/bucket_lists.hpp, the kernel's hlist): on a
// large wheel every node is a cache miss, and unlinking one writes its two
// list neighbours, two more random lines. Writes to missing lines drain in
// order and stall the pipeline: at a million timers the list pattern costs
// about 8x a read-modify-write of the node alone (bench/miss_bound.cpp,
// "node+2" against "node"). Here a cancel writes only its own node and the
// bucket's live count; the bucket's entry for it goes dead where it stands.
//
// How an entry knows it is dead. A queued node records its bucket (`idx`,
// the wheel's field) and its entry's *ticket*: the bucket numbers its
// entries first_ticket, first_ticket+1, ... and never hands out a ticket
// that an entry still holds (every emptying, compaction or collection moves
// first_ticket past all tickets handed out so far; only the dropped newest
// entry's ticket is handed out again). The entry at position i of an array is
// live when its node is pending, names the array's bucket (`origin`) and
// holds ticket first_ticket + i. So:
//   push       appends; O(1), the array's tail is hot
//   remove     the caller's node leaves the array it is in: only the live
//              count moves (and the newest entry is dropped at once); the
//              last live entry leaving empties it in O(1)
//   collect    hands a whole bucket to a work list in O(1) (hlist_move_list):
//              the entries keep their tickets, the bucket starts past them
//   pop_live   takes the work list's last live entry, newest first: the
//              kernel's hlist order (enqueue adds at the head)
// A full array whose dead entries are at least half of it is compacted in
// place (order kept) instead of grown, so each compaction reads at most two
// nodes per entry it drops; in a long churn at a million timers the arrays
// held 1.9 entries per pending timer on average, 2.6 at peak. Those reads do
// not depend on each other, so their misses overlap, unlike a list walk's.
//
// Node requirements: `bool pending`, `std::uint16_t idx` (the bucket it was
// queued in), `TimerId ticket`.
#pragma once

#include "wheel/core/prefetch.hpp"
#include "wheel/core/timer_queue.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace timersim {

// Where entry arrays come from (a realloc; nullptr for a new one), and what
// an allocation failure throws: std::bad_alloc. Replaceable so that a test
// can make any one allocation fail (tests/wheel/test_allocation_failure.cpp);
// only a growth or a copy calls it.
inline void* (*bucket_entries_realloc)(void*, std::size_t) = [](void* p, std::size_t bytes) {
    return std::realloc(p, bytes);
};

// Failure guarantees: a push() that cannot grow its array throws
// std::bad_alloc with every array as it was (a compaction may have run,
// which changes no live entry); a copy that fails half way frees what it
// made. make_room_for_one() lets a caller allocate before it changes
// anything, so that a move between arrays cannot fail half way.
class BucketArrays {
public:
    // `first_ticket` only matters to tests of the ticket wrap.
    explicit BucketArrays(std::size_t lists, TimerId first_ticket = 0) : arrays_(lists) {
        for (std::size_t i = 0; i < lists; ++i) {
            arrays_[i].origin = static_cast<std::uint16_t>(i);
            arrays_[i].first_ticket = first_ticket;
        }
    }

    std::size_t size() const noexcept { return arrays_.size(); }
    // Live entries of a bucket or work list.
    std::uint32_t count(std::size_t list) const noexcept { return arrays_[list].live; }
    bool empty(std::size_t list) const noexcept { return arrays_[list].live == 0; }

    // Is the queued node in `list`'s own array (rather than in a work list
    // its bucket was collected to)? The caller knows node.idx == list.
    template <class Node>
    [[gnu::always_inline]] bool holds(std::size_t list, const Node& node) const noexcept {
        const Array& a = arrays_[list];
        return node.ticket - a.first_ticket < a.size;
    }

    // Queues `id` (whose node is `node`) at the back of `list`; the caller
    // sets node.idx. Returns whether the bucket had no live entry before.
    template <class Nodes, class Node>
    [[gnu::always_inline]] bool push(Nodes& nodes, std::size_t list, TimerId id, Node& node) {
        make_room_for_one(nodes, list);
        return push_into_room(list, id, node);
    }
    // Compacts or grows `list` now if it is full, so that the next
    // push_into_room() into it cannot fail; may throw std::bad_alloc.
    template <class Nodes>
    [[gnu::always_inline]] void make_room_for_one(Nodes& nodes, std::size_t list) {
        Array& a = arrays_[list];
        if (a.live == 0) a.drop_all();
        if (a.size == a.capacity) [[unlikely]] make_room(nodes, a);
    }
    // Can `list` take one more entry without a compaction or growth?
    bool has_room(std::size_t list) const noexcept {
        const Array& a = arrays_[list];
        return a.size < a.capacity;
    }
    // push() into a list that has_room().
    template <class Node>
    [[gnu::always_inline]] bool push_into_room(std::size_t list, TimerId id, Node& node) noexcept {
        Array& a = arrays_[list];
        const bool was_empty = a.live == 0;
        if (was_empty) a.drop_all();
        append(a, id, node);
        return was_empty;
    }

    // A live node the caller takes out of the array it is in: `list` is its
    // bucket when holds() is true, else the work list the bucket went to.
    // Its entry goes dead once the node changes. Returns whether it was the
    // last live one (for a bucket, hlist_is_singular_node() before the delete).
    // The newest entry leaving (a timer cancelled or re-armed soon after it
    // was armed) is dropped at once, so it never waits for a compaction.
    template <class Node>
    [[gnu::always_inline]] bool remove(std::size_t list, const Node& node) noexcept {
        Array& a = arrays_[list];
        if (--a.live == 0) [[unlikely]] {
            a.drop_all();
            return true;
        }
        if (node.ticket == a.first_ticket + a.size - 1) --a.size;
        return false;
    }

    // Hands every entry of bucket `from` to work list `to` (empty).
    void collect(std::size_t from, std::size_t to) noexcept {
        Array& b = arrays_[from];
        Array& w = arrays_[to];
        std::swap(b.ids, w.ids);
        std::swap(b.capacity, w.capacity);
        w.size = b.size; // any dead entries `to` still held are dropped
        w.first_ticket = b.first_ticket;
        w.origin = b.origin;
        w.live = b.live;
        b.first_ticket += b.size;
        b.size = 0;
        b.live = 0;
    }

    // The newest live entry of work list `list`, taken out of it; kNoTimer
    // when none is left. Dead entries on the way are dropped.
    template <class Nodes>
    TimerId pop_live(const Nodes& nodes, std::size_t list) noexcept {
        Array& a = arrays_[list];
        while (a.size != 0) {
            const std::uint32_t i = --a.size;
            // The next few nodes are read next: let their misses overlap.
            if (i >= kPopAhead) __builtin_prefetch(&nodes[a.ids[i - kPopAhead]], 1);
            const TimerId id = a.ids[i];
            if (is_live(nodes[id], a, i)) {
                --a.live;
                return id;
            }
        }
        return kNoTimer;
    }

    // Puts the live entries of work list `list` in reverse order, its dead
    // ones dropped, so that pop_live() takes the oldest first: a list_head
    // walked from its head (pre-4.2 slots) instead of an hlist. The
    // entries keep tickets from the range their bucket handed out before
    // collect(), which it never hands out again.
    template <class Nodes>
    void reverse_live(Nodes& nodes, std::size_t list) noexcept {
        Array& a = arrays_[list];
        TimerId* const ids = a.ids.get();
        std::uint32_t kept = 0;
        for (std::uint32_t i = 0; i < a.size; ++i)
            if (is_live(nodes[ids[i]], a, i)) ids[kept++] = ids[i];
        std::reverse(ids, ids + kept);
        for (std::uint32_t i = 0; i < kept; ++i) nodes[ids[i]].ticket = a.first_ticket + i;
        a.size = kept;
    }

    // FiredTimer::ahead for a timer just taken by pop_live(): the entry it
    // would reach kFireAhead entries later (live or dead; kNoTimer past the
    // array's start). Its node was fetched earlier by pop_live() itself.
    static constexpr std::uint32_t kFireAhead = 4;
    TimerId fire_hint(std::size_t list) const noexcept {
        const Array& a = arrays_[list];
        return a.size > kFireAhead ? a.ids[a.size - 1 - kFireAhead] : kNoTimer;
    }

    // Calls visit(id) for the live entries of a bucket or work list in
    // firing order (newest first, an hlist walked from its head) while it
    // returns true.
    template <class Nodes, class F>
    void for_each_live(const Nodes& nodes, std::size_t list, F&& visit) const {
        const Array& a = arrays_[list];
        for (std::uint32_t i = a.size; i-- > 0;)
            if (is_live(nodes[a.ids[i]], a, i) && !visit(a.ids[i])) return;
    }
    // The same as a list: for views and tests.
    template <class Nodes>
    std::vector<TimerId> live_entries(const Nodes& nodes, std::size_t list) const {
        std::vector<TimerId> out;
        for_each_live(nodes, list, [&](TimerId id) {
            out.push_back(id);
            return true;
        });
        return out;
    }
    // Entries held, live or dead, over all arrays: for the memory figures.
    std::size_t entries() const noexcept {
        std::size_t n = 0;
        for (const Array& a : arrays_) n += a.size;
        return n;
    }

private:
    static constexpr std::uint32_t kPopAhead = 8;
    // A compaction step is about ten instructions, so the distance has to
    // span a memory latency of several hundred: 64 entries ran the peers'
    // re-arm with look-ahead in 0.83x the time of 16 (on a Zen 4 VM).
    static constexpr std::uint32_t kCompactAhead = 64;
    static constexpr std::uint32_t kMinCapacity = 8;

    // An array's entries, from malloc so that growing is a realloc. Owned,
    // so a copy that runs out of memory half way frees what it made.
    struct FreeEntries {
        void operator()(TimerId* p) const noexcept { std::free(p); }
    };
    using Entries = std::unique_ptr<TimerId[], FreeEntries>;

    struct Array {
        Entries ids;
        std::uint32_t size = 0;
        std::uint32_t capacity = 0;
        TimerId first_ticket = 0; // the ticket of ids[0]
        std::uint32_t live = 0;
        std::uint16_t origin = 0; // the bucket these entries' tickets belong to

        Array() = default;
        Array(Array&&) noexcept = default;
        Array& operator=(Array&&) noexcept = default;
        Array(const Array& o)
            : ids(copy_of(o)), size(o.size), capacity(o.capacity), first_ticket(o.first_ticket), live(o.live),
              origin(o.origin) {}
        Array& operator=(const Array& o) {
            Array copy(o);
            return *this = std::move(copy);
        }
        ~Array() = default;

        void drop_all() noexcept {
            first_ticket += size;
            size = 0;
        }
        static Entries copy_of(const Array& o) {
            if (!o.ids) return nullptr;
            Entries copy(static_cast<TimerId*>(bucket_entries_realloc(nullptr, std::size_t{o.capacity} * sizeof(TimerId))));
            if (!copy) throw std::bad_alloc();
            std::copy(o.ids.get(), o.ids.get() + o.size, copy.get());
            return copy;
        }
    };

    template <class Node>
    [[gnu::always_inline]] static void append(Array& a, TimerId id, Node& node) noexcept {
        node.ticket = a.first_ticket + a.size;
        a.ids[a.size++] = id;
        ++a.live;
        prefetch_line_after(a.ids.get() + a.size); // a new tail line every 16 entries
    }

    template <class Node>
    static bool is_live(const Node& n, const Array& a, std::uint32_t i) noexcept {
        return n.pending && n.idx == a.origin && n.ticket == a.first_ticket + i;
    }

    // The array is full: compact it when at least half of it is dead, grow
    // it otherwise. Compaction renumbers the survivors past every ticket
    // handed out, so no stale entry can match them.
    template <class Nodes>
    [[gnu::noinline]] static void make_room(Nodes& nodes, Array& a) {
        if (a.size >= kMinCapacity && a.live <= a.size / 2) {
            // The nodes are read kCompactAhead entries early so that their
            // misses overlap. (Branch-free loops, one writing every node and
            // one in two passes, measured no faster: docs/performance.md.)
            // The array's fields are read once: a node's ticket store could
            // alias them, so the loop would reload them for every entry.
            TimerId* const ids = a.ids.get();
            const std::uint32_t size = a.size;
            const TimerId first = a.first_ticket;
            const std::uint16_t origin = a.origin;
            const TimerId fresh = first + size;
            std::uint32_t kept = 0;
            const auto keep = [&](std::uint32_t i) {
                const TimerId id = ids[i];
                auto& n = nodes[id];
                if (!(n.pending && n.idx == origin && n.ticket == first + i)) return; // is_live()
                n.ticket = fresh + kept;
                ids[kept++] = id;
            };
            for (std::uint32_t j = 0; j < std::min(size, kCompactAhead); ++j) __builtin_prefetch(&nodes[ids[j]], 1);
            std::uint32_t i = 0;
            for (; i + kCompactAhead < size; ++i) {
                __builtin_prefetch(&nodes[ids[i + kCompactAhead]], 1);
                keep(i);
            }
            for (; i < size; ++i) keep(i);
            a.first_ticket = fresh;
            a.size = kept;
            if (kept < a.capacity) return;
        }
        const std::uint32_t grown = a.capacity < kMinCapacity ? kMinCapacity : a.capacity * 2;
        void* p = bucket_entries_realloc(a.ids.get(), std::size_t{grown} * sizeof(TimerId));
        if (p == nullptr) throw std::bad_alloc(); // a.ids is still its own
        (void)a.ids.release();
        a.ids.reset(static_cast<TimerId*>(p));
        a.capacity = grown;
    }

    std::vector<Array> arrays_;
};

} // namespace timersim
