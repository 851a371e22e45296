// peers_bench: what a run is asked for (its options), what it measures with
// (thread CPU time, resident memory), what it records per workload, size and
// queue, and how it fails (die on bad usage, require for a failed check).
// Part of peers_bench.cpp's one translation unit, included only from it and
// its parts: the anonymous namespace is the harness's own, as in one file.
#pragma once

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------- measuring

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

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "peers_bench: %s\n", msg.c_str());
    std::exit(2);
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

} // namespace
