// peers_bench: the random operation streams every queue is given, and the
// network-timeout-like delay mix they draw from. Drawn from fixed seeds
// before any timing, so every queue sees the same operations.
// Part of peers_bench.cpp's one translation unit, included only from it and
// its parts: the anonymous namespace is the harness's own, as in one file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

// ---------------------------------------------------------------- random stream

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

} // namespace
