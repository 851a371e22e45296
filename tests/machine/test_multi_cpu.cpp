// The engine with several CPUs (sim/machine/engine.hpp): per-CPU bases and where a
// timer is queued (arm on the current CPU, moves, shortcuts that keep it,
// add_timer_on; the running timer: test_running_timer.cpp), CPUs that do not wait for each
// other's softirqs, global jiffies, NOHZ kicks, the event log on the machine,
// the softirq-cost series, and the queues' budgeted passes that make the
// interleaving possible.
#include "sim/machine/engine.hpp"
#include "sim/machine/engine_run.hpp"
#include "tests/machine/multi_cpu_fixture.hpp"
#include "tests/machine/memory_log.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace timersim;

namespace {

using test::Call;
using test::call_on;
using test::kHz;
using test::make_queue;
using test::make_queues;

// The event log as rows.
struct Row {
    std::string design;
    unsigned cpu;
    std::uint64_t time;
    Jiffies jiffies;
    std::string event;
    std::uint64_t timer;
    Jiffies expires;
    std::string level, idx, bucket_expiry;
};

std::vector<Row> parse_log(const std::string& csv) {
    std::vector<Row> rows;
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    REQUIRE(line + "\n" == EventLog::header);
    while (std::getline(in, line)) {
        const std::vector<std::string> f = test::csv_fields(line);
        REQUIRE(f.size() == 18);
        if (f[4] != "enqueue" && f[4] != "fire" && f[4] != "cancel") continue; // cascade and softirq rows
        rows.push_back(Row{f[0], static_cast<unsigned>(std::stoul(f[1])), std::stoull(f[2]), std::stoull(f[3]), f[4],
                           std::stoull(f[5]), std::stoull(f[6]), f[7], f[8], f[9]});
    }
    return rows;
}

// An EventLog into memory, read back as rows.
struct MemoryLog : test::MemoryLog {
    std::vector<Row> rows() { return parse_log(text()); }
};

// Timers armed, re-armed, cancelled and pinned from random CPUs at random
// times, some re-armed from their callbacks; every delay >= 1 jiffy.
class Scatter final : public Workload {
public:
    struct Shape {
        unsigned timers = 600;
        unsigned ops = 6000;
        std::uint64_t max_gap_ns = 2'000'000;
        unsigned periodic = 8;
    };
    Scatter(Sim& sim, std::uint64_t seed, Shape shape) : rng_(seed), shape_(shape) {
        for (unsigned i = 0; i < shape.timers; ++i) ids_.push_back(sim.create_timer(TimerFlags{.deferrable = i % 7 == 5}));
        for (unsigned i = 0; i < shape.periodic; ++i) sim.arm_on(ids_[i], sim.jiffies() + 1 + i, i % sim.cpus());
        std::uint64_t t = 0;
        for (unsigned op = 0; op < shape.ops; ++op) {
            t += rng_() % shape.max_gap_ns;
            sim.schedule_action(t, call_on(static_cast<unsigned>(rng_() % sim.cpus()), op));
        }
    }
    void on_action(Sim& sim, std::uint64_t) override {
        const TimerId id = ids_[shape_.periodic + rng_() % (ids_.size() - shape_.periodic)];
        const unsigned r = static_cast<unsigned>(rng_() % 16);
        const unsigned level = static_cast<unsigned>(rng_() % 4);
        const Jiffies expires = sim.jiffies() + 1 + rng_() % (Jiffies{64} << (3 * level));
        if (r == 0) {
            sim.cancel(id);
        } else if (r == 1) {
            sim.arm_on(id, expires, static_cast<unsigned>(rng_() % sim.cpus()));
        } else if (r == 2) {
            sim.arm(id, expires, ArmCall::mod_timer_pending);
        } else {
            sim.arm(id, expires);
        }
    }
    void on_fire(Sim& sim, const FireRecord& r) override {
        ++fired_on_[r.cpu];
        if (r.id < ids_[0] + shape_.periodic) {
            sim.arm(r.id, sim.jiffies() + 1 + r.id % 5);
        } else if (rng_() % 5 == 0) {
            sim.arm_on(ids_[shape_.periodic + rng_() % (ids_.size() - shape_.periodic)],
                       sim.jiffies() + 1 + rng_() % 500, static_cast<unsigned>(rng_() % sim.cpus()));
        }
    }
    std::map<unsigned, std::uint64_t> fired_on_;

private:
    std::mt19937_64 rng_;
    Shape shape_;
    std::vector<TimerId> ids_;
};

WorkloadSpec scatter_spec(std::uint64_t seed, Scatter::Shape shape = {}) {
    return WorkloadSpec{.name = "scatter", .description = "scatter",
                        .factory = [=](Sim& sim) { return std::make_unique<Scatter>(sim, seed, shape); }};
}

// Checks the log of a zero-cost, always-ticking run: time order, each fire
// at the bucket_expiry of the timer's last enqueue and on that enqueue's
// CPU, cancels only of enqueued timers; and that the rows add up to metrics.
void check_log(const std::vector<Row>& rows, const RunResult& r, bool exact_fires) {
    REQUIRE(!rows.empty());
    std::map<std::uint64_t, Row> last_enqueue;
    std::uint64_t last_time = 0, fires = 0, cancels = 0, enqueues = 0;
    std::map<unsigned, std::uint64_t> fires_on;
    for (const Row& row : rows) {
        CHECK(row.design == std::string(to_string(r.design)));
        CHECK(row.time >= last_time);
        last_time = row.time;
        CHECK(row.cpu < r.config.cpus);
        if (row.event == "enqueue") {
            ++enqueues;
            CHECK(!row.bucket_expiry.empty());
            if (r.design == Design::heap) CHECK(row.level.empty());
            if (r.design == Design::modern) CHECK(std::stoul(row.idx) / 64 == std::stoul(row.level));
            last_enqueue[row.timer] = row;
        } else if (row.event == "fire") {
            ++fires;
            ++fires_on[row.cpu];
            const auto it = last_enqueue.find(row.timer);
            REQUIRE(it != last_enqueue.end());
            CHECK(it->second.cpu == row.cpu);
            if (exact_fires) CHECK(row.jiffies == std::stoull(it->second.bucket_expiry));
            last_enqueue.erase(it);
        } else {
            REQUIRE(row.event == "cancel");
            ++cancels;
            const auto it = last_enqueue.find(row.timer);
            REQUIRE(it != last_enqueue.end());
            CHECK(it->second.cpu == row.cpu);
            last_enqueue.erase(it);
        }
    }
    CHECK(fires == r.total.fired);
    CHECK(cancels == r.total.cancelled + r.total.rearm_dequeues);
    CHECK(enqueues == r.total.counters.enqueues);
    CHECK(last_enqueue.size() == r.total.pending);
    for (unsigned c = 0; c < r.config.cpus; ++c) CHECK(fires_on[c] == r.per_cpu[c].fired);
}

MachineConfig machine(unsigned cpus, std::uint64_t ticks = 4000) {
    MachineConfig m;
    m.hz = kHz;
    m.cpus = cpus;
    m.ticks = ticks;
    m.classic_slack = std::nullopt;
    return m;
}

// Budgeted passes of 1 give the unbounded pass's steps, on random
// workloads whose callbacks arm and cancel (the same random stream on both).
template <class Q>
void check_stepping_matches(std::uint64_t seed) {
    Q plain = make_queue<Q>();
    Q stepped = make_queue<Q>();
    std::mt19937_64 rng_plain(seed), rng_stepped(seed);
    constexpr unsigned kTimers = 400;
    for (unsigned i = 0; i < kTimers; ++i) {
        plain.create(TimerFlags{.deferrable = i % 9 == 4});
        stepped.create(TimerFlags{.deferrable = i % 9 == 4});
    }
    auto op = [](Q& q, std::mt19937_64& rng) {
        const TimerId id = static_cast<TimerId>(rng() % kTimers);
        if (rng() % 6 == 0) {
            q.cancel(id);
        } else {
            const unsigned level = static_cast<unsigned>(rng() % 4);
            q.arm(id, q.jiffies() + rng() % (Jiffies{64} << (3 * level)), ArmCall::mod_timer);
        }
    };
    std::vector<FiredTimer> a, b;
    auto fire_a = [&](const FiredTimer& f) {
        a.push_back(f);
        if (rng_plain() % 3 == 0) op(plain, rng_plain);
    };
    auto fire_b = [&](const FiredTimer& f) {
        b.push_back(f);
        if (rng_stepped() % 3 == 0) op(stepped, rng_stepped);
    };
    for (unsigned step = 0; step < 3000; ++step) {
        for (int i = 0; i < 5; ++i) {
            op(plain, rng_plain);
            op(stepped, rng_stepped);
        }
        // Sometimes several jiffies at once (a late softirq).
        const Jiffies advance = (step % 17 == 0) ? 1 + step % 300 : 1;
        plain.set_jiffies(plain.jiffies() + advance);
        stepped.set_jiffies(stepped.jiffies() + advance);
        REQUIRE(plain.softirq_due() == stepped.softirq_due());
        if (!plain.softirq_due()) continue;
        plain.run_softirq(fire_a);
        if (stepped.run_softirq(fire_b, 1))
            while (stepped.resume_softirq(fire_b, 1)) {
            }
        REQUIRE_FALSE(stepped.carry_over());
    }
    REQUIRE(a.size() == b.size());
    REQUIRE(a.size() > 1000);
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].id == b[i].id);
        CHECK(a[i].expires == b[i].expires);
        CHECK(a[i].base_clk == b[i].base_clk);
    }
    CHECK(plain.counters() == stepped.counters());
    CHECK(plain.pending() == stepped.pending());
}

} // namespace

TEST_CASE("a pass in budgets of one expiry takes exactly the unbounded pass's steps") {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        check_stepping_matches<ModernWheel>(seed);
        check_stepping_matches<ClassicWheel>(seed);
        check_stepping_matches<HeapQueue>(seed);
    }
}

TEST_CASE("arm_detach applies the timer's own base's shortcuts, else takes it off") {
    SUBCASE("modern: same expiry and same bucket stay, another bucket leaves") {
        ModernWheel q = make_queue<ModernWheel>();
        const TimerId t = q.create();
        const Jiffies j = q.jiffies();
        q.arm(t, j + 1000);
        Jiffies e = j + 1000;
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::same_expiry);
        e = j + 1001; // level 1 granularity 8... 1000 is level 2 (granularity 64): same bucket
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::same_bucket);
        CHECK(q.placement(t).expires == j + 1001);
        e = j + 5;
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::queued);
        CHECK(e == j + 5);
        CHECK_FALSE(q.is_pending(t));
        CHECK(q.pending() == 0);
        CHECK(q.counters().cancels == 0);
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer_pending) == ArmOutcome::not_pending);
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::queued);
    }
    SUBCASE("classic: slack first, then the same-expiry shortcut") {
        ClassicWheel q(ClassicWheel::Config{.hz = kHz});
        const TimerId t = q.create();
        const Jiffies j = q.jiffies();
        q.arm(t, j + 10000); // slack rounds it
        const Jiffies armed = q.placement(t).expires;
        CHECK(armed != j + 10000);
        Jiffies e = j + 10000;
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::same_expiry);
        e = j + 20000;
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::queued);
        CHECK(e != j + 20000); // the value to enqueue elsewhere, slack applied
        CHECK_FALSE(q.is_pending(t));
    }
    SUBCASE("heap: no shortcut") {
        HeapQueue q = make_queue<HeapQueue>();
        const TimerId t = q.create();
        q.arm(t, q.jiffies() + 50);
        Jiffies e = q.jiffies() + 50;
        CHECK(q.arm_detach(t, e, ArmCall::mod_timer) == ArmOutcome::queued);
        CHECK(q.pending() == 0);
    }
}

TEST_CASE("one CPU through the multi-CPU constructor is the one-CPU engine") {
    for (std::uint64_t seed : {4u, 5u}) {
        ModernWheel single = make_queue<ModernWheel>();
        std::vector<ModernWheel> one = make_queues<ModernWheel>(1);
        const EngineConfig config{.hz = kHz, .tick_jitter_ns = 100'000, .jitter_seed = seed};
        Engine<ModernWheel> a(single, config);
        Engine<ModernWheel> b(std::span<ModernWheel>(one), config);
        Scatter wa(a, seed, {});
        Scatter wb(b, seed, {});
        a.set_workload(&wa);
        b.set_workload(&wb);
        a.run_ticks(3000);
        b.run_ticks(3000);
        CHECK(a.metrics().fired > 1000);
        CHECK(a.metrics() == b.metrics());
        CHECK(a.now_ns() == b.now_ns());
    }
}

TEST_CASE("arm() queues on the current CPU, and the callback runs there") {
    std::vector<HeapQueue> queues = make_queues<HeapQueue>(3);
    Engine<HeapQueue> engine(std::span<HeapQueue>(queues), EngineConfig{.hz = kHz, .costs = CostModel::zero()});
    CHECK(engine.cpus() == 3);
    const Jiffies j0 = engine.jiffies();
    const TimerId t = engine.create_timer();
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        CHECK(sim.current_cpu() == static_cast<unsigned>(tag));
        sim.arm(t, sim.jiffies() + 10);
    };
    engine.set_workload(&w);
    engine.schedule_action(tick_time_ns(5, kHz), call_on(2, 2));
    engine.run_ticks(20);
    REQUIRE(w.fired.size() == 1);
    CHECK(w.fired[0].cpu == 2);
    CHECK(w.fired[0].fired_jiffies == j0 + 15);
    CHECK(engine.timer_cpu(t) == 2);
    CHECK(engine.metrics(2).fired == 1);
    CHECK(engine.metrics(2).arms == 1);
    CHECK(engine.metrics(0).fired == 0);
    CHECK(engine.queue(2).counters().enqueues == 1);
    CHECK(engine.queue(0).counters().enqueues == 0);
    // A timer that never visited a CPU costs it nothing: only CPU 2 made a node.
    CHECK(engine.queue(2).counters().arms == 1);
    CHECK_THROWS_AS(engine.schedule_action(0, call_on(3)), std::invalid_argument);
    CHECK_THROWS_AS(engine.arm_on(t, j0 + 100, 3), std::invalid_argument);
    CHECK_THROWS_AS(engine.arm(12345, j0 + 1), std::invalid_argument);
}

TEST_CASE("a pending timer re-armed from another CPU moves there, unless a shortcut keeps it") {
    std::vector<ModernWheel> queues = make_queues<ModernWheel>(2);
    Engine<ModernWheel> engine(std::span<ModernWheel>(queues), EngineConfig{.hz = kHz, .costs = CostModel::zero()});
    MemoryLog log;
    engine.set_event_log(log.log.get(), "modern");
    const TimerId t = engine.create_timer();
    const Jiffies j0 = engine.jiffies();
    engine.arm(t, j0 + 1000); // setup runs on CPU 0
    CHECK(engine.timer_cpu(t) == 0);
    std::vector<ArmOutcome> outcomes;
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) { outcomes.push_back(sim.arm(t, j0 + tag)); };
    engine.set_workload(&w);
    // From CPU 1: the same expiry, then the same bucket (level 2, 64 jiffies):
    // it stays on CPU 0. Then another bucket: it moves.
    engine.schedule_action(1'000'000, call_on(1, 1000));
    engine.schedule_action(2'000'000, call_on(1, 1001));
    engine.schedule_action(3'000'000, call_on(1, 3000));
    engine.run_until(3'000'000);
    REQUIRE(outcomes.size() == 3);
    CHECK(outcomes[0] == ArmOutcome::same_expiry);
    CHECK(outcomes[1] == ArmOutcome::same_bucket);
    CHECK(outcomes[2] == ArmOutcome::queued);
    CHECK(engine.timer_cpu(t) == 1);
    CHECK(engine.queue(0).pending() == 0);
    CHECK(engine.queue(1).pending() == 1);
    CHECK(engine.metrics(1).rearm_dequeues == 1);
    CHECK(engine.metrics(1).arms == 3);
    CHECK(engine.metrics().counters.arms == 4); // each arm counted once, where it ended
    const std::vector<Row> rows = log.rows();
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].event == "enqueue");
    CHECK(rows[0].cpu == 0);
    CHECK(rows[1].event == "cancel");
    CHECK(rows[1].cpu == 0);
    CHECK(rows[1].expires == j0 + 1001); // ->expires while it was pending
    CHECK(rows[1].time == 3'000'000);
    CHECK(rows[2].event == "enqueue");
    CHECK(rows[2].cpu == 1);
    CHECK(rows[2].expires == j0 + 3000);
}

TEST_CASE("a long softirq on one CPU does not hold up the others") {
    const CostModel costs{};
    std::vector<ModernWheel> queues = make_queues<ModernWheel>(2);
    Engine<ModernWheel> engine(std::span<ModernWheel>(queues), EngineConfig{.hz = kHz, .costs = costs});
    const Jiffies j0 = engine.jiffies();
    constexpr int kBurst = 100'000;
    for (int i = 0; i < kBurst; ++i) engine.arm(engine.create_timer(), j0 + 10); // CPU 0: a burst at tick 10
    const TimerId other = engine.create_timer();
    Jiffies seen_in_action = 0;
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        if (tag == 1) sim.arm(other, j0 + 11); // level 0 runs it one jiffy later: tick 12
        if (tag == 2) seen_in_action = sim.jiffies();
    };
    engine.set_workload(&w);
    engine.schedule_action(tick_time_ns(1, kHz), call_on(1, 1));
    engine.schedule_action(tick_time_ns(13, kHz) + 1, call_on(1, 2)); // while CPU 0's softirq runs
    engine.run_ticks(1);
    REQUIRE(engine.placement(other).bucket_expiry == j0 + 12);
    engine.run_ticks(100);
    const CpuMetrics m0 = engine.metrics(0);
    const CpuMetrics m1 = engine.metrics(1);
    REQUIRE(m0.fired == kBurst);
    CHECK(m0.max_softirq_ns > 4 * (1'000'000'000ull / kHz)); // spans several ticks
    const FireRecord* r = w.find(other);
    REQUIRE(r != nullptr);
    CHECK(r->cpu == 1);
    CHECK(r->fired_jiffies == j0 + 12);
    // Right after CPU 1's own tick 12: entry, one bucket scan, one expiry.
    CHECK(r->fire_ns < tick_time_ns(12, kHz) + 5'000);
    CHECK(r->fire_ns < tick_time_ns(10, kHz) + m0.max_softirq_ns);
    // Global jiffies: CPU 1 sees tick 13 although CPU 0 is still in its softirq.
    CHECK(seen_in_action == j0 + 13);
    CHECK(m1.actions_delayed == 0);
    CHECK(m0.ticks_in_softirq >= 4);
    CHECK(m1.ticks_in_softirq == 0);
    // The fires of CPU 0 that came after tick 12 carry CPU 0's late clock.
    CHECK(engine.metrics().fired == kBurst + 1);
}

TEST_CASE("NOHZ: a timer queued on a sleeping CPU from another CPU kicks it") {
    std::vector<HeapQueue> queues = make_queues<HeapQueue>(2);
    Engine<HeapQueue> engine(std::span<HeapQueue>(queues),
                             EngineConfig{.hz = kHz, .costs = CostModel::zero(), .nohz_idle = true});
    const TimerId t = engine.create_timer();
    const TimerId late = engine.create_timer();
    const Jiffies j0 = engine.jiffies();
    Call w;
    w.action = [&](Sim& sim, std::uint64_t tag) {
        if (tag == 1) sim.arm_on(late, sim.jiffies() + 500, 1); // CPU 1 sleeps until then
        if (tag == 2) sim.arm_on(t, sim.jiffies() + 5, 1);      // earlier still: kicks it again
    };
    engine.set_workload(&w);
    engine.schedule_action(1'000'000'000, call_on(0, 1));
    engine.schedule_action(1'100'000'000, call_on(0, 2));
    engine.run_until(1'050'000'000);
    CHECK(engine.tick_stopped(1));
    engine.run_until(3'000'000'000);
    const FireRecord* r = w.find(t);
    REQUIRE(r != nullptr);
    CHECK(r->cpu == 1);
    CHECK(r->fired_jiffies == r->requested);
    CHECK(r->fire_ns == static_cast<std::uint64_t>(engine.jiffy_time_ns(r->requested)));
    const FireRecord* l = w.find(late);
    REQUIRE(l != nullptr);
    CHECK(l->fired_jiffies == l->requested);
    CHECK(l->requested == j0 + 250 + 500);
    const CpuMetrics m1 = engine.metrics(1);
    CHECK(m1.wakeups_by_remote == 2);
    CHECK(m1.wakeups_by_action == 0);
    CHECK(m1.ticks < 20);
    CHECK(engine.metrics(0).ticks < 20);
}

TEST_CASE("every CPU ticks at the same nominal times; jitter is drawn per CPU") {
    std::vector<HeapQueue> queues = make_queues<HeapQueue>(3);
    Engine<HeapQueue> engine(std::span<HeapQueue>(queues), EngineConfig{.hz = 1000, .tick_jitter_ns = 500'000});
    const Jiffies j0 = engine.jiffies();
    bool differ = false;
    for (std::uint64_t n = 1; n <= 200; ++n) {
        engine.run_ticks(n);
        for (unsigned c = 0; c < 3; ++c) {
            CHECK(engine.ticks(c) == n);
            CHECK(engine.last_tick_ns(c) >= tick_time_ns(n, 1000));
            CHECK(engine.last_tick_ns(c) <= tick_time_ns(n, 1000) + 500'000);
        }
        differ = differ || engine.last_tick_ns(0) != engine.last_tick_ns(1);
        CHECK(engine.jiffies() == j0 + n);
    }
    CHECK(differ);
}

TEST_CASE("the event log on the machine: time order, fires at the last enqueue's bucket, counts add up") {
    for (Design d : all_designs()) {
        for (unsigned cpus : {1u, 4u}) {
            CAPTURE(to_string(d));
            CAPTURE(cpus);
            MachineConfig m = machine(cpus);
            m.costs = CostModel::zero();
            MemoryLog log;
            const RunResult r = run_machine(d, m, scatter_spec(11), {}, log.log.get());
            CHECK(r.total.fired > 2000);
            CHECK(r.total.rearm_dequeues > 100);
            CHECK(r.total.cancelled > 50);
            check_log(log.rows(), r, true);
            if (cpus > 1)
                for (unsigned c = 0; c < cpus; ++c) CHECK(r.per_cpu[c].fired > 100);
        }
    }
}

TEST_CASE("the event log with costs, NOHZ and a bound still adds up") {
    for (Design d : all_designs()) {
        CAPTURE(to_string(d));
        MachineConfig m = machine(3);
        m.nohz_idle = true;
        m.tick_jitter_ns = 200'000;
        m.max_expiries_per_softirq = 4;
        m.costs.callback_ns = 20'000;
        MemoryLog log;
        const RunResult r = run_machine(d, m, scatter_spec(12, {.max_gap_ns = 20'000'000}), {}, log.log.get());
        CHECK(r.total.fired > 500);
        check_log(log.rows(), r, false);
    }
}

TEST_CASE("same inputs, same multi-CPU run; totals merge the CPUs") {
    for (Design d : all_designs()) {
        CAPTURE(to_string(d));
        MachineConfig m = machine(4);
        m.tick_jitter_ns = 300'000;
        m.nohz_idle = d != Design::classic;
        const RunResult a = run_machine(d, m, scatter_spec(21));
        const RunResult b = run_machine(d, m, scatter_spec(21));
        CHECK(a.per_cpu == b.per_cpu);
        CHECK(a.series == b.series);
        // The reports of such runs: tests/report/test_run_report.cpp.
        CHECK_FALSE(run_machine(d, m, scatter_spec(22)).per_cpu == a.per_cpu);
        std::uint64_t fired = 0, arms = 0, ticks = 0, max_softirq = 0, errors = 0;
        for (const CpuMetrics& c : a.per_cpu) {
            fired += c.fired;
            arms += c.arms;
            ticks += c.ticks;
            max_softirq = std::max(max_softirq, c.max_softirq_ns);
            errors += c.error_jiffies.total();
        }
        CHECK(a.total.fired == fired);
        CHECK(a.total.arms == arms);
        CHECK(a.total.ticks == ticks);
        CHECK(a.total.max_softirq_ns == max_softirq);
        CHECK(a.total.error_jiffies.total() == errors);
        CHECK(a.total.error_ns.count() == fired);
    }
}

TEST_CASE("the softirq series sums to the totals, in at most 2000 windows") {
    for (Design d : all_designs()) {
        for (unsigned cpus : {1u, 3u}) {
            CAPTURE(to_string(d));
            CAPTURE(cpus);
            MachineConfig m = machine(cpus, 5001);
            m.costs.callback_ns = 5'000;
            const RunResult r = run_machine(d, m, scatter_spec(31));
            CHECK(r.series_window_ticks == 3);
            REQUIRE(r.series.size() == 1667);
            std::uint64_t ns = 0, moves = 0, expired = 0, max_ns = 0;
            for (std::size_t i = 0; i < r.series.size(); ++i) {
                const SeriesPoint& p = r.series[i];
                CHECK(p.start_ns == tick_time_ns(i * 3 + 1, kHz));
                ns += p.softirq_ns;
                moves += p.cascade_moves;
                expired += p.expired;
                max_ns = std::max(max_ns, p.max_softirq_ns);
                CHECK(p.max_softirq_ns <= p.softirq_ns);
            }
            CHECK(r.total.softirq_work_ns > 0);
            CHECK(ns == r.total.softirq_work_ns);
            CHECK(moves == r.total.counters.cascade_moves);
            CHECK(expired == r.total.counters.expired);
            CHECK(max_ns == r.total.max_softirq_ns);
            if (d == Design::classic) CHECK(moves > 0);
        }
    }
    MachineConfig m = machine(1, 100);
    m.series_window_ticks = 7;
    CHECK(run_machine(Design::modern, m, scatter_spec(1, {.timers = 50, .ops = 100})).series.size() == 15);
    m.series_window_ticks = 0;
    CHECK(run_machine(Design::modern, m, scatter_spec(1, {.timers = 50, .ops = 100})).series.size() == 100);
    m.ticks = 10'000'000;
    m.series_window_ticks = 1;
    CHECK_THROWS_AS(run_machine(Design::modern, m, scatter_spec(1)), std::invalid_argument);
    MachineConfig none = machine(0);
    CHECK_THROWS_AS(run_machine(Design::modern, none, scatter_spec(1)), std::invalid_argument);
}
