// peers_bench: the workloads, one queue and one round at a time: the
// steady-state family on one fill (steady, hot, rearm, their look-ahead
// variants, expiry, same) and the TCP-retransmit-like stream, each timed in
// thread CPU time and recorded, with its checks.
// Part of peers_bench.cpp's one translation unit, included only from it and
// its parts: the anonymous namespace is the harness's own, as in one file.
#pragma once

#include "peers_queues.hpp"
#include "peers_results.hpp"
#include "peers_streams.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace {

// ---------------------------------------------------------------- workloads

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

} // namespace
