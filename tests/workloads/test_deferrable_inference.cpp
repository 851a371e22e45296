// Deferrable timers of a kernel before 4.2, whose timer_start prints no
// flags, inferred from their late fires (deferrable_inference.hpp): the
// observer's rule on single events, then a 3.6-format trace through the
// first pass and the importer. Expected values follow from the lines
// written here and 3.6's NOHZ rule the header cites.
#include "workloads/traces/kernel/deferrable_inference.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace timersim;

namespace {

constexpr Jiffies kJ = 4294937296u;

FtraceEvent start(std::uint64_t timer, Jiffies at, std::int64_t timeout, bool flags_known = false) {
    FtraceEvent e;
    e.type = FtraceEventType::timer_start;
    e.timer = timer;
    e.expires = at + static_cast<Jiffies>(timeout);
    e.timeout = timeout;
    e.flags_known = flags_known;
    return e;
}

FtraceEvent entry(std::uint64_t timer, Jiffies now) {
    FtraceEvent e;
    e.type = FtraceEventType::timer_expire_entry;
    e.timer = timer;
    e.now = now;
    return e;
}

} // namespace

TEST_CASE("a timer without flags that fired two or more jiffies after due is inferred deferrable") {
    DeferrableInference late;
    late.timer_event(start(1, kJ, 10));      // due kJ+10
    late.timer_event(entry(1, kJ + 11));     // one late: a ticking CPU's ksoftirqd can do that
    late.timer_event(start(2, kJ, 10));
    late.timer_event(entry(2, kJ + 12));     // two late: slept past it
    late.timer_event(start(3, kJ, -5));      // expires had passed: due at the call, kJ
    late.timer_event(entry(3, kJ + 1));
    late.timer_event(start(4, kJ, -5));
    late.timer_event(entry(4, kJ + 2));
    late.timer_event(start(5, kJ, 10, true)); // flags= printed: the trace shows them, nothing to infer
    late.timer_event(entry(5, kJ + 40));
    late.timer_event(entry(6, kJ + 40));     // armed before the trace: its due jiffy is unknown
    CHECK(late.timers() == std::vector<std::uint64_t>{2, 4});
}

TEST_CASE("only a fire after a start counts: a second fire of the same start is not compared with it") {
    DeferrableInference late;
    late.timer_event(start(7, kJ, 3));
    late.timer_event(entry(7, kJ + 3));  // on time
    late.timer_event(entry(7, kJ + 50)); // no start between: not measured against kJ+3
    CHECK(late.timers().empty());
    late.timer_event(start(7, kJ + 50, 3));
    late.timer_event(entry(7, kJ + 60));
    CHECK(late.timers() == std::vector<std::uint64_t>{7});
}

TEST_CASE("a 3.6 trace's late timer is armed deferrable by the importer, its others not") {
    const std::string text =
        "# kernel: 3.6.11\n"
        "# hz=250\n"
        "  <idle>-0 [000] d.s1 1.000000: timer_start: timer=ffff880000001000 function=poll_fn "
        "expires=4294937297 [timeout=1]\n"
        "  <idle>-0 [000] d.s1 1.000010: timer_start: timer=ffff880000002000 function=vmstat_update "
        "expires=4294937306 [timeout=10]\n"
        "  <idle>-0 [000] ..s1 1.004000: timer_expire_entry: timer=ffff880000001000 function=poll_fn "
        "now=4294937297\n"
        "  <idle>-0 [000] ..s1 1.120000: timer_expire_entry: timer=ffff880000002000 function=vmstat_update "
        "now=4294937326\n";
    HzResolution resolved = resolve_ftrace_hz(text, "in.txt", HzChoice{});
    REQUIRE(resolved.late_fired_timers == std::vector<std::uint64_t>{0xffff880000002000});
    SUBCASE("validate's pass (HzPassExtras::none) leaves them out, and decides the same HZ") {
        const HzResolution bare = resolve_ftrace_hz(text, "in.txt", HzChoice{}, HzPassExtras::none);
        CHECK(bare.late_fired_timers.empty());
        CHECK(bare.hz == resolved.hz);
        CHECK(bare.source == resolved.source);
        CHECK(bare.timer_events == resolved.timer_events);
        CHECK(bare.clock_samples.size() == resolved.clock_samples.size());
    }
    for (const bool infer : {true, false}) {
        CAPTURE(infer);
        std::istringstream in(text);
        FtraceReader reader(in, "in.txt", std::nullopt);
        FtraceImporter importer(reader);
        if (infer) importer.infer_deferrable(resolved.late_fired_timers);
        std::vector<bool> deferrable;
        TraceEvent e;
        while (importer.next(e))
            if (e.kind == TraceEventKind::arm) deferrable.push_back(e.flags.deferrable);
        CHECK(deferrable == std::vector<bool>{false, infer});
        CHECK(importer.stats().inferred_deferrable_arms == (infer ? 1u : 0u));
    }
}
