// The engine's event queue (sim/machine/event_queue.hpp), a calendar queue,
// against a plain binary heap on (time, sequence): every pop must return the
// same event, at every size (one heap below a few thousand events, buckets
// above), across epochs, with events scheduled before the last pop, many at
// one time, and at the ends of the time range.
#include "sim/machine/event_queue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <queue>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

using namespace timersim;

namespace {

// The reference: the binary heap the engine used before.
struct Reference {
    using Item = std::tuple<std::uint64_t, std::uint64_t, int>; // time, seq, payload
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    std::uint64_t seq = 0;
    void push(std::uint64_t t, int p) { heap.emplace(t, seq++, p); }
    Item pop() {
        Item i = heap.top();
        heap.pop();
        return i;
    }
};

struct Pair {
    EventQueue<int> q;
    Reference ref;
    int next_payload = 0;
    std::uint64_t now = 0; // time of the last pop

    void push(std::uint64_t t) {
        q.push(t, next_payload);
        ref.push(t, next_payload);
        ++next_payload;
    }
    void pop() {
        REQUIRE(!q.empty());
        REQUIRE(q.next_time() == std::get<0>(ref.heap.top()));
        // Payloads are numbered in push order: the same payload is the same
        // event, tie order included.
        REQUIRE(q.top().payload == std::get<2>(ref.heap.top()));
        const auto e = q.pop();
        const auto r = ref.pop();
        REQUIRE(e.time_ns == std::get<0>(r));
        REQUIRE(e.payload == std::get<2>(r));
        now = e.time_ns;
        REQUIRE(q.size() == ref.heap.size());
    }
    void drain() {
        while (!ref.heap.empty()) pop();
        CHECK(q.empty());
        CHECK(q.next_time() == UINT64_MAX);
    }
};

} // namespace

TEST_CASE("event queue: a few events come out by time, then in push order") {
    Pair p;
    for (const std::uint64_t t : {5u, 3u, 5u, 1u, 3u, 3u}) p.push(t);
    p.drain();
}

// An event no earlier than the sorted run's last joins the run's end, but
// only while the heap of late events is empty: otherwise a late event of the
// same time, pushed first, would lose the tie to it.
TEST_CASE("event queue: an event joins the run's end only while no late event waits") {
    Pair p;
    p.push(10); // run [10]
    p.push(10); // joins the run: a tie, after the first
    p.push(12); // joins the run
    p.push(5);  // earlier than the run's last: the heap
    p.push(20); // the heap is not empty: the heap too
    p.drain();
    // One event at a time, each after the last: always through the run.
    for (std::uint64_t t = 100; t < 140; ++t) {
        p.push(t);
        if (t % 3 == 0) p.push(t);
        p.pop();
    }
    p.drain();
    // More in-order events than a new queue's run has room for: the rest
    // wait in the heap. Once the run is used up, an event of the same time
    // as a waiting one comes after it.
    Pair q;
    for (std::uint64_t t = 0; t < 100; ++t) q.push(t);
    for (int i = 0; i < 50; ++i) q.pop();
    q.push(99);
    q.push(99);
    q.push(70);
    q.drain();
}

TEST_CASE("event queue: random streams give the heap's order at every size") {
    std::mt19937_64 rng(12);
    for (const std::size_t target : {10u, 300u, 5000u, 40000u}) {
        CAPTURE(target);
        Pair p;
        // Grow to the target, hold it with one pop per push, shrink to
        // empty, and grow again: every mode and every change between them.
        for (int phase = 0; phase < 2; ++phase) {
            auto gap = [&]() -> std::uint64_t {
                switch (rng() % 8) {
                case 0: return std::uint64_t{0};                     // same time as now
                case 1: return rng() % 16;                           // very near
                case 2: return rng() % 100'000'000'000ull;           // far: next epochs
                default: return rng() % (1'000'000'000ull + 1);      // a Poisson-like spread
                }
            };
            auto schedule = [&] {
                // A fifth before the last pop (allowed: it comes out next).
                if (rng() % 5 == 0 && p.now > 0) p.push(p.now - rng() % (p.now + 1));
                else p.push(p.now + gap());
            };
            while (p.q.size() < target) schedule();
            for (std::size_t i = 0; i < 3 * target; ++i) {
                p.pop();
                schedule();
            }
            while (p.q.size() > target / 3) p.pop();
        }
        p.drain();
    }
}

// The queue keeps no sequence number outside late_: ties come out in push
// order only because every bucket gets its events in push order and every
// sort of one is stable. Here half of the pushes take the time of an event
// still pending (so ties land in late_, in small buckets sorted directly, in
// sub-buckets of the counting sort, and in overflow_ across epochs), and now
// and then one time gets a burst (a crowded sub-bucket).
TEST_CASE("event queue: ties keep push order in every kind of bucket") {
    std::mt19937_64 rng(7);
    for (const std::size_t target : {50u, 200u, 3000u, 40000u}) {
        CAPTURE(target);
        Pair p;
        std::vector<std::uint64_t> times; // times pushed, some long popped: a tie or a time in near_
        auto schedule = [&] {
            std::uint64_t t;
            if (!times.empty() && rng() % 2 == 0) t = std::max(p.now, times[rng() % times.size()]);
            else t = p.now + rng() % 2'000'000'000ull;
            const int copies = rng() % 64 == 0 ? 40 : 1;
            for (int i = 0; i < copies; ++i) p.push(t);
            if (times.size() < 4 * target) times.push_back(t);
            else times[rng() % times.size()] = t;
        };
        while (p.q.size() < target) schedule();
        for (std::size_t i = 0; i < 4 * target; ++i) {
            p.pop();
            if (p.q.size() < target + 64) schedule();
        }
        // Shrinking, still pushing: the last epochs are small, one sort of
        // what overflow_ holds.
        while (!p.q.empty()) {
            p.pop();
            if (rng() % 3 == 0) schedule();
        }
    }
}

TEST_CASE("event queue: many events at one time stay in push order") {
    Pair p;
    for (int i = 0; i < 20000; ++i) p.push(1'000);
    for (int i = 0; i < 10000; ++i) p.pop();
    for (int i = 0; i < 10000; ++i) p.push(i % 2 ? 1'000 : 2'000);
    p.drain();
}

// The queue keeps pointers into its current bucket's buffer: a move must
// hand them over with it (and an emptied queue reports UINT64_MAX).
TEST_CASE("event queue: a moved queue goes on where it was") {
    Pair p;
    std::mt19937_64 rng(5);
    for (int i = 0; i < 20000; ++i) p.push(rng() % 1'000'000'000);
    for (int i = 0; i < 5000; ++i) p.pop();
    EventQueue<int> moved = std::move(p.q);
    p.q = std::move(moved);
    for (int i = 0; i < 5000; ++i) {
        p.pop();
        p.push(p.now + rng() % 1'000'000);
    }
    p.drain();
    p.q = EventQueue<int>{};
    CHECK(p.q.next_time() == UINT64_MAX);
    p.push(7);
    p.drain();
}

TEST_CASE("event queue: the ends of the time range") {
    Pair p;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 10000; ++i) {
        switch (i % 4) {
        case 0: p.push(UINT64_MAX); break;
        case 1: p.push(UINT64_MAX - rng() % 1000); break;
        case 2: p.push(rng() % 1000); break;
        default: p.push(rng()); break;
        }
    }
    for (int i = 0; i < 6000; ++i) p.pop();
    for (int i = 0; i < 6000; ++i) p.push(i % 3 ? UINT64_MAX : p.now + rng() % 1000);
    p.drain();
    for (int i = 0; i < 6000; ++i) p.push(UINT64_MAX);
    for (int i = 0; i < 3000; ++i) p.pop();
    for (int i = 0; i < 6000; ++i) p.push(UINT64_MAX - i % 2);
    p.drain();
}

// A queue of a steady size lays out a new epoch about once per epoch's
// worth of events, not again half-way through each: a million events in at
// most 1024 buckets hold several hundred a bucket, which is the layout's
// own density, not a queue that grew after it was laid out.
TEST_CASE("event queue: a steady million events are laid out once an epoch") {
    EventQueue<int> q;
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> gap(1e-9); // mean 1 s, in ns
    constexpr std::size_t kEvents = 1'000'000;
    for (std::size_t i = 0; i < kEvents; ++i) q.push(static_cast<std::uint64_t>(gap(rng)), 0);
    std::uint64_t last = 0;
    bool ordered = true;
    constexpr std::size_t kOps = 3 * kEvents;
    for (std::size_t i = 0; i < kOps; ++i) {
        const auto e = q.pop();
        ordered = ordered && e.time_ns >= last;
        last = e.time_ns;
        q.push(e.time_ns + static_cast<std::uint64_t>(gap(rng)), 0);
    }
    CHECK(ordered);
    CHECK(q.size() == kEvents);
    // 3 s of simulated time, each epoch about a second of it: 4 here. With
    // a new one half-way through each (the fixed threshold of 512 events a
    // bucket) it was 7.
    INFO("epochs laid out: " << q.epochs_laid_out());
    CHECK(q.epochs_laid_out() <= kOps / kEvents + 2);
}
