// Running out of memory in the kernel wheels' bucket arrays
// (wheel/core/bucket_arrays.hpp): every allocation there goes through
// bucket_entries_realloc, which these tests make fail. What must hold:
//   * a push that cannot grow its array throws std::bad_alloc and leaves
//     the array as it was; a compaction needs no allocation at all;
//   * a copy that fails half way throws and frees what it made (the
//     ASan+UBSan run's leak checker sees it if not);
//   * the modern wheel: a re-arm that cannot make room in its new bucket
//     leaves the timer pending in its old one, which fires as before;
//   * the classic wheel: a failed re-arm leaves the timer idle (its
//     detach is the kernel's, before the new list is known), and the
//     wheel's counts agree with that.
#include "wheel/core/bucket_arrays.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

using namespace timersim;

namespace {

// While alive, the next `succeed` entry allocations work and every later
// one fails.
class FailAfter {
public:
    explicit FailAfter(int succeed) : saved_(bucket_entries_realloc) {
        left_ = succeed;
        bucket_entries_realloc = &allocate;
    }
    ~FailAfter() { bucket_entries_realloc = saved_; }
    FailAfter(const FailAfter&) = delete;
    FailAfter& operator=(const FailAfter&) = delete;
    static int calls() { return calls_; }

private:
    static void* allocate(void* p, std::size_t bytes) {
        ++calls_;
        if (left_-- <= 0) return nullptr;
        return std::realloc(p, bytes);
    }
    static inline int left_ = 0;
    static inline int calls_ = 0;
    void* (*saved_)(void*, std::size_t);
};

struct TestNode {
    bool pending = false;
    std::uint16_t idx = 0;
    TimerId ticket = 0;
};

void push(BucketArrays& arrays, std::vector<TestNode>& nodes, std::size_t list, TimerId id) {
    arrays.push(nodes, list, id, nodes[id]);
    nodes[id].pending = true;
    nodes[id].idx = static_cast<std::uint16_t>(list);
}

// Bucket 0 holds timers 0..7, a full array of 8 (the first capacity).
struct FullBucket {
    BucketArrays arrays{2};
    std::vector<TestNode> nodes = std::vector<TestNode>(32);
    FullBucket() {
        for (TimerId id = 0; id < 8; ++id) push(arrays, nodes, 0, id);
        REQUIRE(!arrays.has_room(0));
    }
    std::vector<TimerId> newest_first() const { return arrays.live_entries(nodes, 0); }
};

} // namespace

TEST_CASE("bucket arrays: a push that cannot grow throws and changes nothing") {
    FullBucket b;
    const std::vector<TimerId> before = b.newest_first();
    const TestNode node_before = b.nodes[8];
    {
        FailAfter none(0);
        CHECK_THROWS_AS(b.arrays.push(b.nodes, 0, 8, b.nodes[8]), std::bad_alloc);
    }
    CHECK(b.newest_first() == before);
    CHECK(b.arrays.count(0) == 8);
    CHECK(b.nodes[8].ticket == node_before.ticket);
    // With memory again the same push works, and the array has grown.
    push(b.arrays, b.nodes, 0, 8);
    CHECK(b.arrays.count(0) == 9);
    CHECK(b.newest_first().front() == 8);
}

TEST_CASE("bucket arrays: a full array that is half dead compacts without allocating") {
    FullBucket b;
    for (TimerId id = 0; id < 4; ++id) { // timers 0..3 are cancelled
        b.arrays.remove(0, b.nodes[id]);
        b.nodes[id].pending = false;
    }
    REQUIRE(!b.arrays.has_room(0)); // their entries are dead but still held
    FailAfter none(0);
    const int calls = FailAfter::calls();
    push(b.arrays, b.nodes, 0, 8);
    CHECK(FailAfter::calls() == calls);
    CHECK(b.newest_first() == std::vector<TimerId>{8, 7, 6, 5, 4});
}

TEST_CASE("bucket arrays: a copy that runs out of memory half way throws") {
    BucketArrays arrays(4);
    std::vector<TestNode> nodes(40);
    for (TimerId id = 0; id < 40; ++id) push(arrays, nodes, id % 4, id);
    for (int succeed = 0; succeed < 4; ++succeed) {
        CAPTURE(succeed);
        FailAfter some(succeed);
        CHECK_THROWS_AS(BucketArrays{arrays}, std::bad_alloc);
    }
    const BucketArrays copy(arrays); // memory again: a whole copy
    for (std::size_t list = 0; list < 4; ++list) CHECK(copy.live_entries(nodes, list) == arrays.live_entries(nodes, list));
}

TEST_CASE("modern: a re-arm that cannot make room leaves the timer in its old bucket") {
    ModernWheel q(ModernWheel::Config{.hz = 1000, .start_jiffies = 0, .deferrable_base = true});
    // Eight timers fill the bucket of expiry 40 (capacity 8, all live).
    std::vector<TimerId> crowd;
    for (int i = 0; i < 8; ++i) {
        crowd.push_back(q.create());
        q.arm(crowd.back(), 40);
    }
    const TimerId moved = q.create();
    q.arm(moved, 20);
    const Placement old_place = q.placement(moved);
    REQUIRE(old_place.slot != q.placement(crowd[0]).slot);
    const std::uint32_t old_count = q.bucket_count(ModernWheel::base_std, old_place.slot);
    {
        FailAfter none(0);
        CHECK_THROWS_AS(q.arm(moved, 40), std::bad_alloc);
    }
    CHECK(q.is_pending(moved));
    CHECK(q.pending() == 9);
    const Placement after = q.placement(moved);
    CHECK(after.slot == old_place.slot);
    CHECK(after.bucket_expiry == old_place.bucket_expiry);
    CHECK(q.bucket_count(ModernWheel::base_std, old_place.slot) == old_count);
    CHECK(q.bucket_timers(ModernWheel::base_std, old_place.slot) == std::vector<TimerId>{moved});

    // It fires at its old bucket's expiry, alone; the crowd later.
    std::vector<std::pair<TimerId, Jiffies>> fired;
    for (Jiffies j = 1; j <= 64; ++j) {
        q.set_jiffies(j);
        if (q.softirq_due()) q.run_softirq([&](const FiredTimer& f) { fired.emplace_back(f.id, j); });
    }
    REQUIRE(fired.size() == 9);
    CHECK(fired[0] == std::pair<TimerId, Jiffies>{moved, old_place.bucket_expiry});
    for (std::size_t i = 1; i < fired.size(); ++i) CHECK(fired[i].second > old_place.bucket_expiry);
    CHECK(q.pending() == 0);
}

TEST_CASE("classic: a re-arm that runs out of memory leaves the timer idle") {
    ClassicWheel q(ClassicWheel::Config{.hz = 250, .slack = std::nullopt});
    const Jiffies now = q.jiffies();
    std::vector<TimerId> crowd;
    for (int i = 0; i < 8; ++i) {
        crowd.push_back(q.create());
        q.arm(crowd.back(), now + 40);
    }
    const TimerId moved = q.create();
    q.arm(moved, now + 20);
    REQUIRE(q.pending() == 9);
    {
        FailAfter none(0);
        CHECK_THROWS_AS(q.arm(moved, now + 40), std::bad_alloc);
    }
    CHECK_FALSE(q.is_pending(moved));
    CHECK(q.pending() == 8);
    CHECK_FALSE(q.cancel(moved)); // idle: nothing to cancel

    std::vector<TimerId> fired;
    for (Jiffies j = now + 1; j <= now + 64; ++j) {
        q.set_jiffies(j);
        if (q.softirq_due()) q.run_softirq([&](const FiredTimer& f) { fired.push_back(f.id); });
    }
    CHECK(fired.size() == 8);
    CHECK(std::find(fired.begin(), fired.end(), moved) == fired.end());
    CHECK(q.pending() == 0);
    // With memory again the timer arms as any idle timer does.
    q.arm(moved, q.jiffies() + 5);
    CHECK(q.is_pending(moved));
}
