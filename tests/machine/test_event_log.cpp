// The event log's rows beyond enqueue/fire/cancel (sim/machine/event_log.hpp):
// the workload's names and labels, CSV quoting, cascade rows (from where to
// where, on the right CPU and timer), softirq rows that add up to the
// engine's metrics, and the clk columns. The whole-run consistency checks
// are tests/cli/events.sh; these pin single cases down.
#include "sim/machine/engine.hpp"
#include "sim/machine/event_log.hpp"
#include "tests/machine/memory_log.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;

// An EventLog into memory, its rows of one event split into fields (no
// quoted commas in these tests but the one that checks quoting, which reads
// the raw text).
struct MemoryLog : test::MemoryLog {
    std::vector<std::vector<std::string>> rows(std::string_view event) {
        std::istringstream in(text());
        std::string line;
        std::getline(in, line);
        std::vector<std::vector<std::string>> out;
        while (std::getline(in, line)) {
            const std::vector<std::string> f = test::csv_fields(line);
            REQUIRE(f.size() == 18);
            if (f[4] == event) out.push_back(f);
        }
        return out;
    }
};

// Columns by name.
enum Col { design, cpu, time_ns, jiffies, event, timer, expires, level, idx, bucket_expiry, clk, name, label,
           from_level, from_idx, expired, cascade_moves, cost_ns };

} // namespace

TEST_CASE("a name or label with a comma or a quote is quoted as RFC 4180 says") {
    MemoryLog log;
    log.log->add("modern", EventRow{.event = TimerEvent::enqueue, .timer = 7, .name = "a,b", .label = "x\"y"});
    log.log->add("modern", EventRow{.event = TimerEvent::fire, .timer = 7, .name = "plain", .label = ""});
    const std::string text = log.text();
    CHECK(text.substr(0, EventLog::header.size()) == EventLog::header);
    CHECK(text.find(",\"a,b\",\"x\"\"y\",") != std::string::npos);
    CHECK(text.find(",plain,,") != std::string::npos);
}

TEST_CASE("classic: a cascade row says which timer moved from which tv slot to which, on its CPU") {
    // Two CPUs; the timer lives on CPU 1 (add_timer_on), 300 jiffies out:
    // tv2 at first, cascaded into tv1 when CPU 1's tv1 wraps.
    std::vector<ClassicWheel> queues;
    for (int i = 0; i < 2; ++i) queues.emplace_back(ClassicWheel::Config{.hz = kHz, .slack = std::nullopt});
    Engine<ClassicWheel> engine(std::span<ClassicWheel>(queues), EngineConfig{.hz = kHz});
    MemoryLog log;
    engine.set_event_log(log.log.get(), "classic");
    const TimerId other = engine.create_timer(); // id 0 stays unarmed: ids differ from nodes
    const TimerId t = engine.create_timer();
    REQUIRE(other != t);
    engine.name_timer(t, "0xfeed", "tcp_keepalive_timer");
    const Jiffies start = engine.jiffies();
    engine.arm_on(t, start + 300, 1);
    const auto enq = log.rows("enqueue");
    REQUIRE(enq.size() == 1);
    CHECK(enq[0][cpu] == "1");
    CHECK(enq[0][level] == "2");
    CHECK(enq[0][clk] == std::to_string(queues[1].timer_jiffies()));
    CHECK(enq[0][name] == "0xfeed");
    CHECK(enq[0][label] == "tcp_keepalive_timer");
    const std::string from_slot = enq[0][idx];

    engine.run_ticks(310);
    const auto cascades = log.rows("cascade");
    REQUIRE(cascades.size() == queues[1].counters().cascade_moves);
    REQUIRE(cascades.size() == 1);
    const auto& c = cascades[0];
    CHECK(c[cpu] == "1");
    CHECK(c[timer] == std::to_string(t));
    CHECK(c[name] == "0xfeed");
    CHECK(c[from_level] == "2");
    CHECK(c[from_idx] == from_slot);
    CHECK(c[level] == "1");
    CHECK(c[bucket_expiry] == std::to_string(start + 300));
    // The cascade runs when tv1's index wraps to 0: T is a multiple of 256 then.
    CHECK(std::stoull(c[clk]) % 256 == 0);
    CHECK(std::stoull(c[expires]) == start + 300);

    const auto fires = log.rows("fire");
    REQUIRE(fires.size() == 1);
    CHECK(fires[0][level] == "1");
    CHECK(fires[0][idx] == std::to_string((start + 300) % 256));
    CHECK(fires[0][clk] == std::to_string(start + 300));
    CHECK(fires[0][label] == "tcp_keepalive_timer");
}

TEST_CASE("softirq rows: one start and one end per run that ran TIMER_SOFTIRQ, adding up to the metrics") {
    ModernWheel queue(ModernWheel::Config{.hz = kHz});
    Engine<ModernWheel> engine(queue, EngineConfig{.hz = kHz});
    MemoryLog log;
    engine.set_event_log(log.log.get(), "modern");
    std::vector<TimerId> ids;
    for (unsigned i = 0; i < 40; ++i) ids.push_back(engine.create_timer());
    for (unsigned i = 0; i < ids.size(); ++i) engine.arm(ids[i], engine.jiffies() + 1 + i % 7 + (i % 3) * 70);
    engine.run_ticks(400);
    const CpuMetrics m = engine.metrics();
    const auto starts = log.rows("softirq_start");
    const auto ends = log.rows("softirq_end");
    REQUIRE(ends.size() == m.softirq_ns.count());
    CHECK(starts.size() == ends.size());
    std::uint64_t expired_sum = 0, cost_sum = 0;
    for (std::size_t i = 0; i < ends.size(); ++i) {
        CHECK(ends[i][timer].empty());
        CHECK(std::stoull(ends[i][time_ns]) - std::stoull(starts[i][time_ns]) == std::stoull(ends[i][cost_ns]));
        CHECK(ends[i][cascade_moves] == "0");
        expired_sum += std::stoull(ends[i][expired]);
        cost_sum += std::stoull(ends[i][cost_ns]);
    }
    CHECK(expired_sum == m.fired);
    CHECK(expired_sum == ids.size());
    CHECK(cost_sum == m.softirq_work_ns);
    // Fire rows: the bucket's clock is the enqueue's bucket expiry, at the
    // enqueue's level; the enqueue's clk is the base clock it was placed from.
    const auto enq = log.rows("enqueue");
    const auto fires = log.rows("fire");
    REQUIRE(fires.size() == ids.size());
    for (const auto& f : fires) {
        const auto e = std::find_if(enq.begin(), enq.end(), [&](const auto& r) { return r[timer] == f[timer]; });
        REQUIRE(e != enq.end());
        CHECK(f[clk] == (*e)[bucket_expiry]);
        CHECK(f[level] == (*e)[level]);
        CHECK(f[idx] == (*e)[idx]);
        CHECK((*e)[clk] == std::to_string(engine.start_jiffies()));
    }
}

TEST_CASE("without an event log the engine keeps no names") {
    ModernWheel queue(ModernWheel::Config{.hz = kHz});
    Engine<ModernWheel> engine(queue, EngineConfig{.hz = kHz});
    const TimerId t = engine.create_timer();
    engine.name_timer(t, "kept?", "no");
    MemoryLog log;
    engine.set_event_log(log.log.get(), "modern"); // named before: not known
    engine.arm(t, engine.jiffies() + 5);
    const auto enq = log.rows("enqueue");
    REQUIRE(enq.size() == 1);
    CHECK(enq[0][name].empty());
    CHECK(enq[0][label].empty());
}
