// The kernel event stream (workloads/traces/kernel/kernel_event_stream.hpp),
// the one reading of a kernel trace that validate and the import share: what
// it hands out and how it reads a cancel, and the import's output read
// through it (which line an event came from, where its jiffies start, which
// cancel a requeue is).
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/kernel_event_stream.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace timersim;

namespace {

// An ftrace line around `body` ("timer_start: timer=...").
std::string line(const std::string& time, const std::string& body, int cpu = 1) {
    char prefix[64];
    std::snprintf(prefix, sizeof prefix, "          <idle>-0       [%03d] ..s1.  ", cpu);
    return prefix + time + ": " + body + "\n";
}

std::string start(const std::string& timer, const std::string& expires, int timeout, int cpu, int idx) {
    return "timer_start: timer=" + timer + " function=f" + timer + " expires=" + expires + " [timeout=" +
           std::to_string(timeout) + "] cpu=" + std::to_string(cpu) + " idx=" + std::to_string(idx) + " flags=";
}

// What the import gives for `text` (no clock: times from the first event):
// each event's kind and the line it came from, and the header.
struct Imported {
    std::vector<std::pair<TraceEventKind, std::uint64_t>> events;
    TraceHeader header;
};
Imported import(const std::string& text) {
    std::istringstream in(text);
    FtraceReader reader(in, "in.txt", 250);
    FtraceImporter importer(reader);
    Imported out;
    TraceEvent e;
    while (importer.next(e)) out.events.emplace_back(e.kind, importer.line());
    out.header = importer.header();
    return out;
}

// Counts what an observer of the reader sees.
struct LineCounter final : FtraceObserver {
    void timer_event(const FtraceEvent&) override { ++timer_events; }
    void timer_softirq(const FtraceTimerSoftirq&) override {}
    void other_line(std::uint64_t, std::string_view text) override { others.emplace_back(text); }
    std::uint64_t timer_events = 0;
    std::vector<std::string> others;
};

} // namespace

TEST_CASE("the kernel event stream reads each cancel by its window and passes every line on") {
    const std::string start_a = "timer_start: timer=a function=f expires=4294967400 [timeout=100] cpu=1 idx=5 flags=";
    const std::string moved_a = "timer_start: timer=a function=f expires=4294967600 [timeout=300] cpu=1 idx=9 flags=";
    const std::string entry_a = "timer_expire_entry: timer=a function=f now=4294967600 baseclk=4294967600";
    const std::string start_b =
        "timer_start: timer=b function=g [nf_conntrack] expires=4294967500 [timeout=200] cpu=0 idx=2 flags=I";
    const std::string text = line("1.000000", start_a) + line("1.000100", "timer_cancel: timer=a") +
                             line("1.000200", moved_a) + line("1.000300", start_b, 0) +
                             "CPU:0 [LOST 3 EVENTS]\n" + line("1.800000", "timer_cancel: timer=a") +
                             line("1.800100", "timer_cancel: timer=b", 0) + line("1.810000", entry_a) +
                             line("1.900000", "timer_start: timer=c function=f expires=4294967700 "
                                              "[timeout=300] cpu=0 idx=9 flags=",
                                  0);
    std::istringstream in(text);
    FtraceReader reader(in, "in.txt", 250);
    LineCounter seen;
    IncarnationSlots slots;
    KernelEventStream stream(reader, KernelStreamOptions{.file = "in.txt", .also = &seen}, slots);
    std::vector<CancelMeaning> meanings;
    std::vector<unsigned> lost_cpus;
    std::vector<std::uint64_t> lines;
    while (KernelEvent* e = stream.next()) {
        lines.push_back(e->line);
        stream.take_markers_before(e->line, [&](const LostMarker& m) { lost_cpus.push_back(m.cpu); });
        if (e->type == FtraceEventType::timer_cancel) meanings.push_back(stream.cancel_meaning(*e));
        if (e->timer == 0xb && e->type == FtraceEventType::timer_start) {
            CHECK(stream.functions()[e->function] == "g");
            REQUIRE(e->module != kNoFunction);
            CHECK(stream.modules()[e->module] == "nf_conntrack");
            CHECK(bool{e->irqsafe});
            CHECK(bool{e->flags_known});
        }
    }
    // a moved to another idx (a requeue), a's detach before its expiry
    // (other CPUs' lines between), b's del_timer().
    CHECK(meanings == std::vector{CancelMeaning::requeue, CancelMeaning::expiry_detach, CancelMeaning::del_timer});
    // In print order, each once; the lost marker before the event after it.
    CHECK(lines == std::vector<std::uint64_t>{1, 2, 3, 4, 6, 7, 8, 9});
    CHECK(lost_cpus == std::vector<unsigned>{0});
    CHECK(stream.ended());
    CHECK(stream.counts().events == 8);
    CHECK(stream.counts().timers == 3);
    // The observer given sees every line through the stream.
    CHECK(seen.timer_events == 8);
    REQUIRE(seen.others.size() == 1);
    CHECK(seen.others[0] == "CPU:0 [LOST 3 EVENTS]");
}


TEST_CASE("a cancel is a requeue only if its timer's next event is also its CPU's next") {
    using enum TraceEventKind;
    // mod_timer()'s two lines are traced under the timer's base lock: no
    // other CPU's event of the timer comes between them. Here CPU 3 starts
    // e between CPU 0's cancel and start: a cancel, an arm, then a start of
    // a pending timer (a modify).
    const std::string other_cpu_between = line("1.001000", start("e", "4294967400", 100, 0, 2), 0) +
                                          line("1.002000", "timer_cancel: timer=e", 0) +
                                          line("1.002000", start("e", "4294967420", 120, 3, 4), 3) +
                                          line("1.002001", start("e", "4294967450", 150, 0, 3), 0);
    const Imported got = import(other_cpu_between);
    CHECK(got.events == std::vector<std::pair<TraceEventKind, std::uint64_t>>{{arm, 1}, {cancel, 2}, {arm, 3},
                                                                             {modify, 4}});
    // Without CPU 3's line it is one: a modify, from the start's line.
    const std::string requeue = line("1.001000", start("e", "4294967400", 100, 0, 2), 0) +
                                line("1.002000", "timer_cancel: timer=e", 0) +
                                line("1.002001", start("e", "4294967450", 150, 0, 3), 0);
    CHECK(import(requeue).events ==
          std::vector<std::pair<TraceEventKind, std::uint64_t>>{{arm, 1}, {modify, 3}});
}

TEST_CASE("the import's start jiffies come from the first event read that shows them") {
    // A's cancel goes out first (as a requeue, with its start's jiffies,
    // 301), but c's start was read before a's: 300.
    const std::string text = line("1.001005", "timer_cancel: timer=a", 0) +
                             line("1.002610", start("c", "4294967328", 28, 1, 2), 1) +
                             line("1.004561", start("a", "4294967335", 34, 0, 2), 0);
    CHECK(import(text).header.start_jiffies == Jiffies{4'294'967'300});
}
