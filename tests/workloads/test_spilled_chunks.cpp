// SpilledChunks (workloads/traces/kernel/spilled_chunks.hpp): a list whose
// older chunks go to a temporary file reads back as it was written, and the
// kernel's fires a collector spills are the fires it would have kept.
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/kernel/spilled_chunks.hpp"

#include "tests/xorshift_draw.hpp"

#include <doctest/doctest.h>

#include <sys/resource.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace timersim;

namespace {

std::vector<std::uint64_t> all(const SpilledChunks<std::uint64_t>& s) {
    std::vector<std::uint64_t> out;
    for (const std::uint64_t v : s) out.push_back(v);
    return out;
}

} // namespace

TEST_CASE("spilled chunks read back in order, and only chunks before the kept mark go") {
    auto s = SpilledChunks<std::uint64_t>::with_chunks(3, 2); // 8 a chunk, 2 in memory
    std::vector<std::uint64_t> expected;
    for (std::uint64_t i = 0; i < 100; ++i) {
        s.push_back(i * 7);
        expected.push_back(i * 7);
        if (s.size() % 8 == 0) s.spill_before(s.size() >= 30 ? 30 : s.size(), "t.trace");
    }
    // Chunks 0-2 end before element 30 and may go; chunk 3 holds it.
    CHECK(s.spilled() == 24);
    s.spill_before(s.size(), "t.trace");
    CHECK(s.spilled() == 88); // 13 chunks (the last partly full): all but the last two
    CHECK(all(s) == expected);
    CHECK_THROWS_AS(s[3], std::logic_error);
    CHECK(s[99] == 99 * 7);

    // Changed where they are: in the file (two in one chunk, one in
    // another), or in memory.
    const std::vector<std::pair<std::size_t, std::uint64_t>> changes = {{3, 1}, {5, 2}, {40, 3}, {99, 4}};
    s.update_sorted(changes.begin(), changes.end(),
                    [](std::uint64_t& v, const std::pair<std::size_t, std::uint64_t>& c) { v = c.second; });
    for (const auto& [i, v] : changes) expected[i] = v;
    CHECK(all(s) == expected);

    // Two iterations at once each read their own chunk back.
    auto a = s.begin(), b = s.begin();
    for (int i = 0; i < 9; ++i) ++b;
    CHECK(*a == 0);
    CHECK(*b == 9 * 7);
    CHECK(*a == 0);

    // Moved, the file goes with it.
    const SpilledChunks<std::uint64_t> moved = std::move(s);
    CHECK(moved.spilled() == 88);
    CHECK(all(moved) == expected);
    CHECK(s.empty());
}

TEST_CASE("chunks that cannot be spilled name the input and the directory") {
    const char* old = std::getenv("TMPDIR");
    const std::string kept = old ? old : "";
    ::setenv("TMPDIR", "/nonexistent-timersim-dir", 1);
    auto s = SpilledChunks<std::uint64_t>::with_chunks(1, 1);
    for (std::uint64_t i = 0; i < 8; ++i) s.push_back(i);
    std::string what;
    try {
        s.spill_before(8, "big.trace");
    } catch (const InputError& e) {
        what = e.what();
    }
    if (old) ::setenv("TMPDIR", kept.c_str(), 1);
    else ::unsetenv("TMPDIR");
    CHECK(what.starts_with("big.trace: cannot make a file for the kernel's fires in /nonexistent-timersim-dir ("));
    CHECK(s.spilled() == 0); // nothing lost: still in memory
    CHECK(all(s) == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

// A file that stops taking bytes (a full disk; here the process's file
// size limit, with SIGXFSZ ignored so that write() fails with EFBIG):
// the spill fails naming the input, and nothing is lost.
TEST_CASE("chunks that cannot be written name the input, and stay in memory") {
    auto s = SpilledChunks<std::uint64_t>::with_chunks(1, 1); // 2 a chunk (16 bytes)
    for (std::uint64_t i = 0; i < 8; ++i) s.push_back(i);
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 16; // the first chunk fits, the second does not
    std::string what;
    if (::setrlimit(RLIMIT_FSIZE, &small) == 0) {
        try {
            s.spill_before(8, "big.trace");
        } catch (const InputError& e) {
            what = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &old); // before anything prints
    }
    std::signal(SIGXFSZ, old_handler);
    CHECK(what.starts_with("big.trace: cannot write the kernel's fires to a file in "));
    CHECK(s.spilled() == 2); // the first chunk went, the second did not
    CHECK(all(s) == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

namespace {

FtraceEvent timer_line(FtraceEventType type, std::uint64_t t, std::uint32_t cpu, std::uint64_t timer,
                       std::optional<Jiffies> now = std::nullopt) {
    FtraceEvent e;
    e.type = type;
    e.timestamp_ns = t;
    e.line_cpu = cpu;
    e.timer = timer;
    e.now = now;
    if (now) e.baseclk = *now - (timer % 3);
    return e;
}

struct FireFields {
    std::uint64_t timer;
    Jiffies now;
    std::uint32_t cpu;
    std::optional<std::uint64_t> callback;
    std::optional<Jiffies> next, baseclk;
    friend bool operator==(const FireFields&, const FireFields&) = default;
};

std::vector<FireFields> fields(const KernelFires& fires) {
    std::vector<FireFields> out;
    for (const KernelFire& f : fires)
        out.push_back({f.timer, f.now, f.cpu, f.callback_ns(), f.next_in_run(), f.baseclk()});
    return out;
}

} // namespace

// The collector changes a fire after it is added (its exit's callback
// length, the next fire of its run): it spills only what it is done with.
TEST_CASE("the fires a collector spills are those it keeps in memory") {
    KernelFireCollector kept, spilled;
    spilled.spill_to_file("t.trace", 2, 1); // 4 a chunk, 1 in memory
    testing::XorshiftDraw draw{0x2545F4914F6CDD1Dull};
    std::uint64_t t = 1'000'000;
    Jiffies now = 1000;
    std::vector<std::optional<std::uint64_t>> open(2); // by CPU: the timer whose callback runs
    for (int i = 0; i < 3000; ++i) {
        t += 1 + draw(50'000);
        if (draw(10) == 0) ++now;
        const auto cpu = static_cast<std::uint32_t>(draw(2));
        FtraceEvent e;
        // CPU 1 leaves a callback open for long stretches (no exit): its
        // fire stays in memory while CPU 0's go to the file.
        if (open[cpu] && (cpu == 0 || draw(200) == 0)) {
            e = timer_line(FtraceEventType::timer_expire_exit, t, cpu, *open[cpu]);
            open[cpu].reset();
        } else if (draw(4) == 0) {
            e = timer_line(FtraceEventType::timer_cancel, t, cpu, draw(30));
        } else {
            const std::uint64_t timer = draw(30);
            e = timer_line(FtraceEventType::timer_expire_entry, t, cpu, timer, now);
            open[cpu] = timer;
        }
        kept.timer_event(e);
        spilled.timer_event(e);
    }
    const KernelFires a = kept.take_fires(), b = spilled.take_fires();
    CHECK(a.size() > 1000);
    CHECK(b.spilled() > 500);
    CHECK(fields(a) == fields(b));
}
