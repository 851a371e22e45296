// validate's replay keeps memory bounded by the trace's live timers, not by
// its length (sim/validate/replay_input.hpp): replaying ten times the
// events, and ten times the timer objects, allocates no more at its peak
// than a fixed margin over the shorter replay. Bytes are counted by this
// suite's own operator new (allocated and not yet freed, and the peak of
// that), not by time or the process's resident size.
#include "sim/validate/kernel_replay.hpp"
#include "wheel/kernel/modern_levels.hpp"

#include "tests/kernel_trace_lines.hpp"

#include <doctest/doctest.h>

#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

namespace {

std::size_t g_live = 0; // bytes allocated by operator new, not yet freed
std::size_t g_peak = 0;

void* counted(std::size_t n) {
    void* p = std::malloc(n == 0 ? 1 : n);
    if (!p) throw std::bad_alloc();
    g_live += malloc_usable_size(p);
    if (g_live > g_peak) g_peak = g_live;
    return p;
}

void uncounted(void* p) noexcept {
    if (!p) return;
    g_live -= malloc_usable_size(p);
    std::free(p);
}

} // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t) noexcept { uncounted(p); }

using namespace timersim;
using namespace timersim::test;

namespace {

// Cycle i of a trace on one CPU, at HZ=250 (4 ms a jiffy): its time, one
// of 64 timer addresses, the jiffies at its start.
struct Cycle {
    std::uint64_t us;
    std::string timer;
    Jiffies jiffies;
};
Cycle cycle(std::uint64_t i, Jiffies jiffies_per_cycle) {
    return Cycle{1'000'000 + 4'000 * jiffies_per_cycle * i, fmt::format("{:x}", 0x1000 + i % 64),
                 4'294'937'296 + jiffies_per_cycle * i};
}

// `cycles` timer objects, each armed and deleted: a timer_init (a new
// object; the address's previous one ends), a timer_start with the idx 6.1
// computes, a timer_cancel.
std::string objects_trace(std::uint64_t cycles) {
    std::string t = kHz250;
    for (std::uint64_t i = 0; i < cycles; ++i) {
        const Cycle c = cycle(i, 1);
        const Jiffies expires = c.jiffies + 10 + i % 1000;
        const unsigned idx = modern::calc_wheel_index(expires, c.jiffies, modern::depth_for_hz(250)).idx;
        t += init(0, c.us, c.timer) + start(0, c.us + 1, c.timer, "process_timeout", expires, expires - c.jiffies, idx) +
             cancel(0, c.us + 2, c.timer);
    }
    return t;
}

struct Measured {
    ReplayResult result;
    std::size_t peak = 0; // bytes the replay allocated at its peak, over what was allocated before it
};

Measured replay_measured(const std::string& text) {
    const std::size_t before = g_live;
    g_peak = before;
    Measured m;
    m.result = replay_kernel_trace(text, "objects");
    m.peak = g_peak - before;
    return m;
}

} // namespace

TEST_CASE("ten times the events and timer objects: the same peak of allocated bytes, within 64 KiB") {
    const std::string shorter = objects_trace(4'000);
    const std::string longer = objects_trace(40'000);
    const Measured a = replay_measured(shorter);
    const Measured b = replay_measured(longer);
    // Both replays agree on every idx and apply every delete: the objects
    // whose numbers serve again start afresh.
    CHECK(a.result.idx.agree == 4'000);
    CHECK(b.result.idx.agree == 40'000);
    CHECK(b.result.idx.disagree == 0);
    CHECK(b.result.kernel_deletes == 40'000);
    CHECK(b.result.notes.empty());
    CHECK(b.result.timers == 64);
    // Kept for every event, 36,000 more events would be megabytes (80
    // bytes an event, about 100 a timer object).
    CHECK(a.peak > 0);
    CHECK(b.peak <= a.peak + 64 * 1024);
    MESSAGE("peak allocated: ", a.peak, " bytes for 12,000 events, ", b.peak, " for 120,000");
}

namespace {

// `cycles` timers that fire, each callback making a new timer object of its
// own timer= (a timer_init inside the callback, between timer_expire_entry
// and timer_expire_exit): the object that ends is the one whose callback
// runs, so a sweep of ended objects right after that init must keep it.
std::string callbacks_trace(std::uint64_t cycles) {
    std::string t = kHz250;
    for (std::uint64_t i = 0; i < cycles; ++i) {
        // Armed for the next jiffy, in the bucket of the one after (6.1
        // calc_index() rounds up), which runs 8 ms later.
        const Cycle c = cycle(i, 3);
        const modern::WheelIndex at = modern::calc_wheel_index(c.jiffies + 1, c.jiffies, modern::depth_for_hz(250));
        t += init(0, c.us, c.timer) + start(0, c.us + 1, c.timer, "process_timeout", c.jiffies + 1, 1, at.idx) +
             cancel(0, c.us + 8'000, c.timer) +
             expire_entry(0, c.us + 8'001, c.timer, "process_timeout", at.bucket_expiry, at.bucket_expiry) +
             init(0, c.us + 8'002, c.timer) + expire_exit(0, c.us + 8'003, c.timer);
    }
    return t;
}

} // namespace

TEST_CASE("a timer object whose callback runs is kept when its number could serve again") {
    // 3,000 objects end, a sweep at least every 1,024: each right after an
    // init inside a callback.
    const Measured m = replay_measured(callbacks_trace(3'000));
    CHECK(m.result.idx.agree == 3'000);
    CHECK(m.result.expiry.agree == 3'000);
    CHECK(m.result.expiry.disagree == 0);
    // A freed object would lose its timer=: its timer_expire_exit would end
    // no callback, and the next expiry would note a missing one.
    CHECK(m.result.notes_by_class.empty());
    CHECK(m.result.model_fires == 0);
}
