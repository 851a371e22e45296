// Import of kernel ftrace text (FtraceReader, FtraceImporter): every line
// format the kernel and trace-cmd print, the kernel's tracing habits turned
// back into arm/modify/cancel (tests/data/ftrace/), and the malformed inputs of
// tests/data/bad-ftrace/.
#include "workloads/traces/kernel/cancel_meaning.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"

#include "test_data_dir.hpp"
#include "tests/error_corpus.hpp"
#include "tests/xz_fixture.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace timersim;

namespace {

const std::filesystem::path kData = TEST_DATA_DIR;

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The trace v1 text an import of `text` writes (no comment line). The
// importer alone keeps the trace's times (from the first event);
// `on_kernel_clock` lands them on the kernel's jiffies as `timersim import`
// does (kernel_clock.hpp).
std::string import_text(const std::string& text, std::optional<unsigned> hz = {},
                        std::uint64_t window = FtraceImporter::kDefaultPairWindowNs, bool on_kernel_clock = false) {
    std::istringstream in(text);
    FtraceReader reader(in, "in.txt", hz);
    FtraceImporter importer(reader, window);
    KernelClock clock;
    if (on_kernel_clock) {
        HzResolution resolved = resolve_ftrace_hz(text, "in.txt", HzChoice{.option = hz});
        clock = KernelClock(std::move(resolved.clock_samples), resolved.hz);
        importer.use_clock(&clock);
        importer.arm_before_trace(std::move(resolved.pre_trace_fires));
    }
    std::ostringstream out;
    std::optional<TraceWriter> writer;
    TraceEvent e;
    while (importer.next(e)) {
        if (!writer) writer.emplace(out, importer.header());
        writer->write(e);
    }
    if (!writer) writer.emplace(out, importer.header());
    writer->flush();
    return out.str();
}

std::string import_error(const std::string& text, std::optional<unsigned> hz = 250) {
    try {
        import_text(text, hz);
    } catch (const TraceError& e) {
        return e.what();
    }
    return "";
}

// The FtraceEvents of `text` (string_views dropped).
std::vector<FtraceEvent> parse(const std::string& text, unsigned hz = 250) {
    std::istringstream in(text);
    FtraceReader reader(in, "in.txt", hz);
    std::vector<FtraceEvent> events;
    FtraceEvent e;
    while (reader.next(e)) {
        e.function = {};
        e.module = {};
        events.push_back(e);
    }
    return events;
}

// An ftrace line around `body` ("timer_start: timer=...").
std::string line(const std::string& time, const std::string& body, int cpu = 1) {
    char prefix[64];
    std::snprintf(prefix, sizeof prefix, "          <idle>-0       [%03d] ..s1.  ", cpu);
    return prefix + time + ": " + body + "\n";
}

} // namespace

TEST_CASE("the kernel's habits import to the same events from every rendering") {
    const std::string expected = slurp(kData / "ftrace" / "habits.expected.trace");
    REQUIRE(!expected.empty());
    // /sys/kernel/tracing/trace, with '# hz=250' at the top.
    constexpr auto window = FtraceImporter::kDefaultPairWindowNs;
    CHECK(import_text(slurp(kData / "ftrace" / "habits-ftrace.txt"), {}, window, true) == expected);
    // trace-cmd report and trace-cmd report -l, with --hz.
    CHECK(import_text(slurp(kData / "ftrace" / "habits-trace-cmd.txt"), 250, window, true) == expected);
    CHECK(import_text(slurp(kData / "ftrace" / "habits-trace-cmd-l.txt"), 250, window, true) == expected);
}

TEST_CASE("the real 6.1 capture imports to the same events from its trace-cmd renderings") {
    // tests/data/kernel/render-trace-cmd made the two renderings from the
    // capture (trace-cmd report, trace-cmd report -l: no header, 0x
    // pointers, other columns); HZ comes from --hz there.
    const std::filesystem::path kernel = kData / "kernel";
    const std::string expected = import_text(test::read_xz(kernel / "capture-6.1-hz250.trace.xz"));
    CHECK(expected.size() > 100000); // thousands of events, not an empty import
    CHECK(import_text(test::read_xz(kernel / "capture-6.1-hz250.trace-cmd.txt.xz"), 250) == expected);
    CHECK(import_text(test::read_xz(kernel / "capture-6.1-hz250.trace-cmd-l.txt.xz"), 250) == expected);
}

TEST_CASE("import statistics count the habits, skipped events and lost events") {
    std::istringstream in(slurp(kData / "ftrace" / "habits-ftrace.txt"));
    FtraceReader reader(in, "habits");
    FtraceImporter importer(reader);
    TraceEvent e;
    int n = 0;
    while (importer.next(e)) ++n;
    CHECK(n == 12);
    const FtraceImportStats& s = importer.stats();
    CHECK(s.arms == 7);
    CHECK(s.modifies == 1);
    CHECK(s.requeues == 1);
    CHECK(s.cancels == 4);
    CHECK(s.expiries == 3);
    CHECK(s.expiry_detaches == 3);
    CHECK(s.dropped_cancels == 1);
    CHECK(s.anomalies == 0);
    CHECK(s.timers == 5);
    const FtraceReaderStats& r = reader.stats();
    CHECK(r.timer_events == 24);
    CHECK(r.other_events == 2);
    CHECK(r.other_by_name.at("sched_switch") == 1);
    CHECK(r.other_by_name.at("irq_handler_entry") == 1);
    CHECK(r.lost_event_markers == 1);
    CHECK(r.lost_events == 3);
    CHECK(reader.hz() == 250);
    CHECK(importer.header().start_jiffies == 4294967200u);
}

TEST_CASE("timer_start in every kernel's format") {
    const std::string text =
        "# 6.1\n" +
        line("10.000001", "timer_start: timer=00000000a1b2c3d4 function=tcp_write_timer expires=4294937500 "
                          "[timeout=250] cpu=1 idx=74 flags=D|P") +
        "# 6.9+: bucket_expiry\n" +
        line("10.000002", "timer_start: timer=ffff9a0c8b3e1e28 function=process_timeout expires=4295000000 "
                          "[timeout=-3] bucket_expiry=4295000008 cpu=3 idx=129 flags=") +
        "# 4.2-4.10: raw flags word (cpu 2, deferrable)\n" +
        line("10.000003", "timer_start: timer=ffff9a0c8b3e1e28 function=process_timeout expires=100 "
                          "[timeout=10] flags=0x00080002") +
        "# 2.6.32-4.1: no flags\n" +
        line("10.000004", "timer_start: timer=ffff9a0c8b3e1e28 function=process_timeout expires=100 [timeout=10]") +
        "# a module's function, and perf script's system:event\n" +
        line("10.000005", "timer_start: timer=1 function=ieee80211_sta_monitor_work [mac80211] expires=5 "
                          "[timeout=1] cpu=0 idx=3 flags=M|I") +
        "         swapper     0 [001]    10.000006:        timer:timer_start: timer=0x2 function=f expires=7 "
        "[timeout=2] cpu=1 idx=4 flags=\n";
    const std::vector<FtraceEvent> events = parse(text);
    REQUIRE(events.size() == 6);
    const FtraceEvent& a = events[0];
    CHECK(a.type == FtraceEventType::timer_start);
    CHECK(a.timestamp_ns == 10000001000ull);
    CHECK(a.line_cpu == 1);
    CHECK(a.timer == 0xa1b2c3d4u);
    CHECK(a.expires == 4294937500u);
    CHECK(a.timeout == 250);
    CHECK(a.jiffies() == 4294937250u);
    CHECK(a.cpu == 1u);
    CHECK(a.idx == 74u);
    CHECK(a.flags == (kFtraceDeferrable | kFtracePinned));
    CHECK(a.flags_known);
    CHECK(a.line == 2);
    const FtraceEvent& b = events[1];
    CHECK(b.timeout == -3);
    CHECK(b.jiffies() == 4295000003u);
    CHECK(b.bucket_expiry == 4295000008u);
    CHECK(b.idx == 129u);
    CHECK(b.flags == 0);
    CHECK(b.flags_known);
    const FtraceEvent& c = events[2];
    CHECK(c.cpu == 2u);
    CHECK(c.flags == kFtraceDeferrable);
    CHECK(!c.idx);
    const FtraceEvent& d = events[3];
    CHECK(!d.cpu);
    CHECK(!d.flags_known);
    CHECK(events[4].flags == (kFtraceMigrating | kFtraceIrqsafe));
    CHECK(events[5].timer == 2);
    CHECK(events[5].line_cpu == 1);

    // The module stays on the label; M is not a trace v1 flag.
    const std::string v1 = import_text(text, 250);
    CHECK(v1.find("label=ieee80211_sta_monitor_work[mac80211]") != std::string::npos);
    CHECK(v1.find(" at=5 flags=irqsafe cpu=0 ") != std::string::npos);
    CHECK(v1.find("at=100 flags=deferrable cpu=2 label=process_timeout know=90\n") != std::string::npos);
    CHECK(v1.find("at=100 label=process_timeout know=90\n") != std::string::npos);
}

TEST_CASE("timer_expire_entry keeps now and baseclk; old kernels have no baseclk") {
    const std::vector<FtraceEvent> events = parse(
        line("1.5", "timer_expire_entry: timer=ffff9a0c8b3e1e28 function=tcp_write_timer now=4294967300 "
                    "baseclk=4294967296") +
        line("1.500000001", "timer_expire_entry: timer=ffff9a0c8b3e1e28 function=tcp_write_timer now=4294967301", 0) +
        line("1.6", "timer_expire_exit: timer=ffff9a0c8b3e1e28") + line("1.7", "timer_init: timer=ffff9a0c8b3e1e28") +
        line("1.8", "timer_cancel: timer=ffff9a0c8b3e1e28"));
    REQUIRE(events.size() == 5);
    CHECK(events[0].type == FtraceEventType::timer_expire_entry);
    CHECK(events[0].timestamp_ns == 1500000000u);
    CHECK(events[0].now == 4294967300u);
    CHECK(events[0].baseclk == 4294967296u);
    CHECK(events[0].jiffies() == 4294967300u);
    CHECK(events[1].timestamp_ns == 1500000001u);
    CHECK(events[1].now == 4294967301u);
    CHECK(!events[1].baseclk);
    CHECK(events[1].line_cpu == 0);
    CHECK(events[2].type == FtraceEventType::timer_expire_exit);
    CHECK(!events[2].jiffies());
    CHECK(events[3].type == FtraceEventType::timer_init);
    CHECK(events[4].type == FtraceEventType::timer_cancel);
}

TEST_CASE("cancel_meaning: a detach by the timer's next event, a requeue by the CPU's next") {
    const CancelNeighbour cancel{FtraceEventType::timer_cancel, 0xaa, 5'000'000'000, 1};
    const auto at = [&](FtraceEventType type, std::uint64_t timer, std::uint64_t after_ns, std::uint32_t cpu = 1) {
        return CancelNeighbour{type, timer, cancel.timestamp_ns + after_ns, cpu};
    };
    using enum FtraceEventType;
    CHECK(cancel_meaning(cancel, nullptr, nullptr) == CancelMeaning::del_timer); // nothing more shown
    // The timer's expiry on the same CPU, up to a second later, whatever
    // that CPU printed between: its detach.
    const CancelNeighbour entry = at(timer_expire_entry, 0xaa, kDetachReachNs);
    const CancelNeighbour other = at(timer_start, 0xbb, 1'000);
    CHECK(cancel_meaning(cancel, &other, &entry) == CancelMeaning::expiry_detach);
    CHECK(cancel_meaning(cancel, &entry, &entry) == CancelMeaning::expiry_detach);
    const CancelNeighbour late_entry = at(timer_expire_entry, 0xaa, kDetachReachNs + 1);
    CHECK(cancel_meaning(cancel, &other, &late_entry) == CancelMeaning::del_timer);
    const CancelNeighbour entry_elsewhere = at(timer_expire_entry, 0xaa, 1'000, 0);
    CHECK(cancel_meaning(cancel, &other, &entry_elsewhere) == CancelMeaning::del_timer);
    // mod_timer(): the start is the CPU's very next event, within 10 ms (or
    // the reach given).
    const CancelNeighbour restart = at(timer_start, 0xaa, kRequeueReachNs);
    CHECK(cancel_meaning(cancel, &restart, &restart) == CancelMeaning::requeue);
    CHECK(cancel_meaning(cancel, &restart, &restart, CancelReach{.requeue_ns = kRequeueReachNs - 1}) ==
          CancelMeaning::del_timer);
    const CancelNeighbour late_restart = at(timer_start, 0xaa, kRequeueReachNs + 1);
    CHECK(cancel_meaning(cancel, &late_restart, &late_restart) == CancelMeaning::del_timer);
    CHECK(cancel_meaning(cancel, &other, &restart) == CancelMeaning::del_timer); // not the CPU's next
    const CancelNeighbour reinit = at(timer_init, 0xaa, 1'000);
    CHECK(cancel_meaning(cancel, &reinit, &reinit) == CancelMeaning::del_timer);
    // A next line stamped before the cancel (a clock that stepped back) is
    // taken as no gap, not as 2^64 ns.
    const CancelNeighbour earlier{timer_expire_entry, 0xaa, cancel.timestamp_ns - 1, 1};
    CHECK(cancel_meaning(cancel, &earlier, &earlier) == CancelMeaning::expiry_detach);
}

TEST_CASE("a detach whose callback starts 18.7 ms later, or after another event of its CPU, is an expiry") {
    const std::string start = "timer_start: timer=a function=f expires=4294967400 [timeout=100] cpu=0 idx=1 flags=";
    const std::string entry = "timer_expire_entry: timer=a function=f now=4294967405 baseclk=4294967400";
    const std::string other = "timer_start: timer=b function=g expires=4294967500 [timeout=200] cpu=0 idx=2 flags=";
    // The committed 6.1 capture has one: its softirq preempted between the two.
    const std::string preempted =
        import_text(line("1.000000", start) + line("1.400000", "timer_cancel: timer=a") + line("1.418700", entry), 250);
    CHECK(preempted.find("cancel") == std::string::npos);
    // expire_timers() drops the base lock with interrupts on before the
    // callback: an interrupt's mod_timer() of another timer comes between.
    const std::string between = import_text(line("1.000000", start) + line("1.400000", "timer_cancel: timer=a") +
                                                line("1.400010", other) + line("1.418700", entry),
                                            250);
    CHECK(between.find("cancel") == std::string::npos);
    CHECK(between.find("\n400010000 arm 0x000000000000000b") != std::string::npos);
    // The expiry on another CPU, or more than a second later: the cancel
    // was a del_timer() (and the expiry that of a timer armed unseen).
    const std::string elsewhere = import_text(
        line("1.000000", start) + line("1.400000", "timer_cancel: timer=a") + line("1.418700", entry, 2), 250);
    CHECK(elsewhere.find("\n400000000 cancel 0x000000000000000a cpu=1\n") != std::string::npos);
    const std::string late = import_text(
        line("1.000000", start) + line("1.400000", "timer_cancel: timer=a") + line("2.400001", entry), 250);
    CHECK(late.find("\n400000000 cancel 0x000000000000000a cpu=1\n") != std::string::npos);
}

TEST_CASE("cancel and start far apart, or on other CPUs, are a cancel and an arm") {
    const std::string start = "timer_start: timer=a function=f expires=4294967400 [timeout=100] cpu=0 idx=1 flags=";
    // The requeue's start: another bucket.
    const std::string moved = "timer_start: timer=a function=f expires=4294967500 [timeout=200] cpu=0 idx=2 flags=";
    // Same CPU, 2 ms apart: still one mod_timer() (window 10 ms).
    CHECK(import_text(line("1.000000", start) + line("1.001000", "timer_cancel: timer=a") + line("1.003000", moved),
                      250)
              .find("1000000 modify 0x000000000000000a") != std::string::npos);
    // Back into the bucket it was in (idx=1 again): mod_timer() would have
    // left it there untraced, so the pair was del_timer() then add_timer().
    const std::string same_bucket =
        import_text(line("1.000000", start) + line("1.001000", "timer_cancel: timer=a") + line("1.001001", start), 250);
    CHECK(same_bucket.find("1000000 cancel 0x000000000000000a cpu=1\n1001000 arm ") != std::string::npos);
    // Same CPU, 20 ms apart: del_timer() then add_timer().
    const std::string apart =
        import_text(line("1.000000", start) + line("1.001000", "timer_cancel: timer=a") + line("1.021000", start), 250);
    CHECK(apart.find("1000000 cancel 0x000000000000000a cpu=1\n21000000 arm ") != std::string::npos);
    // Another CPU.
    const std::string other = import_text(
        line("1.000000", start) + line("1.001000", "timer_cancel: timer=a", 1) + line("1.001001", start, 2), 250);
    CHECK(other.find("1000000 cancel 0x000000000000000a cpu=1\n1001000 arm ") != std::string::npos);
    // A narrower window turns the 2 ms pair into cancel + arm.
    const std::string narrow = import_text(
        line("1.000000", start) + line("1.001000", "timer_cancel: timer=a") + line("1.003000", moved), 250, 1000000);
    CHECK(narrow.find("1000000 cancel 0x000000000000000a cpu=1\n3000000 arm ") != std::string::npos);
}

TEST_CASE("a cancel and a start with another timer event of that CPU between them are a cancel and an arm") {
    // 6.1 __mod_timer() traces its detach and its enqueue under the base
    // lock with interrupts off: nothing else of that CPU's comes between.
    const std::string start = "timer_start: timer=a function=f expires=4294967400 [timeout=100] cpu=0 idx=1 flags=";
    const std::string moved = "timer_start: timer=a function=f expires=4294967500 [timeout=200] cpu=0 idx=2 flags=";
    const std::string other = "timer_start: timer=b function=g expires=4294967500 [timeout=200] cpu=0 idx=2 flags=";
    const std::string between = import_text(line("1.000000", start) + line("1.001000", "timer_cancel: timer=a") +
                                                line("1.001500", other) + line("1.002000", moved),
                                            250);
    CHECK(between.find("1000000 cancel 0x000000000000000a cpu=1\n") != std::string::npos);
    CHECK(between.find("2000000 arm 0x000000000000000a") != std::string::npos);
    CHECK(between.find("modify") == std::string::npos);
    // Another CPU's event between them does not count: still one modify.
    const std::string elsewhere = import_text(line("1.000000", start) + line("1.001000", "timer_cancel: timer=a") +
                                                  line("1.001500", other, 2) + line("1.002000", moved),
                                              250);
    CHECK(elsewhere.find("1000000 modify 0x000000000000000a") != std::string::npos);
}

TEST_CASE("starts and cancels between a timer's expire_entry and expire_exit on its CPU get cb= that timer") {
    const std::string start_b = "timer_start: timer=b function=f expires=4294967500 [timeout=100] cpu=1 idx=1 flags=";
    const std::string start_c = "timer_start: timer=c function=f expires=4294967500 [timeout=100] cpu=1 idx=1 flags=";
    const std::string entry_a = "timer_expire_entry: timer=a function=f now=4294967400 baseclk=4294967400";
    const std::string a = "0x000000000000000a";
    const std::string text = import_text(line("1.000000", start_c) + line("1.000100", entry_a) +
                                             line("1.000200", start_b) +                     // inside, CPU 1
                                             line("1.000250", start_c, 2) +                  // CPU 2: not inside
                                             line("1.000300", "timer_cancel: timer=c") +     // inside: a del_timer()
                                             line("1.000400", "timer_expire_exit: timer=a") +
                                             line("1.000500", "timer_cancel: timer=b"),
                                         250);
    CHECK(text.find("200000 arm 0x000000000000000b at=4294967500 cpu=1 label=f kidx=1 know=4294967400 cb=" + a + "\n") !=
          std::string::npos);
    CHECK(text.find("250000 modify 0x000000000000000c at=4294967500 cpu=1 label=f kidx=1 know=4294967400\n") !=
          std::string::npos);
    CHECK(text.find("300000 cancel 0x000000000000000c cpu=1 cb=" + a + "\n") != std::string::npos);
    CHECK(text.find("500000 cancel 0x000000000000000b cpu=1\n") != std::string::npos); // after the exit: no cb=

    // A cancel before the entry and a start inside the callback (found by
    // fuzzing: the import hung on it). The entry between them on that CPU
    // says they are no one mod_timer(): a del_timer() and, in the
    // callback, an arm with cb=.
    const std::string start_a = "timer_start: timer=a function=f expires=4294967600 [timeout=200] cpu=1 idx=2 flags=";
    const std::string modified = import_text(line("1.000000", start_c) + line("1.000050", "timer_cancel: timer=c") +
                                                 line("1.000100", entry_a) + line("1.000200", start_c) +
                                                 line("1.000400", "timer_expire_exit: timer=a") + line("1.0005", start_a),
                                             250);
    CHECK(modified.find("50000 cancel 0x000000000000000c cpu=1\n") != std::string::npos);
    CHECK(modified.find("200000 arm 0x000000000000000c at=4294967500 cpu=1 label=f kidx=1 know=4294967400 cb=" + a +
                        "\n") != std::string::npos);

    // Without timer_expire_exit lines nothing can be told: no cb= at all.
    std::istringstream in(line("1.000000", entry_a) + line("1.000200", start_b) +
                          line("1.000300", "timer_expire_entry: timer=c function=f now=4294967400") +
                          line("1.000400", start_b));
    FtraceReader reader(in, "x", 250);
    FtraceImporter importer(reader);
    TraceEvent e;
    std::size_t events = 0;
    while (importer.next(e)) {
        CHECK(!e.cb);
        ++events;
    }
    CHECK(events == 2);
    CHECK(importer.stats().unconfirmed_callbacks == 2);
    CHECK(importer.stats().callback_events == 0);
}

TEST_CASE("a start of a pending timer without its cancel is a modify and an anomaly") {
    const std::string start = "timer_start: timer=a function=f expires=4294967400 [timeout=100] cpu=0 idx=1 flags=";
    std::istringstream in(line("1.0", start) + line("1.1", start) +
                          line("1.2", "timer_expire_entry: timer=a function=f now=4294967400 baseclk=4294967400") +
                          line("1.3", "timer_expire_entry: timer=b function=f now=4294967400 baseclk=4294967400"));
    FtraceReader reader(in, "x", 250);
    FtraceImporter importer(reader);
    TraceEvent e;
    REQUIRE(importer.next(e));
    CHECK(e.kind == TraceEventKind::arm);
    REQUIRE(importer.next(e));
    CHECK(e.kind == TraceEventKind::modify);
    CHECK(!importer.next(e));
    CHECK(importer.stats().anomalies == 2); // the modify, and the expiry without a detach
    CHECK(importer.stats().expiries == 2);
}

TEST_CASE("HZ comes from --hz or a '# hz=' line, and they must agree") {
    const std::string events = line("5.0", "timer_start: timer=a function=f expires=1000 [timeout=10] cpu=0 idx=1 flags=");
    CHECK(import_text("# hz=1000\n" + events).starts_with("# timersim-trace v1 hz=1000 start_jiffies=990\n"));
    CHECK(import_text("#hz=300\n" + events, 300).starts_with("# timersim-trace v1 hz=300 "));
    CHECK(import_text(events, 100).starts_with("# timersim-trace v1 hz=100 "));
    CHECK(import_error(events, std::nullopt) ==
          "in.txt:1: HZ unknown: pass --hz or put a line '# hz=N' before the first event (hz)");
    CHECK(import_error("# hz=250\n" + events, 1000) == "in.txt:1: '# hz=250' contradicts --hz 1000; pass --force-hz to replay at --hz anyway (hz)");
    CHECK(import_error("# hz=250\n# hz=300\n" + events, std::nullopt) ==
          "in.txt:2: '# hz=300' contradicts the earlier '# hz=250' (hz)");
    CHECK(import_error("# hz=250\n" + events + "# hz=250\n", std::nullopt) ==
          "in.txt:3: '# hz=' line after the first event: put it at the top (hz)");
    CHECK(import_error("# hz=25k\n" + events) == "in.txt:1: bad '# hz=' line: '25k' is not an integer 1..10000 (hz)");
}

TEST_CASE("start_jiffies counts back from the first event that shows jiffies") {
    // First line at 10 s, first jiffies at 10.5 s (HZ 100: 50 ticks later).
    const std::string text =
        line("10.000000", "sched_switch: prev_comm=a") + line("10.499000", "timer_cancel: timer=5") +
        line("10.500000", "timer_expire_entry: timer=5 function=f now=4294937346") +
        line("10.600000", "timer_start: timer=5 function=f expires=4294937400 [timeout=44] cpu=1 idx=3 flags=");
    const std::string v1 = import_text(text, 100);
    CHECK(v1 == "# timersim-trace v1 hz=100 start_jiffies=4294937296\n"
                "600000000 arm 0x0000000000000005 at=4294937400 cpu=1 label=f kidx=3 know=4294937356\n");
}

TEST_CASE("a trace without timer events is an error; other lines are skipped") {
    CHECK(import_error("# tracer: nop\n" + line("1.0", "sched_switch: a=b") + line("1.1", "<stack trace>") +
                       " => __schedule\nCPU 1 is empty\ncpus=2\n") ==
          "in.txt:6: no timer events (timer_start, timer_cancel, timer_expire_entry...) found: record the "
          "timer:timer_* events (event)");
    CHECK(import_error("") ==
          "in.txt:1: no timer events (timer_start, timer_cancel, timer_expire_entry...) found: record the "
          "timer:timer_* events (event)");
}

TEST_CASE("the timestamp and the CPU column read the same in every form the reader takes") {
    // The usual forms take a quick path (one backward pass each); the
    // others the general one. Both give what the line says.
    struct Case {
        std::string text;
        std::uint64_t ts;
        std::uint32_t cpu;
    };
    const Case cases[] = {
        {"  <idle>-0       [001] ..s1.  2.700530: timer_cancel: timer=a\n", 2'700'530'000, 1},
        {"  <idle>-0       [017]  5.5: timer_cancel: timer=a\n", 5'500'000'000, 17},            // no flags column
        {"[003] 0.000000001: timer_cancel: timer=a\n", 1, 3},                                   // no task column
        {"  kworker/0:1H-9 [002] d..2. 9999999999.999999999: timer_cancel: timer=a\n", 9'999'999'999'999'999'999u, 2},
        {"  a:b [4000000000] d..2. 1.0: timer_cancel: timer=a\n", 1'000'000'000, 4000000000u},  // 10 digits: general path
        {"  x[7] [8] d..2. 1.25: timer_cancel: timer=a\n", 1'250'000'000, 8},
        {"  <idle>-0     1d..2. 3.000001: timer_cancel: timer=a\n", 3'000'001'000, 1},          // trace-cmd -l
        {"  <idle>-0 [6] [5]x 3.000001: timer_cancel: timer=a\n", 3'000'001'000, 6},            // "[5]x" is no CPU column
        {"  kworker/1:2-5 [000] 1:2: 12.5: timer_cancel: timer=a\n", 12'500'000'000, 0},         // colons before it
    };
    for (const Case& c : cases) {
        CAPTURE(c.text);
        const std::vector<FtraceEvent> events = parse(c.text);
        REQUIRE(events.size() == 1);
        CHECK(events[0].timestamp_ns == c.ts);
        CHECK(events[0].line_cpu == c.cpu);
    }
}

TEST_CASE("malformed ftrace lines fail with the line, the problem and the field") {
    struct Case {
        std::string input;
        std::string error;
    };
    const Case cases[] = {
        {"hello world\n", "in.txt:1: not an event line: expected 'TASK-PID [CPU] TIMESTAMP: EVENT: ...', got 'hello world' (line)"},
        {line("12", "timer_cancel: timer=a"),
         "in.txt:1: timestamp '12' is not in seconds: record with a clock counting time (local, global, mono, boot), "
         "not a counter (x86-tsc, counter) (timestamp)"},
        {line("1.0123456789", "timer_cancel: timer=a"),
         "in.txt:1: bad timestamp '1.0123456789': expected seconds with 1 to 9 decimals (timestamp)"},
        {line("99999999999.5", "timer_cancel: timer=a"), "in.txt:1: timestamp '99999999999.5' is out of range (timestamp)"},
        {line("2.0", "timer_cancel: timer=a") + line("1.999999", "timer_cancel: timer=a"),
         "in.txt:2: timestamp 1.999999000 is before the previous event's 2.000000000: lines must be in time order "
         "(timestamp)"},
        {"  <idle>-0 1.0: timer_cancel: timer=a\n",
         "in.txt:1: no CPU column ('[001]', or trace-cmd -l's '1d..2.') before the timestamp (cpu)"},
        {line("1.0", "timer_cancel: ptr=a"), "in.txt:1: timer_cancel without timer= (timer)"},
        {line("1.0", "timer_cancel: timer=xyz"), "in.txt:1: bad timer 'xyz': expected a pointer in hex (timer)"},
        {line("1.0", "timer_cancel: timer=0x12345678123456789"),
         "in.txt:1: bad timer '0x12345678123456789': expected a pointer in hex (timer)"},
        {line("1.0", "timer_start: timer=a function=f [timeout=1]"), "in.txt:1: timer_start without expires= (expires)"},
        {line("1.0", "timer_start: timer=a function=f expires=-5 [timeout=1]"),
         "in.txt:1: bad expires '-5': expected jiffies (expires)"},
        {line("1.0", "timer_start: timer=a function=f expires=5"), "in.txt:1: timer_start without [timeout=] (timeout)"},
        {line("1.0", "timer_start: timer=a function=f expires=5 [timeout=x]"),
         "in.txt:1: bad timeout 'x': expected a signed number of jiffies (timeout)"},
        {line("1.0", "timer_start: timer=a function=f expires=5 [timeout=1] cpu=262144 idx=1 flags="),
         "in.txt:1: bad cpu '262144': expected 0..262143 (cpu)"},
        {line("1.0", "timer_start: timer=a function=f expires=5 [timeout=1] cpu=1 idx=1024 flags="),
         "in.txt:1: bad idx '1024': expected 0..1023 (idx)"},
        {line("1.0", "timer_start: timer=a function=f expires=5 [timeout=1] bucket_expiry=z cpu=1 idx=1 flags="),
         "in.txt:1: bad bucket_expiry 'z': expected jiffies (bucket_expiry)"},
        {line("1.0", "timer_start: timer=a function=f expires=5 [timeout=1] cpu=1 idx=1 flags=D|X"),
         "in.txt:1: bad flags 'D|X': expected M, D, P, I joined by '|', or 0x... (flags)"},
        {line("1.0", "timer_expire_entry: timer=a function=f baseclk=5"),
         "in.txt:1: timer_expire_entry without now= (now)"},
        {line("1.0", "timer_expire_entry: timer=a function=f now=five"), "in.txt:1: bad now 'five': expected jiffies (now)"},
        {line("1.0", "timer_expire_entry: timer=a function=f now=5 baseclk=-1"),
         "in.txt:1: bad baseclk '-1': expected jiffies (baseclk)"},
        {line("1.0", "timer_cancel: timer=a" + std::string(kMaxFtraceLine, ' ')), "in.txt:1: line longer than 65536 bytes (line)"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.input.substr(0, 200));
        CHECK(import_error(c.input) == c.error);
    }
}

TEST_CASE("tests/data/bad-ftrace: each file fails with the error its first line names") {
    // No --hz: the files that get past HZ carry a '# hz=' line.
    timersim::testing::check_error_corpus(kData / "bad-ftrace", ".txt", 8, [](std::istream& in, const std::string& name) {
        FtraceReader reader(in, name);
        FtraceImporter importer(reader);
        TraceEvent e;
        while (importer.next(e)) {
        }
    });
}

TEST_CASE("an import reads back through TraceReader event for event") {
    std::istringstream in(slurp(kData / "ftrace" / "habits-trace-cmd.txt"));
    FtraceReader reader(in, "habits", 250);
    FtraceImporter importer(reader);
    std::ostringstream out;
    std::vector<std::string> kinds;
    {
        std::optional<TraceWriter> writer;
        TraceEvent e;
        while (importer.next(e)) {
            if (!writer) writer.emplace(out, importer.header(), "comment");
            writer->write(e);
            kinds.emplace_back(to_string(e.kind));
        }
    }
    std::istringstream again(out.str());
    TraceReader trace(again, "again");
    TraceEvent e;
    std::size_t i = 0;
    while (trace.next(e)) {
        REQUIRE(i < kinds.size());
        CHECK(to_string(e.kind) == kinds[i++]);
    }
    CHECK(i == kinds.size());
    CHECK(trace.timer_count() == 3); // the pre-trace timers D and E never appear
}

namespace {

// Every event (or the error) of reading `text` with `reader`, as one string.
std::string read_summary(FtraceReader& reader) {
    std::string out;
    try {
        FtraceEvent e;
        while (reader.next(e))
            out += fmt::format("{} {} {} {} {:x} {} {} {} {} {}\n", static_cast<int>(e.type), e.line, e.timestamp_ns,
                               e.line_cpu, e.timer, e.function, e.module, e.expires, e.cpu.value_or(99999),
                               e.idx.value_or(99999));
    } catch (const TraceError& error) {
        out += error.what();
    }
    return out;
}

} // namespace

TEST_CASE("text in memory reads as the same text through a stream: events, line numbers, errors") {
    // The in-place LineSource (validate, run --ftrace) against the buffered
    // one: the real capture, lines without a final newline, CRLF, a line
    // over the limit, and every malformed file.
    std::vector<std::pair<std::string, std::string>> texts;
    texts.emplace_back("capture", timersim::test::read_xz(kData / "kernel/capture-6.1-hz250.trace.xz"));
    const std::string line =
        "  <idle>-0  [001] ..s1.  7.000100: timer_start: timer=0000000012345678 function=tcp_delack_timer "
        "expires=4294893296 [timeout=10] cpu=1 idx=42 flags=";
    texts.emplace_back("no final newline", "# hz=250\n" + line + "\n" + line);
    texts.emplace_back("crlf", "# hz=250\r\n" + line + "\r\n" + line + "\r\n");
    texts.emplace_back("too long", "# hz=250\n" + line + "\n" + std::string(kMaxFtraceLine + 1, 'x') + "\n");
    texts.emplace_back("empty", "");
    for (const auto& entry : std::filesystem::directory_iterator(kData / "bad-ftrace")) {
        std::ifstream in(entry.path(), std::ios::binary);
        texts.emplace_back(entry.path().filename().string(), std::string(std::istreambuf_iterator<char>(in), {}));
    }
    for (const auto& [name, text] : texts) {
        CAPTURE(name);
        std::istringstream in(text);
        FtraceReader streamed(in, name, 250);
        FtraceReader in_place(std::string_view(text), name, 250);
        const std::string a = read_summary(streamed);
        CHECK(a == read_summary(in_place));
        CHECK(streamed.line() == in_place.line());
    }
}

TEST_CASE("a timer first seen expiring was armed before the trace: armed at its start, its chain replays") {
    // 6.1: each expiry is traced as the detach's timer_cancel, then the
    // entry. Timer ...a000 is first seen so; its callback re-arms it. Timer
    // ...b000 is first seen by a del_timer(): nothing to arm.
    const std::string text = "# hz=250\n" +
        line("1.000000", "timer_start: timer=ffff88800000c000 function=f expires=4294892550 [timeout=250] cpu=1 idx=200 flags=") +
        line("1.004000", "timer_cancel: timer=ffff88800000b000") +
        line("1.008000", "timer_cancel: timer=ffff88800000a000") +
        line("1.008010", "timer_expire_entry: timer=ffff88800000a000 function=poll_fn now=4294892302 baseclk=4294892302") +
        line("1.008020", "timer_start: timer=ffff88800000a000 function=poll_fn expires=4294892303 [timeout=1] cpu=1 idx=47 flags=") +
        line("1.008030", "timer_expire_exit: timer=ffff88800000a000");
    const std::string imported = import_text(text, 250, FtraceImporter::kDefaultPairWindowNs, true);
    // The arm at the trace's first event, on the CPU that fired it, to
    // expire where the kernel fired it; then the trace's own events.
    const auto pre = imported.find(" arm 0xffff88800000a000 at=4294892302 cpu=1 label=poll_fn\n");
    REQUIRE(pre != std::string::npos);
    CHECK(pre < imported.find(" arm 0xffff88800000c000 "));
    CHECK(imported.find("arm 0xffff88800000b000") == std::string::npos);
    // The re-arm in its callback is the callback's (cb=), as in any trace.
    CHECK(imported.find("cb=0xffff88800000a000") != std::string::npos);
    // Without the HZ pass's list (the importer alone) the fire is dropped.
    CHECK(import_text(text, 250).find("arm 0xffff88800000a000 at=4294892302") == std::string::npos);
}
