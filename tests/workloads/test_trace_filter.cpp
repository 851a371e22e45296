// Trace filters (trace_filter.hpp) and the costs measured from a trace
// (trace_costs.hpp): the option parsers, glob matching, the readers keeping
// exactly the events a filter names, and the cost distributions of the
// hand-written tests/data/costs/costs-small.txt, whose durations are
// written into it (tests/data/costs/README.md).
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/trace_costs.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"

#include "test_data_dir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace timersim;

namespace {

const std::filesystem::path kData = TEST_DATA_DIR;

std::vector<bool> cpus(std::initializer_list<int> on, std::size_t size) {
    std::vector<bool> v(size, false);
    for (const int c : on) v[static_cast<std::size_t>(c)] = true;
    return v;
}

} // namespace

TEST_CASE("parse_cpu_list: numbers and ranges, as the kernel's cpulist") {
    CHECK(parse_cpu_list("0") == cpus({0}, 1));
    CHECK(parse_cpu_list("0,2-3") == cpus({0, 2, 3}, 4));
    CHECK(parse_cpu_list("3,1") == cpus({1, 3}, 4));
    CHECK(parse_cpu_list("5-5") == cpus({5}, 6));
    for (const char* bad : {"", "2-x", "x", ",", "1,", "3-1", "-1", "1-", "1 ,2", "4096", "0-99999"})
        CHECK_THROWS_AS(parse_cpu_list(bad), std::invalid_argument);
}

TEST_CASE("parse_trace_time: a unit is required; decimals exactly; @ is a timestamp") {
    CHECK(parse_trace_time("1.5s") == TraceTime{1'500'000'000, false});
    CHECK(parse_trace_time("200ms") == TraceTime{200'000'000, false});
    CHECK(parse_trace_time("750us") == TraceTime{750'000, false});
    CHECK(parse_trace_time("10ns") == TraceTime{10, false});
    CHECK(parse_trace_time("0s") == TraceTime{0, false});
    CHECK(parse_trace_time("0.000000001s") == TraceTime{1, false});
    CHECK(parse_trace_time("2.5000ms") == TraceTime{2'500'000, false});
    CHECK(parse_trace_time("@12.345678") == TraceTime{12'345'678'000, true});
    CHECK(parse_trace_time("@7") == TraceTime{7'000'000'000, true});
    CHECK(parse_trace_time("@7s") == TraceTime{7'000'000'000, true});
    for (const char* bad : {"5", "1.5", "s", "ms", "1.s", ".5s", "-1s", "1e3ms", "1.0000000001s", "0.5ns", "1 s",
                            "@", "@x", "99999999999999999999s"})
        CHECK_THROWS_AS(parse_trace_time(bad), std::invalid_argument);
}

TEST_CASE("glob_match: *, ? and classes, as set_ftrace_filter") {
    CHECK(glob_match("tcp_*", "tcp_delack_timer"));
    CHECK(glob_match("tcp_*", "tcp_"));
    CHECK_FALSE(glob_match("tcp_*", "xtcp_write_timer"));
    CHECK(glob_match("*_timer", "tcp_write_timer"));
    CHECK_FALSE(glob_match("*_timer", "tcp_write_timer_fn"));
    CHECK(glob_match("*delack*", "tcp_delack_timer"));
    CHECK(glob_match("process_timeout", "process_timeout"));
    CHECK_FALSE(glob_match("process_timeout", "process_timeouts"));
    CHECK(glob_match("tcp_?elack_timer", "tcp_delack_timer"));
    CHECK(glob_match("[bt]*", "blk_stat_timer_fn"));
    CHECK_FALSE(glob_match("[!bt]*", "blk_stat_timer_fn"));
    CHECK(glob_match("[a-c]lk_*", "blk_stat_timer_fn"));
    CHECK(glob_match("*a*a*a*", "banana_bar"));
    CHECK_FALSE(glob_match("*a*a*a*a*", "banana"));
    CHECK(glob_match("*", ""));
    CHECK_FALSE(glob_match("?", ""));
    CHECK_NOTHROW(check_glob("[]]x"));
    for (const char* bad : {"", "[ab", "x[", "tcp_[!"}) CHECK_THROWS_AS(check_glob(bad), std::invalid_argument);
}

TEST_CASE("filter_event: the first failing reason of time, cpu, function counts") {
    TraceFilter f;
    f.cpus = parse_cpu_list("1");
    f.function = "tcp_*";
    f.from = parse_trace_time("1s");
    f.to = parse_trace_time("2s");
    TraceFilterCounts c;
    CHECK(filter_event(f, c, 1, "tcp_write_timer", 1'000'000'000, 0));       // from is inclusive
    CHECK_FALSE(filter_event(f, c, 0, "process_timeout", 2'000'000'000, 0)); // to is exclusive: time
    CHECK_FALSE(filter_event(f, c, 0, "process_timeout", 1'500'000'000, 0)); // cpu
    CHECK_FALSE(filter_event(f, c, 1, "process_timeout", 1'500'000'000, 0)); // function
    CHECK_FALSE(filter_event(f, c, 1, "", 1'500'000'000, 0));                // unknown function
    CHECK(c == TraceFilterCounts{.kept = 1, .dropped_by_time = 1, .dropped_by_cpu = 1, .dropped_by_function = 2});
    CHECK(describe_filter_counts(c, "events") ==
          "kept 1 of 5 events; dropped 1 by --from/--to, 1 by --cpu, 2 by --function");
    CHECK(describe_filter(f) == "--cpu 1 --function 'tcp_*' --from 1s --to 2s");
    // An absolute bound compares the timestamp as printed.
    TraceFilter a;
    a.from = parse_trace_time("@10.5");
    TraceFilterCounts ac;
    CHECK_FALSE(filter_event(a, ac, 0, "", 9'999'999'999, 10'499'999'999));
    CHECK(filter_event(a, ac, 0, "", 0, 10'500'000'000));
    CHECK(describe_filter(a) == "--from @10.500000000");
}

namespace {

// Kernel text: a cancel and an expire_exit print no function= and take their
// timer's, from its last timer_start or expire_entry.
constexpr const char* kFtrace =
    "# hz=250\n"
    "  <idle>-0  [000] d.s2.  1.000000: timer_start: timer=a1 function=tcp_delack_timer expires=4294892550 "
    "[timeout=4] cpu=0 idx=6 flags=\n"
    "  <idle>-0  [001] d.s2.  1.100000: timer_start: timer=b2 function=process_timeout expires=4294892571 "
    "[timeout=0] cpu=1 idx=27 flags=\n"
    "  <idle>-0  [000] d.s2.  1.500000: timer_cancel: timer=a1\n"
    "  <idle>-0  [001] d.s2.  1.600000: timer_cancel: timer=c3\n"
    "  <idle>-0  [001] ..s1.  2.000000: softirq_entry: vec=1 [action=TIMER]\n"
    "  <idle>-0  [001] ..s1.  2.000100: timer_expire_entry: timer=b2 function=process_timeout now=4294892671 "
    "baseclk=4294892671\n"
    "  <idle>-0  [001] ..s1.  2.000200: timer_expire_exit: timer=b2\n"
    "  <idle>-0  [001] ..s1.  2.000300: softirq_exit: vec=1 [action=TIMER]\n"
    "  <idle>-0  [000] d.s2.  3.000000: timer_start: timer=a1 function=tcp_delack_timer expires=4294893050 "
    "[timeout=4] cpu=0 idx=58 flags=\n";

std::vector<std::uint64_t> kept_lines(const TraceFilter& f, TraceFilterCounts* counts = nullptr) {
    std::istringstream in(kFtrace);
    FtraceReader reader(in, "t.txt");
    reader.set_filter(f);
    std::vector<std::uint64_t> lines;
    FtraceEvent e;
    while (reader.next(e)) lines.push_back(e.line);
    if (counts) *counts = reader.filter_counts();
    return lines;
}

} // namespace

TEST_CASE("FtraceReader keeps exactly the events a filter names") {
    using V = std::vector<std::uint64_t>;
    CHECK(kept_lines({}) == V{2, 3, 4, 5, 7, 8, 10});
    TraceFilter cpu1;
    cpu1.cpus = parse_cpu_list("1");
    TraceFilterCounts c;
    CHECK(kept_lines(cpu1, &c) == V{3, 5, 7, 8});
    CHECK(c == TraceFilterCounts{.kept = 4, .dropped_by_cpu = 3});
    // The cancel of a1 (line 4) is tcp_delack_timer's; c3 was never seen
    // with a function, so no pattern takes it.
    TraceFilter tcp;
    tcp.function = "tcp_*";
    CHECK(kept_lines(tcp, &c) == V{2, 4, 10});
    CHECK(c == TraceFilterCounts{.kept = 3, .dropped_by_function = 4});
    TraceFilter star;
    star.function = "*";
    CHECK(kept_lines(star) == V{2, 3, 4, 7, 8, 10});
    // Times from the first event line (1.000000): [0.5s, 1s) is 1.5..2.0 s.
    TraceFilter window;
    window.from = parse_trace_time("500ms");
    window.to = parse_trace_time("1s");
    CHECK(kept_lines(window, &c) == V{4, 5});
    CHECK(c == TraceFilterCounts{.kept = 2, .dropped_by_time = 5});
    TraceFilter absolute;
    absolute.from = parse_trace_time("@2.0001");
    CHECK(kept_lines(absolute) == V{7, 8, 10});
}

TEST_CASE("TraceReader keeps exactly the events a filter names, their dense ids compact") {
    const std::string text = "# timersim-trace v1 hz=250\n"
                             "0 arm 10 in=5j cpu=1 label=tcp_write_timer\n"
                             "1000 arm 11 in=5j label=process_timeout[mod]\n"
                             "2000 cancel 10 cpu=1\n"
                             "3000 arm 12 in=5j cpu=1 label=tcp_delack_timer\n"
                             "4000 cancel 11\n";
    const auto read = [&](const TraceFilter& f, TraceFilterCounts& c) {
        std::istringstream in(text);
        TraceReader reader(in, "t.trace");
        reader.set_filter(f);
        std::vector<std::pair<std::uint64_t, std::uint32_t>> kept; // time, dense id
        TraceEvent e;
        while (reader.next(e)) kept.emplace_back(e.time_ns, e.timer);
        c = reader.filter_counts();
        return kept;
    };
    using V = std::vector<std::pair<std::uint64_t, std::uint32_t>>;
    TraceFilterCounts c;
    TraceFilter cpu1;
    cpu1.cpus = parse_cpu_list("1");
    CHECK(read(cpu1, c) == V{{0, 0}, {2000, 0}, {3000, 1}});
    CHECK(c == TraceFilterCounts{.kept = 3, .dropped_by_cpu = 2}); // no cpu=: CPU 0
    TraceFilter fn;
    fn.function = "process_timeout"; // the label's function, without [mod]
    CHECK(read(fn, c) == V{{1000, 0}, {4000, 0}});
    TraceFilter time;
    time.from = parse_trace_time("1us");
    time.to = parse_trace_time("4us");
    CHECK(read(time, c) == V{{1000, 0}, {2000, 1}, {3000, 2}});
    CHECK(c == TraceFilterCounts{.kept = 3, .dropped_by_time = 2});
}

TEST_CASE("TraceCostCollector: the durations written into costs-small.txt") {
    InputFile in((kData / "costs" / "costs-small.txt").string());
    FtraceReader reader(in);
    TraceCostCollector collector;
    reader.set_observer(&collector);
    FtraceEvent e;
    std::uint64_t events = 0;
    while (reader.next(e)) ++events;
    CHECK(events == 18); // the softirq lines are not returned
    CHECK(reader.stats().other_by_name.at("softirq_entry") == 6);
    const TraceCosts c = collector.result("costs-small.txt");
    // Callbacks: tcp_delack_timer 30 and 40 us, blk_stat_timer_fn 100 us,
    // process_timeout 50 us; the one without its exit gives none.
    CHECK(c.callbacks.count == 4);
    CHECK(c.callbacks.p50 == 40'000);
    CHECK(c.callbacks.p90 == 100'000);
    CHECK(c.callbacks.max == 100'000);
    REQUIRE(c.callback_by_function.size() == 3);
    CHECK(c.callback_by_function.at("tcp_delack_timer").count == 2);
    CHECK(c.callback_by_function.at("tcp_delack_timer").p50 == 30'000);
    CHECK(c.callback_by_function.at("tcp_delack_timer").max == 40'000);
    CHECK(c.callback_by_function.at("process_timeout").p50 == 50'000);
    // Runs: 200, 15, 60 and 50 us (the one with a lost exit gives none);
    // outside callbacks 20+30, 15, 5+5, 8+2 us; one gap of 20 us.
    CHECK(c.softirq_runs.count == 4);
    CHECK(c.softirq_runs.p50 == 50'000);
    CHECK(c.softirq_runs.max == 200'000);
    CHECK(c.run_overhead.count == 4);
    CHECK(c.run_overhead.p50 == 10'000);
    CHECK(c.run_overhead.p90 == 50'000);
    CHECK(c.expiry_gaps.count == 1);
    CHECK(c.expiry_gaps.p50 == 20'000);
    // Per expiry: 200/2, 60, 50 us.
    CHECK(c.per_expiry.count == 3);
    CHECK(c.per_expiry.p50 == 60'000);
    CHECK(c.expiries_in_runs == 4);
    CHECK(c.broken_pairs == 2); // the lost exit, the lost entry
}

TEST_CASE("TraceCostCollector: without softirq or callback pairs, an error naming the file") {
    TraceCostCollector none;
    CHECK_THROWS_WITH_AS(none.result("f.txt"),
                         doctest::Contains("f.txt: --costs-from-trace: no complete TIMER_SOFTIRQ run"), InputError);
    TraceCostCollector runs_only;
    runs_only.timer_softirq({.entry = true, .line = 1, .timestamp_ns = 10, .line_cpu = 0});
    runs_only.timer_softirq({.entry = false, .line = 2, .timestamp_ns = 20, .line_cpu = 0});
    CHECK_THROWS_WITH_AS(runs_only.result("f.txt"), doctest::Contains("no complete timer callback"), InputError);
}

TEST_CASE("CostDistribution: nearest-rank percentiles") {
    const CostDistribution d = CostDistribution::of({5, 1, 4, 2, 3, 10, 9, 8, 7, 6});
    CHECK(d.count == 10);
    CHECK(d.p50 == 5);
    CHECK(d.p90 == 9);
    CHECK(d.p99 == 10);
    CHECK(d.max == 10);
    CHECK(CostDistribution::of({7}).p50 == 7);
    CHECK(CostDistribution::of({}).count == 0);
}
