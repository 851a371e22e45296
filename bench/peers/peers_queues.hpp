// peers_bench: the queues it compares, each behind one adapter interface
// (arm, rearm, cancel, tick, pending, ahead, node_bytes), the buffer that
// puts the peers behind the batched wheels' front (PeerBatch), and the table
// from a queue's printed name to its adapter (for_queue). Fired timers go to
// one sink whose count and id hash the workloads compare across queues.
// Part of peers_bench.cpp's one translation unit, included only from it and
// its parts: the anonymous namespace is the harness's own, as in one file.
#pragma once

#include "peers_results.hpp"

#include "bench/bench_hz.hpp"
#include "bench/peers/batched_queue.hpp"
#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"
#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"

#include "ratas/timer-wheel.h"

// timeout.h pulls these in; included first so that they stay outside extern "C".
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/queue.h>
extern "C" {
#include "timeout/timeout.h"
}

#include <seastar/core/timer-set.hh>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

// seastar's SEASTAR_ASSERT (always on, by design) calls this.
namespace seastar::internal {
[[noreturn]] void assert_fail(const char* msg, const char* file, int line, const char* func) {
    std::fprintf(stderr, "seastar assertion failed: %s (%s:%d %s)\n", msg, file, line, func);
    std::abort();
}
} // namespace seastar::internal

namespace {

// ---------------------------------------------------------------- fired timers

// What fired: a count and an order-independent hash of the ids.
struct Sink {
    std::uint64_t fired = 0;
    std::uint64_t hash = 0;
};
Sink g_sink;
inline void fire(std::uint32_t id) {
    ++g_sink.fired;
    g_sink.hash += (id + 1) * 0x9E3779B97F4A7C15ull;
}

// ---------------------------------------------------------------- adapters
// Each adapter: construct with a capacity (timers 0..cap-1 are created, idle),
//   arm(id, delay)    an idle timer, expiry = now + delay
//   rearm(id, delay)  a pending timer, the queue's own mod_timer equivalent
//   cancel(id)        a pending timer
//   tick()            time moves one tick, due timers fire (fire(id))
//   pending()         timers queued
//   ahead(id)         id's operation comes soon: fetch what it will read
//   node_bytes        per-timer bytes of the queue's own structures

using timersim::Jiffies;

// timersim's queues, all behind the same TimerQueue concept: one adapter,
// the queue built by MakeQ (HZ=250).
template <class W, class MakeQ>
struct TimersimQ {
    static constexpr const char* name = MakeQ::name;
    static constexpr std::size_t node_bytes = W::bytes_per_timer();
    W w;
    explicit TimersimQ(std::size_t cap) : w(MakeQ::make()) {
        w.reserve(cap);
        for (std::size_t i = 0; i < cap; ++i) w.create();
    }
    void arm(std::uint32_t id, std::uint32_t d) { w.arm(id, w.jiffies() + d); }
    void rearm(std::uint32_t id, std::uint32_t d) { w.arm(id, w.jiffies() + d); }
    void cancel(std::uint32_t id) { w.cancel(id); }
    // Inline by force: without it GCC 12 -O3 split ahead() for partial
    // inlining and the loop kept no prefetch at all (objdump), so the hint
    // changed nothing.
    [[gnu::always_inline]] void ahead(std::uint32_t id) const {
        if constexpr (requires { w.prefetch(id); }) w.prefetch(id);
    }
    void tick() {
        w.set_jiffies(w.jiffies() + 1);
        if (w.softirq_due()) w.run_softirq([](const timersim::FiredTimer& f) { fire(f.id); });
    }
    std::size_t pending() const { return w.pending(); }
};

template <class W>
struct DefaultMake {
    static W make() { return W(typename W::Config{.hz = timersim::bench::kBenchHz}); }
};
struct MakeModern : DefaultMake<timersim::ModernWheel> { static constexpr const char* name = "modern"; };
struct MakeClassic {
    static constexpr const char* name = "classic";
    static timersim::ClassicWheel make() {
        // No slack: queue mechanics only, no expiry rounding.
        return timersim::ClassicWheel({.hz = timersim::bench::kBenchHz, .slack = std::nullopt});
    }
};
struct MakeTsHeap : DefaultMake<timersim::HeapQueue> { static constexpr const char* name = "tsheap"; };
struct MakeScheme4 : DefaultMake<timersim::Scheme4Queue> { static constexpr const char* name = "scheme4"; };
struct MakeScheme6 : DefaultMake<timersim::Scheme6Queue> { static constexpr const char* name = "scheme6"; };
struct MakeNetty : DefaultMake<timersim::NettyWheel> { static constexpr const char* name = "netty"; };
struct MakeCog : DefaultMake<timersim::CogWheel> { static constexpr const char* name = "cog"; };
struct MakeRfc2015 {
    static constexpr const char* name = "rfc2015";
    static timersim::InPlaceWheel make() {
        return timersim::InPlaceWheel(timersim::InPlaceWheel::Config{
            .hz = timersim::bench::kBenchHz,
            .geometry = timersim::parse_wheel_spec("wheel:rfc-2015").geometry(timersim::bench::kBenchHz)});
    }
};
struct MakeCascade8x4 {
    static constexpr const char* name = "cascade8x4";
    static timersim::CascadingWheel make() {
        return timersim::CascadingWheel(timersim::CascadingWheel::Config{
            .hz = timersim::bench::kBenchHz,
            .geometry = timersim::parse_wheel_spec("wheel:bits=8x4:mode=cascade").geometry(timersim::bench::kBenchHz),
            .slack = std::nullopt});
    }
};
struct MakeModernBatch {
    static constexpr const char* name = "modern+batch";
    static timersim::BatchedQueue<timersim::ModernWheel> make() {
        return timersim::BatchedQueue<timersim::ModernWheel>(MakeModern::make());
    }
};
struct MakeClassicBatch {
    static constexpr const char* name = "classic+batch";
    static timersim::BatchedQueue<timersim::ClassicWheel> make() {
        return timersim::BatchedQueue<timersim::ClassicWheel>(MakeClassic::make());
    }
};
using ModernQ = TimersimQ<timersim::ModernWheel, MakeModern>;
using ModernBatchQ = TimersimQ<timersim::BatchedQueue<timersim::ModernWheel>, MakeModernBatch>;
using ClassicBatchQ = TimersimQ<timersim::BatchedQueue<timersim::ClassicWheel>, MakeClassicBatch>;
using ClassicQ = TimersimQ<timersim::ClassicWheel, MakeClassic>;
using TsHeapQ = TimersimQ<timersim::HeapQueue, MakeTsHeap>;
using Scheme4Q = TimersimQ<timersim::Scheme4Queue, MakeScheme4>;
using Scheme6Q = TimersimQ<timersim::Scheme6Queue, MakeScheme6>;
using NettyQ = TimersimQ<timersim::NettyWheel, MakeNetty>;
using CogQ = TimersimQ<timersim::CogWheel, MakeCog>;
using Rfc2015Q = TimersimQ<timersim::InPlaceWheel, MakeRfc2015>;
using Cascade8x4Q = TimersimQ<timersim::CascadingWheel, MakeCascade8x4>;

// ratas: events are objects the user owns; execute() is the callback.
struct RatasEvent final : TimerEventInterface {
    static RatasEvent* base;
    void execute() override { fire(static_cast<std::uint32_t>(this - base)); }
};
RatasEvent* RatasEvent::base = nullptr;

struct RatasQ {
    static constexpr const char* name = "ratas";
    static constexpr std::size_t node_bytes = sizeof(RatasEvent);
    std::unique_ptr<TimerWheel> wheel;
    std::unique_ptr<RatasEvent[]> ev;
    std::size_t cap;
    explicit RatasQ(std::size_t c) : wheel(new TimerWheel(0)), ev(new RatasEvent[c]), cap(c) { RatasEvent::base = ev.get(); }
    ~RatasQ() {
        ev.reset(); // events cancel themselves on destruction: before the wheel goes
        wheel.reset();
    }
    void arm(std::uint32_t id, std::uint32_t d) { wheel->schedule(&ev[id], d); }
    void rearm(std::uint32_t id, std::uint32_t d) { wheel->schedule(&ev[id], d); }
    void cancel(std::uint32_t id) { ev[id].cancel(); }
    void ahead(std::uint32_t id) const { __builtin_prefetch(&ev[id], 1); }
    void tick() { wheel->advance(1); }
    std::size_t pending() const { // not offered by ratas: count (checks only, untimed)
        std::size_t k = 0;
        for (std::size_t i = 0; i < cap; ++i) k += ev[i].active();
        return k;
    }
};

// wahern/timeout, leanest documented configuration (no callbacks, intervals or
// back-pointer: -DTIMEOUT_DISABLE_*), relative timeouts.
struct TimeoutQ {
    static constexpr const char* name = "timeout";
    static constexpr std::size_t node_bytes = sizeof(struct timeout);
    struct timeouts* T = nullptr;
    struct timeout* to = nullptr;
    timeout_t now = 0;
    std::size_t cap;
    explicit TimeoutQ(std::size_t c) : cap(c) {
        int err = 0;
        T = timeouts_open(0, &err);
        if (!T) die("timeouts_open failed");
        to = static_cast<struct timeout*>(std::calloc(cap, sizeof(struct timeout)));
        if (!to) die("out of memory");
        for (std::size_t i = 0; i < cap; ++i) timeout_init(&to[i], 0);
    }
    ~TimeoutQ() {
        timeouts_close(T);
        std::free(to);
    }
    void arm(std::uint32_t id, std::uint32_t d) { timeouts_add(T, &to[id], d); }
    void rearm(std::uint32_t id, std::uint32_t d) { timeouts_add(T, &to[id], d); }
    void cancel(std::uint32_t id) { timeouts_del(T, &to[id]); }
    void ahead(std::uint32_t id) const { __builtin_prefetch(&to[id], 1); }
    void tick() {
        timeouts_update(T, ++now);
        while (struct timeout* t = timeouts_get(T)) fire(static_cast<std::uint32_t>(t - to));
    }
    std::size_t pending() const { // not offered: count (checks only, untimed)
        std::size_t k = 0;
        for (std::size_t i = 0; i < cap; ++i) k += to[i].pending != nullptr;
        return k;
    }
};

// 4-ary min-heap with a position index. Heap entries carry their key, so a
// sift compares within the heap array; the array starts 3 entries before a
// 64-byte boundary so the 4 children of a node share one cache line.
struct Heap4Q {
    static constexpr const char* name = "heap4";
    struct Ent {
        std::uint64_t key;
        std::uint32_t id;
        std::uint32_t pad;
    };
    static constexpr std::size_t node_bytes = sizeof(Ent) + sizeof(std::uint32_t);
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    static constexpr std::size_t kOff = 3;
    Ent* raw = nullptr;
    Ent* h = nullptr; // h[0] is the root
    std::size_t n = 0;
    std::vector<std::uint32_t> pos;
    std::uint64_t now = 0;
    explicit Heap4Q(std::size_t cap) : pos(cap, kNone) {
        const std::size_t bytes = ((cap + 4) * sizeof(Ent) + 63) / 64 * 64;
        raw = static_cast<Ent*>(std::aligned_alloc(64, bytes));
        if (!raw) die("out of memory");
        h = raw + kOff;
    }
    ~Heap4Q() { std::free(raw); }
    void place(std::size_t i, const Ent& e) {
        h[i] = e;
        pos[e.id] = static_cast<std::uint32_t>(i);
    }
    void sift_up(std::size_t i, Ent e) {
        while (i > 0) {
            const std::size_t p = (i - 1) / 4;
            if (h[p].key <= e.key) break;
            place(i, h[p]);
            i = p;
        }
        place(i, e);
    }
    void sift_down(std::size_t i, Ent e) {
        for (;;) {
            const std::size_t c = 4 * i + 1;
            if (c >= n) break;
            std::size_t best = c;
            std::uint64_t bk = h[c].key;
            const std::size_t end = std::min(c + 4, n);
            for (std::size_t j = c + 1; j < end; ++j)
                if (h[j].key < bk) {
                    bk = h[j].key;
                    best = j;
                }
            if (bk >= e.key) break;
            place(i, h[best]);
            i = best;
        }
        place(i, e);
    }
    void remove_at(std::size_t i) {
        pos[h[i].id] = kNone;
        const Ent last = h[--n];
        if (i == n) return;
        if (i > 0 && last.key < h[(i - 1) / 4].key)
            sift_up(i, last);
        else
            sift_down(i, last);
    }
    void arm(std::uint32_t id, std::uint32_t d) { sift_up(n++, Ent{now + d, id, 0}); }
    void rearm(std::uint32_t id, std::uint32_t d) {
        const std::size_t i = pos[id];
        const std::uint64_t k = now + d;
        const std::uint64_t old = h[i].key;
        if (k < old)
            sift_up(i, Ent{k, id, 0});
        else
            sift_down(i, Ent{k, id, 0});
    }
    void cancel(std::uint32_t id) { remove_at(pos[id]); }
    void ahead(std::uint32_t id) const {
        __builtin_prefetch(&pos[id], 1);
        const std::uint32_t i = pos[id]; // a load, not a hint: the entry's address needs it
        if (i != kNone) __builtin_prefetch(&h[i], 1);
    }
    void tick() {
        ++now;
        while (n > 0 && h[0].key <= now) {
            const std::uint32_t id = h[0].id;
            remove_at(0);
            fire(id);
        }
    }
    std::size_t pending() const { return n; }
};

// seastar::timer_set, used as seastar's reactor uses it: insert/remove, and
// expire() whenever now reaches get_next_timeout() (the reactor arms its
// hardware timer for that instant).
struct TickClock {
    using rep = std::int64_t;
    using period = std::ratio<1>;
    using duration = std::chrono::duration<rep, period>;
    using time_point = std::chrono::time_point<TickClock, duration>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept { return time_point(duration(0)); }
};
struct STimer {
    using clock = TickClock;
    using time_point = TickClock::time_point;
    using duration = TickClock::duration;
    boost::intrusive::list_member_hook<> link;
    time_point expiry{};
    bool armed = false;
    bool _expired = false;
    time_point get_timeout() const noexcept { return expiry; }
    void cancel() noexcept { std::abort(); } // only ~timer_set() calls it; the adapter clears the set first
};
using SeastarSet = seastar::timer_set<STimer, &STimer::link>;

struct SeastarQ {
    static constexpr const char* name = "seastar";
    static constexpr std::size_t node_bytes = sizeof(STimer);
    std::unique_ptr<SeastarSet> set;
    std::unique_ptr<STimer[]> t;
    std::int64_t now = 0;
    explicit SeastarQ(std::size_t cap) : set(new SeastarSet()), t(new STimer[cap]) {}
    ~SeastarQ() {
        set->clear();
        set.reset();
        t.reset();
    }
    void arm(std::uint32_t id, std::uint32_t d) {
        STimer& x = t[id];
        x.expiry = TickClock::time_point(TickClock::duration(now + d));
        x.armed = true;
        set->insert(x);
    }
    void rearm(std::uint32_t id, std::uint32_t d) { // seastar's timer::rearm(): cancel, then arm
        STimer& x = t[id];
        set->remove(x);
        x.expiry = TickClock::time_point(TickClock::duration(now + d));
        set->insert(x);
    }
    void cancel(std::uint32_t id) {
        STimer& x = t[id];
        set->remove(x);
        x.armed = false;
    }
    void ahead(std::uint32_t id) const { __builtin_prefetch(&t[id], 1); }
    void tick() {
        ++now;
        if (now < set->get_next_timeout().time_since_epoch().count()) return;
        auto exp = set->expire(TickClock::time_point(TickClock::duration(now)));
        while (!exp.empty()) {
            STimer& x = exp.front();
            exp.pop_front();
            x.armed = false;
            fire(static_cast<std::uint32_t>(&x - t.get()));
        }
    }
    std::size_t pending() const { return set->size(); } // walks the buckets (checks only)
};

// Any adapter behind the same buffer as timersim's BatchedQueue
// (bench/peers/batched_queue.hpp): each call is recorded and its timer handed to
// ahead() at once, the buffered calls are applied 32 at a time, and a tick
// or a query applies them first. The peers get the knowledge the batched
// timersim wheels get, through what their APIs expose (ahead()), so the
// "+batch" rows compare like with like.
template <class Q, class Name>
struct PeerBatch {
    static constexpr const char* name = Name::name;
    static constexpr std::size_t node_bytes = Q::node_bytes;
    static constexpr std::size_t kBatch = 32;
    enum Kind : std::uint8_t { kArm, kRearm, kCancel };
    struct Call {
        std::uint32_t id;
        std::uint32_t delay;
        Kind kind;
    };
    mutable Q q; // pending() const applies the buffer first
    mutable std::array<Call, kBatch> calls{};
    mutable std::size_t size = 0;
    explicit PeerBatch(std::size_t cap) : q(cap) {}
    void push(Call c) {
        q.ahead(c.id);
        calls[size++] = c;
        if (size == kBatch) flush();
    }
    void flush() const {
        for (std::size_t i = 0; i < size; ++i) {
            const Call& c = calls[i];
            if (c.kind == kArm) q.arm(c.id, c.delay);
            else if (c.kind == kRearm) q.rearm(c.id, c.delay);
            else q.cancel(c.id);
        }
        size = 0;
    }
    void arm(std::uint32_t id, std::uint32_t d) { push({id, d, kArm}); }
    void rearm(std::uint32_t id, std::uint32_t d) { push({id, d, kRearm}); }
    void cancel(std::uint32_t id) { push({id, 0, kCancel}); }
    void ahead(std::uint32_t) const {}
    void tick() {
        flush();
        q.tick();
    }
    std::size_t pending() const {
        flush();
        return q.pending();
    }
};
struct RatasBatchName { static constexpr const char* name = "ratas+batch"; };
struct TimeoutBatchName { static constexpr const char* name = "timeout+batch"; };
struct Heap4BatchName { static constexpr const char* name = "heap4+batch"; };
struct SeastarBatchName { static constexpr const char* name = "seastar+batch"; };
using RatasBatchQ = PeerBatch<RatasQ, RatasBatchName>;
using TimeoutBatchQ = PeerBatch<TimeoutQ, TimeoutBatchName>;
using Heap4BatchQ = PeerBatch<Heap4Q, Heap4BatchName>;
using SeastarBatchQ = PeerBatch<SeastarQ, SeastarBatchName>;

template <class F>
void for_queue(const std::string& name, F&& f) {
    if (name == "modern") f(static_cast<ModernQ*>(nullptr));
    else if (name == "classic") f(static_cast<ClassicQ*>(nullptr));
    else if (name == "modern+batch") f(static_cast<ModernBatchQ*>(nullptr));
    else if (name == "classic+batch") f(static_cast<ClassicBatchQ*>(nullptr));
    else if (name == "tsheap") f(static_cast<TsHeapQ*>(nullptr));
    else if (name == "ratas") f(static_cast<RatasQ*>(nullptr));
    else if (name == "timeout") f(static_cast<TimeoutQ*>(nullptr));
    else if (name == "heap4") f(static_cast<Heap4Q*>(nullptr));
    else if (name == "seastar") f(static_cast<SeastarQ*>(nullptr));
    else if (name == "ratas+batch") f(static_cast<RatasBatchQ*>(nullptr));
    else if (name == "timeout+batch") f(static_cast<TimeoutBatchQ*>(nullptr));
    else if (name == "heap4+batch") f(static_cast<Heap4BatchQ*>(nullptr));
    else if (name == "seastar+batch") f(static_cast<SeastarBatchQ*>(nullptr));
    else if (name == "scheme4") f(static_cast<Scheme4Q*>(nullptr));
    else if (name == "scheme6") f(static_cast<Scheme6Q*>(nullptr));
    else if (name == "netty") f(static_cast<NettyQ*>(nullptr));
    else if (name == "cog") f(static_cast<CogQ*>(nullptr));
    else if (name == "rfc2015") f(static_cast<Rfc2015Q*>(nullptr));
    else if (name == "cascade8x4") f(static_cast<Cascade8x4Q*>(nullptr));
    else die("unknown queue " + name);
}

} // namespace
