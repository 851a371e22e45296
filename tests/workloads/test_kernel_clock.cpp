// The kernel's clock through a trace (kernel_clock.hpp): jiffies fitted from
// every sample, and replay times that land each event on the jiffy the
// kernel was at. The last case checks the committed captures end to end:
// every arm a kernel trace source gives lands, on the machine's tick grid,
// on the jiffies its timer_start printed (know=, expires - timeout).
#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/replay/trace_source.hpp"

#include "test_data_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace timersim;

namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kUs = 1'000;

} // namespace

TEST_CASE("jiffies between samples advance at HZ, never past the next sample") {
    // HZ=250 (4 ms a tick); jiffies ran ahead of time: +5 over 8 ms.
    const KernelClock clock({{100 * kMs, 1000}, {108 * kMs, 1005}}, 250);
    CHECK(clock.jiffies_at(100 * kMs) == 1000);
    CHECK(clock.jiffies_at(103 * kMs) == 1000);
    CHECK(clock.jiffies_at(104 * kMs) == 1001);
    CHECK(clock.jiffies_at(107 * kMs) == 1001); // at most the next sample's, at HZ from the last
    CHECK(clock.jiffies_at(108 * kMs) == 1005); // the sample itself
    CHECK(clock.jiffies_at(120 * kMs) == 1008); // after the last: at HZ
    CHECK(clock.jiffies_at(96 * kMs) == 999);   // before the first: back at HZ
}

TEST_CASE("samples printed out of order never make jiffies go back") {
    // CPU skew: a later timestamp with a smaller jiffies value.
    const KernelClock clock({{10 * kMs, 500}, {9 * kMs, 503}, {11 * kMs, 501}}, 1000);
    Jiffies last = 0;
    for (std::uint64_t t = 8 * kMs; t < 14 * kMs; t += kMs / 4) {
        const Jiffies j = clock.jiffies_at(t);
        CHECK(j >= last);
        last = j;
    }
    CHECK(clock.jiffies_at(11 * kMs) == 503);
}

TEST_CASE("clock samples keep the ends of each run of equal jiffies, and the clock says the same at every time") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 20; ++round) {
        CAPTURE(round);
        // HZ=250, several events a jiffy, some printed a little out of order,
        // jiffies now and then a tick ahead of or behind the line; a fifth of
        // them at the timestamp of the event before (events of two CPUs in
        // one microsecond), with jiffies of their own.
        std::vector<JiffiesSample> all;
        std::uint64_t t = 50 * kMs;
        for (int i = 0; i < 3000; ++i) {
            if (rng() % 5 != 0) t += rng() % (3 * kMs);
            const std::uint64_t printed = t - std::min<std::uint64_t>(t, rng() % 4 == 0 ? rng() % kMs : 0);
            const Jiffies j = 1'000'000 + printed / (4 * kMs) + (rng() % 16 == 0 ? 1 : 0) - (rng() % 16 == 0 ? 1 : 0);
            all.push_back({printed, j});
        }
        const std::vector<JiffiesSample> kept = clock_samples(all);
        CHECK(kept.size() < all.size());
        for (std::size_t i = 2; i < kept.size(); ++i)
            CHECK_FALSE((kept[i].jiffies == kept[i - 1].jiffies && kept[i - 1].jiffies == kept[i - 2].jiffies));
        const KernelClock whole(all, 250), compact(kept, 250);
        for (std::uint64_t at = 40 * kMs; at < t + 20 * kMs; at += kMs / 7) {
            CAPTURE(at);
            REQUIRE(compact.jiffies_at(at) == whole.jiffies_at(at));
        }
        // At every sample's own timestamp, and a nanosecond either side.
        for (const JiffiesSample& s : all) {
            for (const std::uint64_t at : {s.time_ns - 1, s.time_ns, s.time_ns + 1}) {
                CAPTURE(at);
                REQUIRE(compact.jiffies_at(at) == whole.jiffies_at(at));
            }
        }
    }
}

TEST_CASE("replay times land each event on its jiffy, in order, an eighth of the way into the jiffy's tick") {
    const KernelClock clock({{100 * kMs, 1000}, {104 * kMs, 1003}, {110 * kMs, 1004}}, 250);
    ReplayTimes times(clock, 100 * kMs);
    CHECK(times.start_jiffies() == 1000);
    const auto jiffy_of = [](std::uint64_t replay_ns) { return 1000 + replay_ns / (4 * kMs); };
    const std::uint64_t a = times.next(100 * kMs);
    const std::uint64_t b = times.next(101 * kMs); // same jiffy: spaced as in the trace
    const std::uint64_t c = times.next(104 * kMs); // jiffies jumped by 3
    const std::uint64_t d = times.next(104 * kMs + 10, 1004); // its own jiffies win over the fit
    const std::uint64_t e = times.next(104 * kMs + 20);       // never back to an earlier jiffy
    CHECK(a == kMs / 2);
    CHECK(b == kMs / 2 + kMs);
    CHECK(jiffy_of(c) == 1003);
    CHECK(c == 3 * 4 * kMs + kMs / 2);
    CHECK(jiffy_of(d) == 1004);
    CHECK(jiffy_of(e) == 1004);
    CHECK((a < b && b < c && c < d && d <= e));
}

TEST_CASE("replay times keep a busy jiffy's spacing: 2.8 ms of events in a 4 ms tick are not squeezed") {
    // The 6.1 capture's jiffy 4294896531 spans 2.8 ms; its last two events
    // (a CPU's softirq run, another CPU's re-arm 0.33 ms later) must stay
    // apart as traced, not meet at the spacing's limit 1 ns apart.
    const KernelClock clock({{100 * kMs, 1000}}, 250);
    ReplayTimes times(clock, 100 * kMs);
    const std::uint64_t first = times.next(100 * kMs);
    const std::uint64_t run = times.next(100 * kMs + 2480 * kUs);
    const std::uint64_t rearm = times.next(100 * kMs + 2810 * kUs);
    CHECK(run - first == 2480 * kUs);
    CHECK(rearm - run == 330 * kUs);
    CHECK(rearm / (4 * kMs) == 0); // still in the jiffy's tick
}

TEST_CASE("the committed captures: every replayed arm lands on the jiffies its timer_start printed") {
    for (const char* name : {"capture-6.1-hz250.trace.xz", "capture-6.1-hz250-softirq.trace.xz"}) {
        INFO(std::string(name));
        InputFile in((std::filesystem::path(TEST_DATA_DIR) / "kernel" / name).string());
        const auto source = open_trace_source(in, TraceKind::ftrace, HzChoice{});
        const TraceHeader header = source->header();
        TraceEvent e;
        std::uint64_t arms = 0;
        std::uint64_t last = 0;
        while (source->next(e)) {
            CHECK(e.time_ns >= last);
            last = e.time_ns;
            if (e.kind == TraceEventKind::cancel || !e.know) continue;
            ++arms;
            CHECK(jiffies_at(header, e.time_ns) == *e.know);
        }
        CHECK(arms > 800); // 2273 and 856 timer_start lines
    }
}
