// peers_bench: timersim's timer queues against public timer queues, side by side,
// on the same operation streams, in one process, interleaved round by round.
//
// Queues (names as printed):
//   modern    timersim ModernWheel (Linux 6.1 expire-in-place wheel), HZ=250
//   classic   timersim ClassicWheel (Linux 4.7 cascading wheel), slack off
//   tsheap    timersim HeapQueue (binary heap, the project's exact reference)
//   ratas     jsnell/ratas TimerWheel (C++, 8 levels x 256 slots, cascading)
//   timeout   wahern/timeout (C, 4 wheels x 64 slots, bitmaps, cascading)
//   heap4     a 4-ary min-heap with a position index (written here: the
//             textbook alternative; keys cached in the heap array, children
//             cache-line aligned as in libev's 4-heap)
//   seastar   seastar::timer_set (C++, ScyllaDB's reactor timers: 64 log2
//             buckets of intrusive lists and one 64-bit bitmap, lazy sorting)
// and, in timersim's copy (bench/peers/), the seeds' designs and two
// configurable wheels (docs/designs.md, docs/designs-schemes.md):
//   scheme4   Varghese & Lauck scheme 4: 256 slots + an overflow list
//   scheme6   scheme 6: 256 hashed slots, unsorted, rounds
//   netty     Netty's HashedWheelTimer (512 buckets, queued arms, cancels)
//   cog       cog: base-64 cascading rings, block buckets, tombstone cancel
//   rfc2015   wheel:rfc-2015 (InPlaceWheel, 8 levels of 32, x8)
//   cascade8x4  wheel:bits=8x4:mode=cascade (CascadingWheel, 4 levels of 256)
//   modern+batch, classic+batch  the two kernel wheels behind
//             BatchedQueue (bench/peers/batched_queue.hpp): arms and cancels are
//             buffered, each node fetched when its call comes in, and
//             applied 32 at a time; any query or tick applies them first.
//             For a caller that does not need each call's answer at once.
//   ratas+batch, timeout+batch, heap4+batch, seastar+batch  the peers behind
//             the same buffer (PeerBatch): each call's timer handed to the
//             peer's ahead() when the call comes in, 32 calls applied at a time
//
// Every queue gets the same random streams (fixed seeds, drawn before any
// timing); time is one tick = one jiffy; all wheels advance one tick at a time.
// Each timed phase is thread CPU time. Fired timers are counted and an
// order-independent hash of their ids is compared across queues: a run whose
// queues disagree exits non-zero.
//
// Usage: peers_bench [--sizes 1000,100000,1000000,10000000] [--rounds 5]
//                    [--rounds-10m 3] [--queues modern,ratas,...]
//                    [--workloads steady,hot,rearm,expiry,same,tcp]
//                    [--pairs 2000000] [--tcp-max 1000000] [--latency]
//                    [--ahead 16] [--lead modern]
//
// The ratio columns are the --lead queue's time over each other queue's,
// per round, then the median (default modern; e.g. --lead modern+batch).
//
// timersim's copy adds two workloads, steady+ahead and rearm+ahead: the same
// streams, but before operation k every queue is told which timer operation
// k+A (--ahead) will touch, and its ahead(id) may prefetch what it knows it
// will read. A live kernel cannot do this; the simulator can (its trace lines
// are read ahead and its generators keep calendars: workloads/workload.hpp's
// Sim::prefetch_timer). Every queue gets the same hint: timersim's wheels
// fetch their node (W::prefetch); ratas, timeout.c and seastar fetch the
// timer object the caller owns, which is all their API exposes; the 4-ary
// heap fetches its position slot and the heap entry it names.

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

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <malloc.h>
#include <map>
#include <set>
#include <memory>
#include <numeric>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

// seastar's SEASTAR_ASSERT (always on, by design) calls this.
namespace seastar::internal {
[[noreturn]] void assert_fail(const char* msg, const char* file, int line, const char* func) {
    std::fprintf(stderr, "seastar assertion failed: %s (%s:%d %s)\n", msg, file, line, func);
    std::abort();
}
} // namespace seastar::internal

namespace {

// ---------------------------------------------------------------- utilities

struct Rng { // splitmix64
    std::uint64_t s;
    explicit Rng(std::uint64_t seed) : s(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>((next() >> 32) * n >> 32); }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

// Network-timeout-like delays: 70% 50..500 ticks, 25% 1000..60000, 5% 60001..2000000.
std::uint32_t draw_delay(Rng& r) {
    const std::uint32_t c = r.below(100);
    if (c < 70) return 50 + r.below(451);
    if (c < 95) return 1000 + r.below(59001);
    return 60001 + r.below(2000000 - 60000);
}

double cpu_now_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

std::size_t resident_bytes() {
    malloc_trim(0);
    FILE* f = std::fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (std::fscanf(f, "%lu %lu", &size, &res) != 2) res = 0;
        std::fclose(f);
    }
    return res * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

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

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "peers_bench: %s\n", msg.c_str());
    std::exit(2);
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
    static W make() { return W(typename W::Config{}); }
};
struct MakeModern : DefaultMake<timersim::ModernWheel> { static constexpr const char* name = "modern"; };
struct MakeClassic {
    static constexpr const char* name = "classic";
    static timersim::ClassicWheel make() {
        timersim::ClassicWheel::Config c;
        c.slack = std::nullopt; // queue mechanics only: no expiry rounding
        return timersim::ClassicWheel(c);
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
            .hz = 250, .geometry = timersim::parse_wheel_spec("wheel:rfc-2015").geometry(250)});
    }
};
struct MakeCascade8x4 {
    static constexpr const char* name = "cascade8x4";
    static timersim::CascadingWheel make() {
        return timersim::CascadingWheel(timersim::CascadingWheel::Config{
            .hz = 250, .geometry = timersim::parse_wheel_spec("wheel:bits=8x4:mode=cascade").geometry(250),
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

// ---------------------------------------------------------------- streams

struct Streams {
    std::size_t n = 0;
    std::vector<std::uint32_t> fill;          // fill delay of timer i
    std::vector<std::uint32_t> ids, delays;   // steady: cancel ids[k], arm it with delays[k]
    std::vector<std::uint32_t> rids, rdelays; // re-arm: mod ids rids[k] to rdelays[k]
    std::vector<std::uint32_t> hdelays;       // hot: arm+cancel of the spare timer
};

Streams make_streams(std::size_t n, std::size_t pairs) {
    Streams s;
    s.n = n;
    Rng r(0x5eed0000ull + n);
    s.fill.resize(n);
    for (auto& d : s.fill) d = draw_delay(r);
    s.ids.resize(pairs);
    s.delays.resize(pairs);
    s.rids.resize(pairs);
    s.rdelays.resize(pairs);
    s.hdelays.resize(pairs);
    for (std::size_t k = 0; k < pairs; ++k) {
        s.ids[k] = r.below(static_cast<std::uint32_t>(n));
        s.delays[k] = draw_delay(r);
    }
    for (std::size_t k = 0; k < pairs; ++k) {
        s.rids[k] = r.below(static_cast<std::uint32_t>(n));
        s.rdelays[k] = draw_delay(r);
    }
    for (auto& d : s.hdelays) d = draw_delay(r);
    return s;
}

// TCP-retransmit-like stream. N connections, each with one timer (RTO 50..500
// ticks). A timer armed with deadline D is, with probability 0.95, touched
// before D (uniformly in [arm+1, D-1]): 75% re-armed (ACK: mod_timer to a new
// RTO), 25% cancelled (all data acked), re-armed by new data 1..100 ticks later;
// with probability 0.05 it expires at D and the retransmission re-arms it
// (RTO doubled, capped at 500) 16 ticks after D, when every queue has fired it
// (the modern wheel fires at most 8 ticks late for these delays). So every
// operation finds the timer in the same state in every queue.
struct TcpOp {
    std::uint32_t id;
    std::uint16_t delay;
    std::uint8_t kind; // 0 re-arm pending, 1 cancel pending, 2 arm idle
    std::uint8_t pad;
};
struct TcpStream {
    std::size_t n = 0;
    std::uint32_t ticks = 0;
    std::vector<std::uint32_t> fill;     // initial delay of timer i (all armed at t=0)
    std::vector<std::uint32_t> tick_off; // ops of tick t: [tick_off[t-1], tick_off[t])
    std::vector<TcpOp> ops;
    std::uint64_t expiries_in_run = 0;   // exact-deadline expiries at ticks <= ticks
    std::uint64_t pending_at_end = 0;
};

TcpStream make_tcp(std::size_t n, std::uint32_t ticks) {
    TcpStream s;
    s.n = n;
    s.ticks = ticks;
    s.fill.resize(n);
    Rng r(0x7c900000ull + n);
    struct Ev {
        std::uint32_t t;
        TcpOp op;
    };
    std::vector<std::vector<TcpOp>> by_tick(ticks + 1);
    for (std::size_t i = 0; i < n; ++i) {
        const auto id = static_cast<std::uint32_t>(i);
        std::uint32_t rto = 50 + r.below(451);
        // Steady state from the start: the timer was armed some time ago.
        std::uint32_t armed_at = 0;
        std::uint32_t deadline = 1 + r.below(rto);
        s.fill[i] = deadline;
        bool pending = true;
        for (;;) {
            if (r.unit() < 0.95 && deadline > armed_at + 1) {
                const std::uint32_t te = armed_at + 1 + r.below(deadline - armed_at - 1);
                if (te > ticks) break;
                const std::uint32_t nrto = 50 + r.below(451);
                if (r.below(4) != 0) {
                    by_tick[te].push_back({id, static_cast<std::uint16_t>(nrto), 0, 0});
                    armed_at = te;
                    deadline = te + nrto;
                } else {
                    by_tick[te].push_back({id, 0, 1, 0});
                    pending = false;
                    const std::uint32_t ta = te + 1 + r.below(100);
                    if (ta > ticks) break;
                    by_tick[ta].push_back({id, static_cast<std::uint16_t>(nrto), 2, 0});
                    pending = true;
                    armed_at = ta;
                    deadline = ta + nrto;
                }
                rto = nrto;
            } else {
                if (deadline > ticks) break; // still pending at the end
                ++s.expiries_in_run;
                pending = false;
                const std::uint32_t ta = deadline + 16;
                if (ta > ticks) break;
                rto = std::min<std::uint32_t>(2 * rto, 500);
                by_tick[ta].push_back({id, static_cast<std::uint16_t>(rto), 2, 0});
                pending = true;
                armed_at = ta;
                deadline = ta + rto;
            }
        }
        if (pending) ++s.pending_at_end;
    }
    s.tick_off.resize(ticks + 1);
    std::size_t total = 0;
    for (std::uint32_t t = 1; t <= ticks; ++t) total += by_tick[t].size();
    s.ops.reserve(total);
    s.tick_off[0] = 0;
    for (std::uint32_t t = 1; t <= ticks; ++t) {
        s.ops.insert(s.ops.end(), by_tick[t].begin(), by_tick[t].end());
        s.tick_off[t] = static_cast<std::uint32_t>(s.ops.size());
    }
    return s;
}

// ---------------------------------------------------------------- results

struct Cell {
    std::vector<double> ns;  // per round
    std::uint64_t fired = 0; // last round
    std::uint64_t hash = 0;
    std::uint64_t ticks = 0;
    bool have = false;
};
// key: workload, n, queue
std::map<std::string, std::map<std::size_t, std::map<std::string, Cell>>> g_res;
std::map<std::string, std::map<std::size_t, std::pair<double, double>>> g_bytes; // queue -> n -> (node, rss)
std::vector<std::string> g_queue_order;
bool g_failed = false;

void record(const std::string& w, std::size_t n, const char* q, double ns, std::uint64_t fired, std::uint64_t hash,
            std::uint64_t ticks) {
    Cell& c = g_res[w][n][q];
    c.ns.push_back(ns);
    if (c.have && (c.fired != fired || c.hash != hash)) {
        std::fprintf(stderr, "MISMATCH %s N=%zu %s: round-to-round fired %" PRIu64 " vs %" PRIu64 "\n", w.c_str(), n, q,
                     fired, c.fired);
        g_failed = true;
    }
    c.fired = fired;
    c.hash = hash;
    c.ticks = ticks;
    c.have = true;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Options {
    std::vector<std::size_t> sizes{1000, 100000, 1000000, 10000000};
    int rounds = 5;
    int rounds_10m = 3;
    std::vector<std::string> queues{"modern", "classic", "tsheap", "ratas", "timeout", "heap4", "seastar"};
    std::vector<std::string> workloads{"steady", "hot", "rearm", "expiry", "same", "tcp"};
    std::size_t pairs = 2000000;
    std::size_t tcp_max = 1000000;
    bool latency = false;
    std::size_t ahead = 16; // the look-ahead workloads' distance, in operations
    std::string lead = "modern"; // the queue of the ratio columns
};
Options g_opt;

bool want(const std::string& w) {
    return std::find(g_opt.workloads.begin(), g_opt.workloads.end(), w) != g_opt.workloads.end();
}

template <class F>
void require(bool ok, F&& msg) {
    if (!ok) {
        std::fprintf(stderr, "CHECK FAILED: %s\n", msg().c_str());
        g_failed = true;
    }
}

constexpr std::uint64_t kTickLimit = 1ull << 22;

// Tick until the sink has seen `target` fires; returns ticks taken.
template <class Q>
std::uint64_t drain(Q& q, std::uint64_t target, const char* what, std::size_t n) {
    std::uint64_t ticks = 0;
    while (g_sink.fired < target) {
        q.tick();
        if (++ticks > kTickLimit) {
            std::fprintf(stderr, "CHECK FAILED: %s %s N=%zu: only %" PRIu64 " of %" PRIu64 " fired after %" PRIu64
                                 " ticks\n",
                         Q::name, what, n, g_sink.fired, target, ticks);
            g_failed = true;
            break;
        }
    }
    return ticks;
}

// One queue, one round, the steady-state family on one fill.
template <class Q>
void run_main(const Streams& s, int round) {
    const std::size_t n = s.n;
    const std::size_t m = s.ids.size();
    const std::uint32_t spare = static_cast<std::uint32_t>(n);
    const std::size_t rss0 = round == 0 ? resident_bytes() : 0;
    auto q = std::make_unique<Q>(n + 1);
    for (std::size_t i = 0; i < n; ++i) q->arm(static_cast<std::uint32_t>(i), s.fill[i]);
    if (round == 0) {
        const std::size_t rss1 = resident_bytes();
        g_bytes[Q::name][n] = {static_cast<double>(Q::node_bytes),
                               rss1 > rss0 ? static_cast<double>(rss1 - rss0) / static_cast<double>(n) : 0.0};
    }
    auto pending_ok = [&](const char* w) {
        const std::size_t p = q->pending();
        require(p == n, [&] { return std::string(Q::name) + " " + w + ": pending " + std::to_string(p) + " != " +
                                     std::to_string(n); });
    };
    if (want("steady")) {
        const double t0 = cpu_now_ns();
        for (std::size_t k = 0; k < m; ++k) {
            q->cancel(s.ids[k]);
            q->arm(s.ids[k], s.delays[k]);
        }
        const double t1 = cpu_now_ns();
        record("steady", n, Q::name, (t1 - t0) / m, 0, 0, 0);
        pending_ok("steady");
    }
    if (want("steady+ahead")) {
        const std::size_t a = std::min(g_opt.ahead, m);
        for (std::size_t k = 0; k < a; ++k) q->ahead(s.ids[k]);
        const double t0 = cpu_now_ns();
        for (std::size_t k = 0; k < m; ++k) {
            if (k + a < m) q->ahead(s.ids[k + a]);
            q->cancel(s.ids[k]);
            q->arm(s.ids[k], s.delays[k]);
        }
        const double t1 = cpu_now_ns();
        record("steady+ahead", n, Q::name, (t1 - t0) / m, 0, 0, 0);
        pending_ok("steady+ahead");
    }
    if (want("hot")) {
        const double t0 = cpu_now_ns();
        for (std::size_t k = 0; k < m; ++k) {
            q->arm(spare, s.hdelays[k]);
            q->cancel(spare);
        }
        const double t1 = cpu_now_ns();
        record("hot", n, Q::name, (t1 - t0) / m, 0, 0, 0);
        pending_ok("hot");
    }
    if (want("rearm")) {
        const double t0 = cpu_now_ns();
        for (std::size_t k = 0; k < m; ++k) q->rearm(s.rids[k], s.rdelays[k]);
        const double t1 = cpu_now_ns();
        record("rearm", n, Q::name, (t1 - t0) / m, 0, 0, 0);
        pending_ok("rearm");
    }
    if (want("rearm+ahead")) {
        const std::size_t a = std::min(g_opt.ahead, m);
        for (std::size_t k = 0; k < a; ++k) q->ahead(s.rids[k]);
        const double t0 = cpu_now_ns();
        for (std::size_t k = 0; k < m; ++k) {
            if (k + a < m) q->ahead(s.rids[k + a]);
            q->rearm(s.rids[k], s.rdelays[k]);
        }
        const double t1 = cpu_now_ns();
        record("rearm+ahead", n, Q::name, (t1 - t0) / m, 0, 0, 0);
        pending_ok("rearm+ahead");
    }
    if (want("expiry") || want("same")) {
        // Spread deadlines: everything pending now (the fill's distribution,
        // re-drawn by the steady and re-arm phases) until all N fired.
        g_sink = {};
        const double t0 = cpu_now_ns();
        const std::uint64_t ticks = drain(*q, n, "expiry", n);
        const double t1 = cpu_now_ns();
        if (want("expiry")) record("expiry", n, Q::name, (t1 - t0) / n, g_sink.fired, g_sink.hash, ticks);
    }
    if (want("same")) {
        for (std::size_t i = 0; i < n; ++i) q->arm(static_cast<std::uint32_t>(i), 1000);
        g_sink = {};
        const double t0 = cpu_now_ns();
        const std::uint64_t ticks = drain(*q, n, "same", n);
        const double t1 = cpu_now_ns();
        record("same", n, Q::name, (t1 - t0) / n, g_sink.fired, g_sink.hash, ticks);
    }
}

template <class Q>
void run_tcp(const TcpStream& s) {
    auto q = std::make_unique<Q>(s.n);
    for (std::size_t i = 0; i < s.n; ++i) q->arm(static_cast<std::uint32_t>(i), s.fill[i]);
    g_sink = {};
    const double t0 = cpu_now_ns();
    const TcpOp* ops = s.ops.data();
    for (std::uint32_t t = 1; t <= s.ticks; ++t) {
        q->tick();
        for (std::uint32_t k = s.tick_off[t - 1], e = s.tick_off[t]; k < e; ++k) {
            const TcpOp& op = ops[k];
            if (op.kind == 0)
                q->rearm(op.id, op.delay);
            else if (op.kind == 1)
                q->cancel(op.id);
            else
                q->arm(op.id, op.delay);
        }
    }
    const double t1 = cpu_now_ns();
    const std::uint64_t in_run = g_sink.fired;
    drain(*q, s.expiries_in_run + s.pending_at_end, "tcp-drain", s.n);
    record("tcp", s.n, Q::name, (t1 - t0) / static_cast<double>(s.ops.size()), g_sink.fired, g_sink.hash, in_run);
    require(g_sink.fired == s.expiries_in_run + s.pending_at_end, [&] {
        return std::string(Q::name) + " tcp: fired " + std::to_string(g_sink.fired) + ", expected " +
               std::to_string(s.expiries_in_run + s.pending_at_end);
    });
}

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

// ---------------------------------------------------------------- memory latency

double chase(std::size_t bytes, bool huge, int chains, std::size_t steps) {
    const std::size_t lines = bytes / 64;
    const std::size_t sz = (lines * 64 + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    void* p = nullptr;
    if (posix_memalign(&p, 2u << 20, sz) != 0) die("posix_memalign");
    madvise(p, sz, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    auto* next = static_cast<std::uint64_t*>(p); // one index per 64-byte line, at offset 0
    std::vector<std::uint32_t> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    Rng r(12345 + bytes);
    for (std::size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[r.below(static_cast<std::uint32_t>(i + 1))]);
    for (std::size_t i = 0; i < lines; ++i) next[order[i] * 8ull] = order[(i + 1) % lines] * 8ull;
    std::uint64_t x[16];
    for (int c = 0; c < chains; ++c) x[c] = order[(lines / chains) * c] * 8ull;
    for (std::size_t i = 0; i < std::min<std::size_t>(lines, 4u << 20); ++i) x[0] = next[x[0]]; // warm
    const double t0 = cpu_now_ns();
    for (std::size_t s = 0; s < steps; ++s)
        for (int c = 0; c < chains; ++c) x[c] = next[x[c]];
    const double t1 = cpu_now_ns();
    std::uint64_t acc = 0;
    for (int c = 0; c < chains; ++c) acc += x[c];
    if (acc == 42) std::puts("");
    std::free(p);
    return (t1 - t0) / (static_cast<double>(steps) * chains);
}

void run_latency(const char* when) {
    std::printf("memory (%s): dependent-load latency, ns per load (random cycle over 64-byte lines)\n", when);
    for (std::size_t mib : {1, 4, 16, 32, 64, 256, 1024}) {
        const double l4 = chase(mib << 20, false, 1, 2000000);
        std::printf("  %5zu MiB: 4K pages %6.1f ns", mib, l4);
        if (mib >= 32) std::printf(", 2M pages %6.1f ns", chase(mib << 20, true, 1, 2000000));
        if (mib == 32 || mib == 256)
            std::printf(", 8 independent chains (4K) %5.1f ns/load, 16 chains %5.1f", chase(mib << 20, false, 8, 500000),
                        chase(mib << 20, false, 16, 250000));
        std::printf("\n");
    }
    std::fflush(stdout);
}

// ---------------------------------------------------------------- report

void print_results() {
    const char* titles[][2] = {
        {"steady", "arm+cancel, steady state: cancel a random pending timer, arm it again (ns per pair)"},
        {"hot", "arm+cancel of one idle timer with N pending (the project's own benchmark shape; ns per pair)"},
        {"rearm", "re-arm a random pending timer to a new delay, mod_timer-like (ns per call)"},
        {"steady+ahead", "steady, each queue told the timer of the pair --ahead places on (ns per pair)"},
        {"rearm+ahead", "re-arm, each queue told the timer of the call --ahead places on (ns per call)"},
        {"expiry", "expiry, spread deadlines: tick until all N fired (ns per fired timer, ticks included)"},
        {"same", "expiry, one deadline (1000 ticks) for all N (ns per fired timer)"},
        {"tcp", "TCP-retransmit-like: ticks + re-arm/cancel/arm ops, 5% expire (ns per op, ticks and fires included)"},
    };
    for (auto& t : titles) {
        auto it = g_res.find(t[0]);
        if (it == g_res.end()) continue;
        std::printf("\n### %s\n\n| N |", t[1]);
        for (auto& q : g_queue_order) std::printf(" %s |", q.c_str());
        for (auto& q : g_queue_order)
            if (q != g_opt.lead) std::printf(" %s/%s |", g_opt.lead.c_str(), q.c_str());
        std::printf("\n|---|");
        for (std::size_t i = 0; i < 2 * g_queue_order.size() - 1; ++i) std::printf("---|");
        std::printf("\n");
        for (auto& [n, byq] : it->second) {
            std::printf("| %zu |", n);
            for (auto& q : g_queue_order) {
                auto c = byq.find(q);
                if (c == byq.end()) {
                    std::printf(" - |");
                    continue;
                }
                auto v = c->second.ns;
                std::sort(v.begin(), v.end());
                std::printf(" %.1f (%.1f-%.1f) |", median(v), v.front(), v.back());
            }
            auto mod = byq.find(g_opt.lead);
            for (auto& q : g_queue_order) {
                if (q == g_opt.lead) continue;
                auto c = byq.find(q);
                if (mod == byq.end() || c == byq.end()) {
                    std::printf(" - |");
                    continue;
                }
                // per-round ratio (same round = same machine conditions), then the median
                std::vector<double> r;
                for (std::size_t i = 0; i < std::min(mod->second.ns.size(), c->second.ns.size()); ++i)
                    r.push_back(mod->second.ns[i] / c->second.ns[i]);
                std::printf(" %.2f |", median(r));
            }
            std::printf("\n");
        }
        // checks: fired counts and id hashes agree across queues
        for (auto& [n, byq] : it->second) {
            if (byq.empty() || !byq.begin()->second.fired) continue;
            const Cell& ref = byq.begin()->second;
            bool same = true;
            std::string ticks;
            for (auto& [q, c] : byq) {
                same = same && c.fired == ref.fired && c.hash == ref.hash;
                ticks += " " + q + "=" + std::to_string(c.ticks);
            }
            std::printf("check N=%zu: fired %" PRIu64 " by every queue, same ids: %s;%s%s\n", n, ref.fired,
                        same ? "yes" : "NO", std::string(t[0]) == "tcp" ? " fired during the run:" : " ticks:",
                        ticks.c_str());
            if (!same) g_failed = true;
        }
    }
    std::printf("\n### bytes per pending timer (node size; resident growth per timer during the fill)\n\n| queue |");
    std::set<std::size_t> ns;
    for (auto& [q, m] : g_bytes)
        for (auto& [n, b] : m) ns.insert(n);
    for (auto n : ns) std::printf(" RSS/timer @%zu |", n);
    std::printf(" node B |\n|---|");
    for (std::size_t i = 0; i <= ns.size(); ++i) std::printf("---|");
    std::printf("\n");
    for (auto& q : g_queue_order) {
        auto it = g_bytes.find(q);
        if (it == g_bytes.end()) continue;
        std::printf("| %s |", q.c_str());
        for (auto n : ns) {
            auto b = it->second.find(n);
            if (b == it->second.end()) std::printf(" - |");
            else std::printf(" %.1f |", b->second.second);
        }
        std::printf(" %.0f |\n", it->second.begin()->second.first);
    }
    // machine-readable lines: median ns per op; median over rounds of modern/queue
    std::printf("\n");
    for (auto& [w, byn] : g_res)
        for (auto& [n, byq] : byn) {
            for (auto& [q, c] : byq) std::printf("RESULT %s %zu %s %.2f\n", w.c_str(), n, q.c_str(), median(c.ns));
            auto mod = byq.find(g_opt.lead);
            if (mod == byq.end()) continue;
            for (auto& [q, c] : byq) {
                if (q == g_opt.lead) continue;
                std::vector<double> r;
                for (std::size_t i = 0; i < std::min(mod->second.ns.size(), c.ns.size()); ++i)
                    r.push_back(mod->second.ns[i] / c.ns[i]);
                std::printf("RATIO %s %zu %s/%s %.3f\n", w.c_str(), n, g_opt.lead.c_str(), q.c_str(), median(r));
            }
        }
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t a = 0;
    while (a <= s.size()) {
        std::size_t b = s.find(',', a);
        if (b == std::string::npos) b = s.size();
        if (b > a) out.push_back(s.substr(a, b - a));
        a = b + 1;
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) die("missing value for " + a);
            return argv[++i];
        };
        if (a == "--sizes") {
            g_opt.sizes.clear();
            for (auto& x : split(val())) g_opt.sizes.push_back(std::stoull(x));
        } else if (a == "--rounds") g_opt.rounds = std::stoi(val());
        else if (a == "--rounds-10m") g_opt.rounds_10m = std::stoi(val());
        else if (a == "--queues") g_opt.queues = split(val());
        else if (a == "--workloads") g_opt.workloads = split(val());
        else if (a == "--pairs") g_opt.pairs = std::stoull(val());
        else if (a == "--tcp-max") g_opt.tcp_max = std::stoull(val());
        else if (a == "--latency") g_opt.latency = true;
        else if (a == "--ahead") g_opt.ahead = std::stoull(val());
        else if (a == "--lead") g_opt.lead = val();
        else die("unknown option " + a);
    }
    g_queue_order = g_opt.queues;
    std::printf("peers_bench: queues %s; node bytes:", [] {
        std::string s;
        for (auto& q : g_opt.queues) s += (s.empty() ? "" : ",") + q;
        return s;
    }().c_str());
    for (auto& q : g_opt.queues) for_queue(q, [](auto* p) { std::printf(" %s=%zu", std::remove_pointer_t<decltype(p)>::name, std::remove_pointer_t<decltype(p)>::node_bytes); });
    std::printf("\n");
    {
        FILE* f = std::fopen("/proc/loadavg", "r");
        char buf[128] = {0};
        if (f && std::fgets(buf, sizeof buf, f)) std::printf("load average at start: %s", buf);
        if (f) std::fclose(f);
    }
    if (g_opt.latency) run_latency("start");
    const double wall0 = cpu_now_ns();
    for (std::size_t n : g_opt.sizes) {
        const int rounds = n >= 10000000 ? g_opt.rounds_10m : g_opt.rounds;
        const bool main_family = want("steady") || want("steady+ahead") || want("hot") || want("rearm") ||
                                 want("rearm+ahead") || want("expiry") || want("same");
        if (main_family) {
            const Streams s = make_streams(n, g_opt.pairs);
            for (int r = 0; r < rounds; ++r) {
                for (std::size_t k = 0; k < g_opt.queues.size(); ++k) {
                    const std::string& qn = g_opt.queues[(k + r) % g_opt.queues.size()]; // rotate the order
                    for_queue(qn, [&](auto* p) { run_main<std::remove_pointer_t<decltype(p)>>(s, r); });
                }
                std::fprintf(stderr, "N=%zu round %d/%d done (%.0f s CPU)\n", n, r + 1, rounds,
                             (cpu_now_ns() - wall0) / 1e9);
            }
        }
        if (want("tcp") && n <= g_opt.tcp_max) {
            // about 4M ops, and at least 1500 ticks (several RTOs)
            const std::uint32_t ticks = static_cast<std::uint32_t>(std::max<double>(1500, 4e6 * 127 / n));
            const TcpStream ts = make_tcp(n, ticks);
            std::size_t kinds[3] = {0, 0, 0};
            for (const TcpOp& o : ts.ops) ++kinds[o.kind];
            // a timer lifetime ends in a re-arm, a cancel or an expiry
            const double ends = static_cast<double>(kinds[0] + kinds[1] + ts.expiries_in_run);
            std::printf("tcp N=%zu: %u ticks, %zu ops (%zu re-arms, %zu cancels, %zu idle arms), %" PRIu64
                        " expiries in the run = %.1f%% of ended lifetimes\n",
                        n, ticks, ts.ops.size(), kinds[0], kinds[1], kinds[2], ts.expiries_in_run,
                        100.0 * ts.expiries_in_run / ends);
            for (int r = 0; r < rounds; ++r)
                for (std::size_t k = 0; k < g_opt.queues.size(); ++k) {
                    const std::string& qn = g_opt.queues[(k + r) % g_opt.queues.size()];
                    for_queue(qn, [&](auto* p) { run_tcp<std::remove_pointer_t<decltype(p)>>(ts); });
                }
            std::fprintf(stderr, "N=%zu tcp done\n", n);
        }
    }
    print_results();
    if (g_opt.latency) run_latency("end");
    if (g_failed) {
        std::printf("FAILED: queues disagree or a check failed (see stderr)\n");
        return 1;
    }
    return 0;
}
