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
//
// One translation unit in five files, beside each other: the operation
// streams (peers_streams.hpp), the options, measurements and results
// (peers_results.hpp), the queue adapters (peers_queues.hpp), the workloads
// (peers_workloads.hpp), and here the memory-latency probe, the report and
// main(). The parts are included by their own names, not from the include
// root, so they always come from this tree, whichever checkout's wheel/
// build.sh compiles the harness against.

#include "peers_queues.hpp"
#include "peers_results.hpp"
#include "peers_streams.hpp"
#include "peers_workloads.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

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
