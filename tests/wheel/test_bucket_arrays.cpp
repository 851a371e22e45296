// BucketArrays (wheel/core/bucket_arrays.hpp) against plain ordered lists: random
// pushes, removals, re-arms, collections and pops, with enough churn that
// every array is compacted many times, starting from tickets near the 2^32
// wrap; then the modern wheel's firing order inside one churned bucket.
#include "wheel/core/bucket_arrays.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

using namespace timersim;

namespace {

struct TestNode {
    bool pending = false;
    std::uint16_t idx = 0;
    TimerId ticket = 0;
};

// Buckets 0..kBuckets-1, then kBuckets work lists. Each node is in at most
// one model list; `in_work` says which kind.
constexpr std::size_t kBuckets = 3;
constexpr std::size_t kLists = 2 * kBuckets;

struct Model {
    std::vector<std::vector<TimerId>> lists = std::vector<std::vector<TimerId>>(kLists); // oldest first
    std::vector<int> where;                                                             // list, or -1

    void erase(TimerId id) {
        auto& l = lists[static_cast<std::size_t>(where[id])];
        l.erase(std::find(l.begin(), l.end(), id));
        where[id] = -1;
    }
};

void check_same(const BucketArrays& arrays, const std::vector<TestNode>& nodes, const Model& m) {
    for (std::size_t list = 0; list < kLists; ++list) {
        std::vector<TimerId> want(m.lists[list].rbegin(), m.lists[list].rend());
        REQUIRE(arrays.live_entries(nodes, list) == want);
        REQUIRE(arrays.count(list) == want.size());
        REQUIRE(arrays.empty(list) == want.empty());
    }
    for (TimerId id = 0; id < nodes.size(); ++id) {
        if (!nodes[id].pending) continue;
        REQUIRE(arrays.holds(nodes[id].idx, nodes[id]) == (m.where[id] < static_cast<int>(kBuckets)));
    }
}

void churn(TimerId first_ticket, std::uint64_t seed) {
    constexpr TimerId kTimers = 200;
    std::mt19937_64 rng(seed);
    BucketArrays arrays(kLists, first_ticket);
    std::vector<TestNode> nodes(kTimers);
    Model m;
    m.where.assign(kTimers, -1);
    auto pick = [&](TimerId n) { return static_cast<TimerId>(rng() % n); };
    auto push = [&](TimerId id, std::uint16_t bucket) {
        const bool was_empty = arrays.push(nodes, bucket, id, nodes[id]);
        REQUIRE(was_empty == m.lists[bucket].empty());
        nodes[id].idx = bucket;
        nodes[id].pending = true;
        m.lists[bucket].push_back(id);
        m.where[id] = bucket;
    };
    // Takes a pending timer out of wherever it is, as the wheel's cancel does.
    auto take_out = [&](TimerId id) {
        const bool in_bucket = m.where[id] < static_cast<int>(kBuckets);
        REQUIRE(arrays.holds(nodes[id].idx, nodes[id]) == in_bucket);
        const auto list = static_cast<std::size_t>(m.where[id]);
        REQUIRE(list == (in_bucket ? nodes[id].idx : kBuckets + nodes[id].idx));
        REQUIRE(arrays.remove(list, nodes[id]) == (m.lists[list].size() == 1));
        m.erase(id);
    };
    // A copy taken half way owns its entries: the churn after it leaves the
    // copy as it was (and the sanitizer build sees no shared buffer).
    std::optional<BucketArrays> copy;
    BucketArrays assigned(1);
    std::vector<TestNode> nodes_then;
    Model m_then;
    for (int step = 0; step < 30000; ++step) {
        if (step == 15000) {
            copy.emplace(arrays);
            assigned = arrays;
            nodes_then = nodes;
            m_then = m;
        }
        const TimerId id = pick(kTimers);
        const auto bucket = static_cast<std::uint16_t>(pick(kBuckets));
        switch (rng() % 8) {
        case 0: case 1: case 2: // arm an idle timer, or re-arm a pending one elsewhere
            if (!nodes[id].pending) {
                push(id, bucket);
            } else if (bucket != nodes[id].idx || m.where[id] >= static_cast<int>(kBuckets)) {
                take_out(id);
                push(id, bucket); // stays pending throughout, as a re-arm does
            }
            break;
        case 3: case 4: // cancel
            if (nodes[id].pending) {
                take_out(id);
                nodes[id].pending = false;
            }
            break;
        case 5: { // collect a bucket into its (empty) work list
            const std::size_t work = kBuckets + bucket;
            if (!m.lists[work].empty()) break;
            arrays.collect(bucket, work);
            m.lists[work] = std::move(m.lists[bucket]);
            m.lists[bucket].clear();
            for (TimerId t : m.lists[work]) m.where[t] = static_cast<int>(work);
            break;
        }
        default: { // fire the newest live timer of a work list
            const std::size_t work = kBuckets + bucket;
            const TimerId fired = arrays.pop_live(nodes, work);
            if (m.lists[work].empty()) {
                REQUIRE(fired == kNoTimer);
                break;
            }
            REQUIRE(fired == m.lists[work].back());
            m.lists[work].pop_back();
            m.where[fired] = -1;
            nodes[fired].pending = false;
            break;
        }
        }
        check_same(arrays, nodes, m);
    }
    check_same(*copy, nodes_then, m_then);
    check_same(assigned, nodes_then, m_then);
    // The churn kept the arrays small: at most two entries per live timer
    // plus the growth floor, never one per operation.
    CHECK(arrays.entries() <= 2 * kTimers + 8 * kLists);
}

} // namespace

TEST_CASE("bucket arrays: random churn matches ordered lists") {
    churn(0, 1);
    churn(12345, 2);
}

TEST_CASE("bucket arrays: tickets across the 2^32 wrap") {
    churn(0xFFFFFFFFu - 500, 3);
    churn(0xFFFFFFFFu - 20000, 4);
}

// Cancelling and re-arming timers of one bucket over and over leaves many
// dead entries and compacts the bucket many times; it must still fire its
// timers newest first, as the kernel's hlist does.
TEST_CASE("modern: a churned bucket fires newest first") {
    ModernWheel q(ModernWheel::Config{.hz = 1000, .start_jiffies = 0, .deferrable_base = true});
    constexpr int kTimers = 300;
    std::vector<TimerId> ids;
    for (int i = 0; i < kTimers; ++i) ids.push_back(q.create());
    // expires 104..111 all go to the level-1 bucket collected at clock 112.
    std::mt19937_64 rng(7);
    std::vector<TimerId> order; // enqueue order of the pending timers
    auto arm = [&](TimerId t) {
        q.arm(t, 104 + rng() % 8);
        order.push_back(t);
    };
    for (TimerId t : ids) arm(t);
    const unsigned idx = q.placement(ids[0]).slot;
    for (int round = 0; round < 20000; ++round) {
        const TimerId t = ids[rng() % kTimers];
        if (q.is_pending(t)) {
            q.cancel(t);
            order.erase(std::find(order.begin(), order.end(), t));
        }
        if (rng() % 4 != 0) arm(t);
    }
    REQUIRE(!order.empty());
    for (TimerId t : order) REQUIRE(q.placement(t).slot == idx);
    const std::vector<TimerId> newest_first(order.rbegin(), order.rend());
    CHECK(q.bucket_timers(ModernWheel::base_std, idx) == newest_first);
    CHECK(q.bucket_count(ModernWheel::base_std, idx) == order.size());
    std::vector<TimerId> fired;
    q.set_jiffies(200);
    q.run_softirq([&](const FiredTimer& f) { fired.push_back(f.id); });
    CHECK(fired == newest_first);
    CHECK(q.pending() == 0);
}
