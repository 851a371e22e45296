// The seeds' designs (Varghese-Lauck schemes 1, 2, 4, 5, 6, Netty's
// HashedWheelTimer, cog) against the exact heap, each for its own promise.
//
// Every one of them promises, on a ticking CPU, to fire a timer armed
// outside the tick on exactly the jiffy it was armed for (tick granularity:
// schemes 1 and 2 keep exact expiries; 4, 5 and 6 hash by the expiry's low
// bits and check rounds or order; cog cascades by the expiry's bits; Netty
// keeps deadline and rounds), like the heap, never earlier. Netty's one
// exception: a timeout left in the queue by the transfer limit (100,000 a
// tick) fires late, never early. So the random streams check: the same
// timers fire on the same jiffies as on the heap (a multiset per jiffy),
// the same timers are pending after every operation, and the next event
// agrees. The boundary probes arm every delay 0 .. 2^14 (2^11 for the O(n)
// list schemes) from starting clocks on and around every revolution and
// ring boundary, including the 2^32 and 2^64 wraps, and sampled delays
// around the larger ring boundaries.
#include "tests/wheel/seed_design_helpers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>

#include "tests/build_flavour.hpp"

using namespace timersim;
using namespace timersim::test;

namespace {

constexpr bool kThorough = TIMERSIM_OPTIMIZED && !TIMERSIM_SANITIZED;
constexpr Jiffies kTop = std::numeric_limits<Jiffies>::max();

// The list schemes walk every timer (scheme 1 per tick, scheme 2 per
// insertion): smaller batches keep their tests quick.
template <class Q>
constexpr bool kListScheme = std::is_same_v<Q, Scheme1Queue> || std::is_same_v<Q, Scheme2Queue>;

// Fired timers per jiffy, as sorted id lists (the order inside a jiffy is
// each design's own).
using ByJiffy = std::map<Jiffies, std::vector<TimerId>>;

template <class Q>
struct Side {
    Q q;
    ByJiffy fired;
    std::vector<unsigned> fires; // per timer: how often it fired
    std::uint64_t early = 0;
};

std::string show(std::optional<Jiffies> v) { return v ? std::to_string(*v) : "none"; }

// Runs one random stream on Q and on the heap in lock step.
template <class Q>
void random_stream(std::uint64_t seed, Jiffies start, unsigned timers, unsigned steps, unsigned slots = 0) {
    CAPTURE(seed);
    CAPTURE(start);
    Side<Q> a{make_queue<Q>(start, slots), {}, std::vector<unsigned>(timers, 0)};
    Side<HeapQueue> h{make_queue<HeapQueue>(start), {}, std::vector<unsigned>(timers, 0)};
    const Jiffies rev = revolution(a.q);
    for (unsigned i = 0; i < timers; ++i) {
        REQUIRE(a.q.create() == i);
        REQUIRE(h.q.create() == i);
    }
    std::mt19937_64 rng(seed);
    // A delay: mostly short, some around and beyond a revolution, some in
    // the past, a few long (several rings of cog).
    const auto delay = [&](std::mt19937_64& r) -> std::int64_t {
        switch (r() % 10) {
        case 0: return -static_cast<std::int64_t>(r() % 5);
        case 1: return static_cast<std::int64_t>(r() % 4);
        case 2:
        case 3: return static_cast<std::int64_t>(rev - 2 + r() % 5);
        case 4: return static_cast<std::int64_t>(r() % (4 * rev));
        case 5: return static_cast<std::int64_t>(r() % 70000);
        default: return static_cast<std::int64_t>(1 + r() % 300);
        }
    };
    // Callbacks re-arm their own timer on a rule of (timer, fire count)
    // only, so both sides do the same whatever order a jiffy's timers run in.
    bool rearm = true; // off for the final drain
    const auto callback = [&](auto& side) {
        return [&side, &delay, &rearm, timers](const FiredTimer& f) {
            const Jiffies now = side.q.jiffies();
            if (time_before(now, f.expires)) ++side.early;
            side.fired[now].push_back(f.id);
            const unsigned n = ++side.fires[f.id];
            std::mt19937_64 r(f.id * 1000003ull + n);
            if (rearm && f.id % 3 == 0 && f.id < timers) {
                const std::int64_t d = delay(r);
                side.q.arm(f.id, now + static_cast<Jiffies>(d < 1 ? 1 : d));
            }
        };
    };
    auto fire_a = callback(a);
    auto fire_h = callback(h);
    for (unsigned step = 0; step < steps; ++step) {
        const unsigned op = static_cast<unsigned>(rng() % 100);
        const TimerId id = static_cast<TimerId>(rng() % timers);
        if (op < 45) {
            const Jiffies e = a.q.jiffies() + static_cast<Jiffies>(delay(rng));
            const ArmCall call = op < 3 ? ArmCall::mod_timer_pending : ArmCall::mod_timer;
            a.q.arm(id, e, call);
            h.q.arm(id, e, call);
        } else if (op < 60) {
            CHECK(a.q.cancel(id) == h.q.cancel(id));
        } else if (op < 95) {
            const Jiffies to = a.q.jiffies() + 1 + rng() % 3;
            tick_to(a.q, to, fire_a);
            tick_to(h.q, to, fire_h);
        } else {
            // An idle CPU: the next event, then a jump and one softirq.
            const std::optional<Jiffies> na = a.q.next_timer_interrupt();
            const std::optional<Jiffies> nh = h.q.next_timer_interrupt();
            if constexpr (std::is_same_v<Q, NettyWheel>) {
                // The worker ticks every tick while it holds anything.
                CHECK(na.has_value() == (nh.has_value() || a.q.counters().garbage > 0));
                // Its next tick, never later than the heap's event (an
                // overdue one is due at that next tick on both).
                const Jiffies next_tick = a.q.jiffies() + 1;
                if (na && nh) CHECK(time_before_eq(*na, time_after(*nh, next_tick) ? *nh : next_tick));
            } else {
                INFO("design ", show(na), " heap ", show(nh), " jiffies ", a.q.jiffies());
                CHECK(na == nh);
            }
            const Jiffies to = a.q.jiffies() + 1 + rng() % (2 * rev);
            wake_at(a.q, to, fire_a);
            wake_at(h.q, to, fire_h);
        }
        REQUIRE(a.q.pending() == h.q.pending());
        if (step % 64 == 0)
            for (TimerId t = 0; t < timers; ++t) REQUIRE(a.q.is_pending(t) == h.q.is_pending(t));
    }
    // Drain everything still pending, far enough for the longest delay.
    rearm = false;
    const Jiffies end = a.q.jiffies() + 80000;
    tick_to(a.q, end, fire_a);
    tick_to(h.q, end, fire_h);
    CHECK(a.early == 0);
    CHECK(h.early == 0);
    CHECK(a.q.pending() == 0);
    CHECK(h.q.pending() == 0);
    for (auto& [j, ids] : a.fired) std::sort(ids.begin(), ids.end());
    for (auto& [j, ids] : h.fired) std::sort(ids.begin(), ids.end());
    CHECK(a.fired.size() == h.fired.size());
    auto ia = a.fired.begin();
    auto ih = h.fired.begin();
    for (; ia != a.fired.end() && ih != h.fired.end(); ++ia, ++ih) {
        INFO("jiffy ", ia->first, " vs heap ", ih->first);
        REQUIRE(ia->first == ih->first);
        REQUIRE(ia->second == ih->second);
    }
    CHECK(a.q.counters().expired == h.q.counters().expired);
    CHECK(a.q.counters().paper.expiry == a.q.counters().expired);
}

std::vector<Jiffies> stream_starts() {
    return {Jiffies{0}, (Jiffies{1} << 32) - 300 * 250, (Jiffies{1} << 32) - 7, kTop - 1000, kTop - 10};
}

} // namespace

TEST_CASE_TEMPLATE("seed designs: random streams fire on the heap's jiffies", Q, Scheme1Queue, Scheme2Queue,
                   Scheme4Queue, Scheme5Queue, Scheme6Queue, NettyWheel, CogWheel) {
    const unsigned streams = kThorough ? 6 : 2;
    const unsigned steps = kThorough ? 6000 : 1500;
    for (const Jiffies start : stream_starts())
        for (unsigned s = 0; s < streams; ++s) random_stream<Q>(start * 31 + s + 1, start, 60, steps);
    // Small rings: timers many revolutions ahead, rounds and overflow busy.
    if constexpr (!kListScheme<Q> && !std::is_same_v<Q, CogWheel>)
        for (unsigned s = 0; s < streams; ++s) random_stream<Q>(s + 77, (Jiffies{1} << 32) - 5, 40, steps, 8);
}

namespace {

// Every delay 0..max armed at once from `start` (timer d for delay d), then
// ticked: each must fire exactly at start + d, once. Timers are armed from
// the longest delay down, so sorted insertions stay at the head.
template <class Q>
void batch_probe(Jiffies start, Jiffies max, unsigned slots = 0) {
    CAPTURE(start);
    Q q = make_queue<Q>(start, slots);
    for (Jiffies d = 0; d <= max; ++d) REQUIRE(q.create() == d);
    for (Jiffies d = max + 1; d-- > 0;) q.arm(static_cast<TimerId>(d), start + d);
    std::vector<Shot> log;
    const auto rec = [&](const FiredTimer& f) { log.push_back({f.id, f.expires, q.jiffies()}); };
    wake_at(q, start, rec); // the softirq of the starting jiffy: delay 0
    tick_to(q, start + max + 1, rec);
    REQUIRE(log.size() == max + 1);
    std::vector<int> seen(max + 1, 0);
    unsigned wrong = 0;
    for (const Shot& s : log) {
        if (++seen[s.id] != 1 || s.at != start + s.id) {
            if (++wrong <= 5) FAIL_CHECK("delay ", s.id, " fired at +", s.at - start, " (time ", seen[s.id], ")");
        }
    }
    CHECK(wrong == 0);
    CHECK(q.pending() == 0);
}

// One timer in a fresh queue at `start` + d, ticked to its expiry.
template <class Q>
void single_probe(Jiffies start, Jiffies d) {
    Q q = make_queue<Q>(start);
    const TimerId id = q.create();
    q.arm(id, start + d);
    Jiffies fired_at = 0;
    unsigned fired = 0;
    const auto rec = [&](const FiredTimer&) {
        fired_at = q.jiffies();
        ++fired;
    };
    wake_at(q, start, rec);
    tick_to(q, start + d, rec);
    INFO("start ", start, " delay ", d);
    CHECK(fired == 1);
    CHECK(fired_at == start + d);
}

// Starting clocks on and around every boundary a design has below 2^14, and
// the wraps.
template <class Q>
std::vector<Jiffies> boundary_starts(Jiffies rev) {
    std::vector<Jiffies> s;
    for (Jiffies b : {rev, 2 * rev, Jiffies{64}, Jiffies{4096}, Jiffies{262144}, Jiffies{1} << 24})
        for (int k = -1; k <= 1; ++k) s.push_back(b * 3 + static_cast<Jiffies>(k));
    s.push_back((Jiffies{1} << 32) - 1);
    s.push_back(kTop);          // jiffies wraps right after the start
    s.push_back(kTop - 4096 + 1);
    return s;
}

} // namespace

TEST_CASE_TEMPLATE("seed designs: every delay 0..2^14 from every boundary clock fires on its jiffy", Q, Scheme1Queue,
                   Scheme2Queue, Scheme4Queue, Scheme5Queue, Scheme6Queue, NettyWheel, CogWheel) {
    const Jiffies max = kListScheme<Q> ? (kThorough ? 2048 : 600) : (kThorough ? 16384 : 4200);
    const Jiffies rev = revolution(make_queue<Q>(0));
    for (const Jiffies start : boundary_starts<Q>(rev)) batch_probe<Q>(start, max);
    if constexpr (!kListScheme<Q> && !std::is_same_v<Q, CogWheel>) batch_probe<Q>(kTop - 3, 200, 8);
}

TEST_CASE_TEMPLATE("seed designs: one timer per fresh queue around the larger boundaries", Q, Scheme4Queue,
                   Scheme5Queue, Scheme6Queue, NettyWheel, CogWheel) {
    // cog's rings 2 and 3 begin at 4096 and 262144 ticks; the wheels'
    // revolutions repeat; each probe walks its whole delay.
    std::vector<Jiffies> delays;
    for (Jiffies b : {Jiffies{4096}, Jiffies{262144}})
        for (int k = -2; k <= 2; ++k) delays.push_back(b + static_cast<Jiffies>(k));
    if (kThorough)
        for (int k = -1; k <= 1; ++k) delays.push_back((Jiffies{1} << 24) + static_cast<Jiffies>(k));
    for (const Jiffies start : {Jiffies{0}, Jiffies{262143}, Jiffies{4095}, kTop - 100})
        for (const Jiffies d : delays) single_probe<Q>(start, d);
}

TEST_CASE("seed designs: cog past its top ring laps it and still fires exactly") {
    // Two rings (4096 ticks of range): every longer delay is clamped into
    // ring 1 and re-placed each time its slot cascades.
    CHECK_THROWS_AS(CogWheel(CogWheel::Config{.hz = 250, .rings = 1}), std::invalid_argument);
    for (const Jiffies start : {Jiffies{0}, Jiffies{63}, Jiffies{4095}, kTop - 70})
        for (Jiffies d : {Jiffies{4095}, Jiffies{4096}, Jiffies{4097}, Jiffies{8191}, Jiffies{8192}, Jiffies{20000}}) {
            CogWheel q(CogWheel::Config{.hz = 250, .start_jiffies = start, .rings = 2});
            const TimerId id = q.create();
            q.arm(id, start + d);
            Jiffies at = 0;
            unsigned n = 0;
            tick_to(q, start + d + 70, [&](const FiredTimer&) {
                at = q.jiffies();
                ++n;
            });
            INFO("start ", start, " delay ", d);
            CHECK(n == 1);
            CHECK(at == start + d);
        }
}

TEST_CASE("seed designs: netty's transfer limit makes timeouts late, never early") {
    // 10 timeouts a tick at most: 50 armed at tick 1000 for 1001 reach their
    // buckets 10 a tick from tick 1000 on (an idle worker's first tick is
    // the current one); the first two batches fire on time at 1001, each
    // later one on the tick it is transferred (rounds <= 0, and the bucket
    // walked right after the transfer is that tick's).
    NettyWheel q(NettyWheel::Config{.hz = 250, .start_jiffies = 1000, .transfers_per_tick = 10});
    std::vector<Jiffies> at(50, 0);
    for (TimerId i = 0; i < 50; ++i) {
        REQUIRE(q.create() == i);
        q.arm(i, 1001);
    }
    tick_to(q, 1010, [&](const FiredTimer& f) { at[f.id] = q.jiffies(); });
    for (TimerId i = 0; i < 50; ++i) CHECK(at[i] == (i < 20 ? 1001 : 1000 + i / 10));
}

TEST_CASE("seed designs: the paper's costs, counted") {
    SUBCASE("scheme 1 visits every timer on every tick") {
        Scheme1Queue q(ListQueueConfig{.hz = 250, .start_jiffies = 0});
        for (TimerId i = 0; i < 10; ++i) q.arm(q.create(), 1000 + i);
        tick_to(q, 20, [](const FiredTimer&) {});
        CHECK(q.counters().paper.start == 10);
        CHECK(q.counters().paper.per_tick == 10 * 21); // ticks 0..20
        CHECK(q.counters().list_steps == 10 * 21);
    }
    SUBCASE("scheme 2 walks the list on insertion, looks at the head per tick") {
        Scheme2Queue q(ListQueueConfig{.hz = 250, .start_jiffies = 0});
        // Increasing expiries: the i-th insertion walks past i timers.
        for (TimerId i = 0; i < 10; ++i) q.arm(q.create(), 100 + i);
        CHECK(q.counters().paper.start == 10 + 45);
        // Decreasing: each goes to the head.
        for (TimerId i = 0; i < 10; ++i) q.arm(q.create(), 50 - i);
        CHECK(q.counters().paper.start == 10 + 45 + 10);
        tick_to(q, 10, [](const FiredTimer&) {});
        CHECK(q.counters().paper.per_tick == 11);
    }
    SUBCASE("scheme 4 walks its overflow list once a revolution") {
        Scheme4Queue q(ListQueueConfig{.hz = 250, .start_jiffies = 0, .slots = 16});
        for (TimerId i = 0; i < 5; ++i) q.arm(q.create(), 100 + i); // overflow (>= 16 ahead)
        q.arm(q.create(), 3);                                       // in the wheel
        CHECK(q.placement(0).level == 1);
        CHECK(q.placement(5).level == 0);
        CHECK(q.placement(5).slot == 3);
        std::vector<Jiffies> at;
        tick_to(q, 104, [&](const FiredTimer& f) { at.push_back(f.expires); });
        CHECK(at.size() == 6);
        // Revolutions start at 0, 16, .., 96: 7 walks of the overflow, 5 entries each
        // until 96, where all 5 move in; plus one per tick (ticks 0..104).
        CHECK(q.counters().paper.per_tick == 105 + 7 * 5);
        CHECK(q.counters().cascade_moves == 5);
    }
    SUBCASE("scheme 6 visits the whole slot and decrements rounds") {
        Scheme6Queue q(ListQueueConfig{.hz = 250, .start_jiffies = 0, .slots = 8});
        q.arm(q.create(), 3);  // rounds 0
        q.arm(q.create(), 19); // same slot, rounds 2
        CHECK(q.placement(1).slot == 3);
        tick_to(q, 19, [](const FiredTimer&) {});
        // Slot 3 is visited at ticks 3, 11, 19: 2 + 1 + 1 entries.
        CHECK(q.counters().list_steps == 4);
        CHECK(q.counters().expired == 2);
    }
    SUBCASE("scheme 5 keeps a slot sorted") {
        Scheme5Queue q(ListQueueConfig{.hz = 250, .start_jiffies = 0, .slots = 8});
        q.arm(q.create(), 19);
        q.arm(q.create(), 3); // goes before 19 in slot 3
        q.arm(q.create(), 11);
        CHECK(q.counters().paper.start == 3 + 0 + 1);
        std::vector<TimerId> order;
        tick_to(q, 19, [&](const FiredTimer& f) { order.push_back(f.id); });
        CHECK(order == std::vector<TimerId>{1, 2, 0});
    }
}

TEST_CASE("seed designs: netty holds a cancelled timeout until the next tick") {
    NettyWheel q(NettyWheel::Config{.hz = 250, .start_jiffies = 0});
    const TimerId a = q.create();
    const TimerId b = q.create();
    q.arm(a, 600);
    q.arm(b, 700);
    tick_to(q, 1, [](const FiredTimer&) {}); // both move into buckets
    CHECK(q.queued_timeouts() == 0);
    CHECK(q.cancel(a));
    CHECK(q.counters().garbage == 1); // marked, still in its bucket
    q.arm(b, 800);                    // a re-arm: the old timeout cancelled, a new one queued
    CHECK(q.counters().garbage == 2);
    CHECK(q.counters().peak_garbage == 2);
    CHECK(q.pending() == 1);
    tick_to(q, 2, [](const FiredTimer&) {});
    CHECK(q.counters().garbage == 0);
    CHECK(q.counters().peak_garbage == 2);
    // Cancelled while still queued: dropped by the transfer of the next tick.
    q.arm(a, 50);
    CHECK(q.cancel(a));
    CHECK(q.queued_timeouts() == 1);
    tick_to(q, 3, [](const FiredTimer&) {});
    CHECK(q.queued_timeouts() == 0);
    CHECK(q.counters().garbage == 0);
}

TEST_CASE("seed designs: cog's tombstones stay until their bucket drains") {
    CogWheel q(CogWheel::Config{.hz = 250, .start_jiffies = 0});
    const TimerId a = q.create();
    const TimerId b = q.create();
    q.arm(a, 5000); // ring 2 (4096 .. 262143), slot 1: cascades at tick 4096
    q.arm(b, 10);
    CHECK(q.placement(a).level == 2);
    CHECK(q.placement(a).slot == 1);
    CHECK(q.cancel(a));
    q.arm(b, 20); // re-arm: the old entry dies too
    CHECK(q.counters().garbage == 2);
    tick_to(q, 10, [](const FiredTimer&) {}); // ring 0 slot 10 drains: one tombstone gone
    CHECK(q.counters().garbage == 1);
    q.arm(q.create(), 9000); // keep the wheel busy so it walks to 4096
    tick_to(q, 4096, [](const FiredTimer&) {});
    CHECK(q.counters().garbage == 0);
    CHECK(q.counters().peak_garbage == 2);
    // Destroy and re-create the same handle: the old tombstones stay dead.
    const TimerId c = q.create();
    q.arm(c, 4200);
    q.destroy(c);
    const TimerId d = q.create();
    CHECK(d == c);
    q.arm(d, 4300);
    unsigned fired = 0;
    tick_to(q, 4300, [&](const FiredTimer& f) {
        CHECK(f.id == d);
        CHECK(q.jiffies() == 4300);
        ++fired;
    });
    CHECK(fired == 1);
}

TEST_CASE_TEMPLATE("seed designs: budgeted passes run the same timers in the same order", Q, Scheme1Queue,
                   Scheme4Queue, Scheme6Queue, NettyWheel, CogWheel) {
    // The same arms on two queues; one runs unbounded passes, the other
    // passes of one expiry each, resumed until done.
    Q full = make_queue<Q>(100);
    Q step = make_queue<Q>(100);
    std::mt19937_64 rng(5);
    for (TimerId i = 0; i < 200; ++i) {
        full.create();
        step.create();
        const Jiffies e = 100 + rng() % 700;
        full.arm(i, e);
        step.arm(i, e);
    }
    std::vector<std::pair<TimerId, Jiffies>> a, b;
    for (Jiffies j = 101; j <= 900; ++j) {
        full.set_jiffies(j);
        step.set_jiffies(j);
        if (full.softirq_due()) full.run_softirq([&](const FiredTimer& f) { a.push_back({f.id, j}); });
        if (step.softirq_due() || step.carry_over()) {
            const auto rec = [&](const FiredTimer& f) {
                b.push_back({f.id, j});
                if (f.id % 7 == 0 && f.id + 1 < 200) step.cancel(f.id + 1); // a collected timer cancelled
            };
            bool more = step.run_softirq(rec, 1);
            while (more) more = step.resume_softirq(rec, 1);
        }
    }
    // The stepped run cancels, from a callback, the timer after each
    // seventh: it must be the unbounded run, in the same order, minus the
    // timers cancelled before they fired (those fired earlier stay).
    std::vector<std::pair<TimerId, Jiffies>> expected;
    std::vector<bool> cancelled(200, false), fired(200, false);
    for (const auto& [id, j] : a) {
        if (cancelled[id]) continue;
        fired[id] = true;
        expected.push_back({id, j});
        if (id % 7 == 0 && id + 1 < 200 && !fired[id + 1]) cancelled[id + 1] = true;
    }
    CHECK(b.size() == expected.size());
    CHECK(b == expected);
}
