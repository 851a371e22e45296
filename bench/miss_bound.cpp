// What a cancel+arm pair can cost at a million pending timers, whatever the
// queue: the memory patterns of the intrusive-list wheels, without a wheel.
// docs/performance.md ("The blind pair and its floor") reads
// these figures next to peers_bench's.
//
//   timersim_bench_miss_bound [NODES] [OPS]     (default 1000000 4000000)
//
// Each loop visits OPS random nodes of NODES 32-byte nodes (2 MiB pages, as
// TimerPool does), the handles read from an array, so one visit never waits
// on the previous one: the CPU may overlap as many misses as its window
// holds. Patterns:
//   node          read-modify-write of the node only
//   node+2        and write both list neighbours named by the node (an
//                 intrusive doubly linked list's unlink: every list wheel)
//   node+1array   and write one 4-byte entry of a handle array named by
//                 the node (a tombstone in a bucket array)
//   node+2 +N     node+2 with N more independent ALU instructions per visit
//                 (4 chains), standing in for a queue's bookkeeping between
//                 its misses: how the window limits the overlap
// Prints ns per visit (process CPU time), best of 3 runs of each.
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace {

struct Node {
    std::uint32_t next, prev;
    std::uint64_t a, b, c;
};

double cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// N filler instructions in 4 independent chains.
template <int N>
inline void filler() {
    for (int j = 0; j < N / 4; ++j)
        asm volatile("add $1, %%r8\n\tadd $1, %%r9\n\tadd $1, %%r10\n\tadd $1, %%r11" ::: "r8", "r9", "r10", "r11");
}

template <int Pattern, int Filler>
[[gnu::noinline]] double visit(Node* v, std::uint32_t* array, std::size_t array_size, const std::vector<std::uint32_t>& ids) {
    const double t0 = cpu_ns();
    for (const std::uint32_t id : ids) {
        Node& x = v[id];
        if constexpr (Pattern == 1) {
            v[x.next].prev = x.prev;
            v[x.prev].next = x.next;
        } else if constexpr (Pattern == 2) {
            array[x.next % array_size] = 0;
        }
        x.a += 1;
        filler<Filler>();
    }
    return (cpu_ns() - t0) / static_cast<double>(ids.size());
}

template <int Pattern, int Filler>
void report(const char* name, Node* v, std::uint32_t* array, std::size_t array_size, const std::vector<std::uint32_t>& ids) {
    double best = 1e300;
    for (int r = 0; r < 3; ++r) best = std::min(best, visit<Pattern, Filler>(v, array, array_size, ids));
    std::printf("%-14s %7.1f ns\n", name, best);
}

} // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::stoull(argv[1]) : 1000000;
    const std::size_t ops = argc > 2 ? std::stoull(argv[2]) : 4000000;
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t bytes = (n * sizeof(Node) + kHuge - 1) / kHuge * kHuge;
    auto* v = static_cast<Node*>(std::aligned_alloc(kHuge, bytes));
    if (v == nullptr) return 1;
    ::madvise(v, bytes, MADV_HUGEPAGE);
    std::uint64_t s = 88172645463325252ull;
    auto rnd = [&] {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    for (std::size_t i = 0; i < n; ++i) v[i] = Node{static_cast<std::uint32_t>(rnd() % n), static_cast<std::uint32_t>(rnd() % n), i, 0, 0};
    std::vector<std::uint32_t> ids(ops);
    for (auto& id : ids) id = static_cast<std::uint32_t>(rnd() % n);
    std::vector<std::uint32_t> array(2 * n); // a bucket array with room for as many tombstones
    std::printf("%zu nodes of %zu bytes, %zu visits\n", n, sizeof(Node), ops);
    report<0, 0>("node", v, array.data(), array.size(), ids);
    report<1, 0>("node+2", v, array.data(), array.size(), ids);
    report<2, 0>("node+1array", v, array.data(), array.size(), ids);
    report<1, 24>("node+2 +24", v, array.data(), array.size(), ids);
    report<1, 48>("node+2 +48", v, array.data(), array.size(), ids);
    report<1, 96>("node+2 +96", v, array.data(), array.size(), ids);
    std::free(v);
    return 0;
}
