// Recording and replaying traces (workloads/traces/replay/trace_recorder.hpp,
// workloads/traces/replay/trace_replay.hpp): a workload recorded on a design and replayed
// on the same design and machine gives the same metrics as running it
// directly; cb= blocks are applied inside their timer's callback, held until
// it fires, or counted when it never does; long traces replay; bad traces fail
// with FILE:LINE: what (field).
#include "sim/machine/engine_run.hpp"
#include "workloads/generators/generator_catalog.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"
#include "workloads/traces/replay/trace_recorder.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include "test_data_dir.hpp"
#include "tests/kernel_trace_lines.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;

// A file under the system's temporary directory, removed at the end.
struct TempFile {
    explicit TempFile(const std::string& name)
        : path((std::filesystem::temp_directory_path() /
                fmt::format("timersim-test-replay-{}-{}", name, static_cast<const void*>(this)))
                   .string()) {}
    ~TempFile() { std::filesystem::remove(path); }
    std::string path;
};

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

// Everything a replay must reproduce: arms, re-arms, cancels, several arms
// in one action, mod_timer_pending(), pinned arms, deferrable timers,
// actions scheduled as Action::arm/cancel, and callbacks that re-arm their
// own timer with exponential backoff (a retransmit timer), cancel another
// timer or arm one. Deterministic: one LCG, drawn only in actions.
class BackoffWorkload final : public Workload {
public:
    // What the trace cannot show, counted for the comparison: calls of
    // mod_timer_pending() on an idle timer (they do nothing, so nothing is
    // written), and steps that made no timer call but had to wait for a
    // softirq (a replay has no step there to wait).
    struct Silent {
        std::uint64_t idle_pending_calls = 0;
        std::uint64_t delayed_steps = 0;
    };

    BackoffWorkload(Sim& sim, std::uint64_t ticks, bool use_pending, Silent* silent)
        : end_ns_(ticks * 1'000'000'000ull / sim.hz()), use_pending_(use_pending), silent_(silent) {
        // use_pending: also steps that make no timer call (mod_timer_pending()
        // of an idle timer, or only scheduling a later step).
        for (unsigned i = 0; i < kTimers; ++i) ids_.push_back(sim.create_timer(TimerFlags{.deferrable = i % 5 == 4}));
        backoff_.assign(kTimers, 0);
        sim.arm(ids_[0], sim.jiffies() + 3); // armed while the workload is built
        schedule_next(sim);
    }

    void on_action(Sim& sim, std::uint64_t) override {
        const unsigned i = static_cast<unsigned>(draw() % kTimers);
        const Jiffies j = sim.jiffies();
        const bool delayed = sim.now_ns() > next_ns_;
        bool silent = false;
        switch (draw() % 9) {
        case 0:
        case 1:
            backoff_[i] = 0;
            sim.arm(ids_[i], j + 1 + draw() % 60);
            break;
        case 2: // two timers in one step
            sim.arm(ids_[i], j + 1 + draw() % 30);
            sim.arm(ids_[(i + 1) % kTimers], j + 1 + draw() % 30);
            break;
        case 3: sim.cancel(ids_[i]); break;
        case 4:
            if (!use_pending_) {
                sim.arm(ids_[i], j + 1 + draw() % 20);
            } else if (sim.arm(ids_[i], j + 1 + draw() % 20, ArmCall::mod_timer_pending) ==
                       ArmOutcome::not_pending) {
                silent = true;
                if (silent_) ++silent_->idle_pending_calls;
            }
            break;
        case 5: sim.arm(ids_[i], j + draw() % 40, ArmCall::mod_timer_pinned); break;
        case 6: {
            Action a;
            a.kind = Action::Kind::arm;
            a.timer = ids_[i];
            a.expires = j + 2 + draw() % 50;
            sim.schedule_action(next_ns_ + 1 + draw() % 3'000'000, a);
            silent = true;
            if (!use_pending_) visible_step(sim, i, j, silent);
            break;
        }
        case 7: {
            Action a;
            a.kind = Action::Kind::cancel;
            a.timer = ids_[i];
            sim.schedule_action(next_ns_ + 1 + draw() % 3'000'000, a);
            silent = true;
            if (!use_pending_) visible_step(sim, i, j, silent);
            break;
        }
        default: sim.arm(ids_[i], j); break; // already due: fires at the next tick
        }
        if (silent && delayed && silent_) ++silent_->delayed_steps;
        schedule_next(sim);
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        const unsigned i = fired.id; // ids are 0..kTimers-1 in creation order
        if (i % 3 == 0 && backoff_[i] < 6) {
            ++backoff_[i]; // retransmit: back off from the timer's own callback
            sim.arm(fired.id, sim.jiffies() + (Jiffies{5} << backoff_[i]));
        }
        if (i % 7 == 1) sim.cancel(ids_[(i + 1) % kTimers]);
        if (i % 11 == 2) sim.arm(ids_[(i + 3) % kTimers], sim.jiffies() + 2, ArmCall::mod_timer_pinned);
    }

private:
    static constexpr unsigned kTimers = 40;
    // Without mod_timer_pending() every step makes a timer call, so that
    // the trace shows every step (a NOHZ machine wakes for each).
    void visible_step(Sim& sim, unsigned i, Jiffies j, bool& silent) {
        sim.arm(ids_[(i + 5) % kTimers], j + 7);
        silent = false;
    }
    std::uint64_t draw() {
        rng_ = rng_ * 6364136223846793005ull + 1442695040888963407ull;
        return rng_ >> 33;
    }
    void schedule_next(Sim& sim) {
        next_ns_ += 1 + draw() % 4'000'000;
        if (next_ns_ >= end_ns_) return;
        Action a;
        a.kind = Action::Kind::call;
        if (sim.cpus() > 1) a.cpu = static_cast<std::uint32_t>(draw() % sim.cpus());
        sim.schedule_action(next_ns_, a);
    }

    std::vector<TimerId> ids_;
    std::vector<unsigned> backoff_;
    std::uint64_t rng_ = 12345;
    std::uint64_t next_ns_ = 0;
    std::uint64_t end_ns_;
    bool use_pending_;
    Silent* silent_;
};

WorkloadSpec spec_of(WorkloadFactory factory) {
    return WorkloadSpec{.name = "test", .description = "test", .factory = std::move(factory)};
}

WorkloadFactory backoff_workload(std::uint64_t ticks, bool use_pending = true,
                                 BackoffWorkload::Silent* silent = nullptr) {
    return [=](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<BackoffWorkload>(sim, ticks, use_pending, silent);
    };
}

MachineConfig machine() {
    MachineConfig m;
    m.hz = kHz;
    m.ticks = 3000;
    // A softirq long enough that workload steps land inside it and wait.
    m.costs.callback_ns = 200'000;
    return m;
}

TraceHeader header_of(const MachineConfig& m) {
    return TraceHeader{.hz = m.hz, .start_jiffies = m.start_jiffies.value_or(initial_jiffies(m.hz))};
}

// Records the workload on `design` into `path`; returns the recorded run.
RunResult record(Design design, const MachineConfig& m, const std::string& path, bool use_pending = true,
                 BackoffWorkload::Silent* silent = nullptr) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    RunResult result;
    {
        TraceWriter writer(f, header_of(m));
        result = run_machine(design, m, spec_of(recording(backoff_workload(m.ticks, use_pending, silent), writer)));
        writer.flush();
    }
    std::fclose(f);
    return result;
}

RunResult replay(Design design, const MachineConfig& m, const std::string& path, TraceReplayStats* stats,
                 TraceKind kind = TraceKind::timersim) {
    const TraceSummary summary = summarize_trace(path, kind, m.hz);
    return run_machine(design, m, spec_of(trace_replay(path, kind, summary.header, stats)));
}

// A workload that forwards to another and logs the fires it sees.
struct Fire {
    TimerId id;
    Jiffies fired_jiffies;
    Jiffies expires;
};
class FireLog final : public Workload {
public:
    FireLog(std::unique_ptr<Workload> inner, std::vector<Fire>& log) : inner_(std::move(inner)), log_(log) {}
    void on_action(Sim& sim, std::uint64_t tag) override { inner_->on_action(sim, tag); }
    void on_fire(Sim& sim, const FireRecord& f) override {
        log_.push_back(Fire{f.id, f.fired_jiffies, f.expires});
        inner_->on_fire(sim, f);
    }

private:
    std::unique_ptr<Workload> inner_;
    std::vector<Fire>& log_;
};

// Replays `text` (of `kind`, on its own clock) on the heap (every timer
// fires exactly at its expiry), on a ticking machine.
RunResult replay_text(const std::string& text, std::vector<Fire>& fires, TraceReplayStats& stats,
                      std::uint64_t ticks = 200, TraceKind kind = TraceKind::timersim) {
    TempFile file("text");
    write_text(file.path, text);
    const TraceHeader header = summarize_trace(file.path, kind, {}).header;
    MachineConfig m;
    m.hz = header.hz;
    m.start_jiffies = header.start_jiffies;
    m.ticks = ticks;
    m.costs = CostModel::zero();
    const WorkloadFactory inner = trace_replay(file.path, kind, header, &stats);
    return run_machine(Design::heap, m, spec_of([&](Sim& sim) -> std::unique_ptr<Workload> {
                           return std::make_unique<FireLog>(inner(sim), fires);
                       }));
}

const std::string kHeader = "# timersim-trace v1 hz=250 start_jiffies=1000\n";

// The fields of two CpuMetrics that differ, by name ("" if none).
std::string differing(const CpuMetrics& a, const CpuMetrics& b) {
    std::string out;
    const auto field = [&](const char* name, auto x, auto y) {
        if (x != y) out += fmt::format("{} {} != {}; ", name, x, y);
    };
    field("arms", a.arms, b.arms);
    field("rearm_dequeues", a.rearm_dequeues, b.rearm_dequeues);
    field("fired", a.fired, b.fired);
    field("cancelled", a.cancelled, b.cancelled);
    field("pending", a.pending, b.pending);
    field("early", a.early, b.early);
    field("actions_delayed", a.actions_delayed, b.actions_delayed);
    field("softirq_work_ns", a.softirq_work_ns, b.softirq_work_ns);
    field("task_work_ns", a.task_work_ns, b.task_work_ns);
    field("ticks_raised", a.ticks_raised, b.ticks_raised);
    field("ticks_in_softirq", a.ticks_in_softirq, b.ticks_in_softirq);
    field("max_softirq_ns", a.max_softirq_ns, b.max_softirq_ns);
    field("enqueues", a.counters.enqueues, b.counters.enqueues);
    field("same_expiry_shortcuts", a.counters.same_expiry_shortcuts, b.counters.same_expiry_shortcuts);
    field("same_bucket_shortcuts", a.counters.same_bucket_shortcuts, b.counters.same_bucket_shortcuts);
    field("cascade_moves", a.counters.cascade_moves, b.counters.cascade_moves);
    field("buckets_scanned", a.counters.buckets_scanned, b.counters.buckets_scanned);
    field("next_expiry_search_steps", a.counters.next_expiry_search_steps, b.counters.next_expiry_search_steps);
    field("tick_stops", a.tick_stops, b.tick_stops);
    field("wakeups_by_action", a.wakeups_by_action, b.wakeups_by_action);
    field("wakeups_by_timer", a.wakeups_by_timer, b.wakeups_by_timer);
    field("ticks_skipped", a.ticks_skipped, b.ticks_skipped);
    if (!(a.error_ns == b.error_ns)) out += "error_ns; ";
    if (a.error_jiffies.counts() != b.error_jiffies.counts()) out += "error_jiffies; ";
    if (!(a.softirq == b.softirq)) out += "softirq stats; ";
    if (out.empty() && !(a == b)) out = "(a field not listed here)";
    return out;
}

void check_replay_reproduces(Design design, bool use_pending, bool nohz = false, unsigned cpus = 1) {
    CAPTURE(to_string(design));
    CAPTURE(use_pending);
    CAPTURE(nohz);
    CAPTURE(cpus);
    MachineConfig m = machine();
    m.nohz_idle = nohz;
    m.cpus = cpus;
    const RunResult direct = run_machine(design, m, spec_of(backoff_workload(m.ticks, use_pending)));
    TempFile file("metrics");
    BackoffWorkload::Silent silent;
    const RunResult recorded = record(design, m, file.path, use_pending, &silent);
    // Recording changes nothing.
    CHECK(differing(recorded.total, direct.total) == "");
    REQUIRE(direct.total.fired > 500);
    REQUIRE(direct.total.actions_delayed > silent.delayed_steps); // steps that waited for a softirq are in the test
    if (nohz) REQUIRE(direct.total.tick_stops > 100);
    if (use_pending) REQUIRE(silent.idle_pending_calls > 0);

    TraceReplayStats stats;
    const RunResult replayed = replay(design, m, file.path, &stats);
    CHECK(stats.callback_events > 100);
    CHECK(stats.callback_events_unmatched == 0);
    // What the trace cannot show is what the replay does not do: the calls
    // of mod_timer_pending() on idle timers, and the waiting of steps that
    // made no timer call at all.
    CpuMetrics expected = direct.total;
    expected.arms -= silent.idle_pending_calls;
    expected.counters.arms -= silent.idle_pending_calls;
    expected.actions_delayed -= silent.delayed_steps;
    if (cpus > 1) {
        // The trace's times never decrease, whatever the CPU: a step of one
        // CPU due while another CPU's callbacks were already written later
        // is written at their time, so it can come after (or no longer
        // after) a softirq of its own CPU. Nothing else changes.
        const auto a = static_cast<std::int64_t>(replayed.total.actions_delayed);
        const auto b = static_cast<std::int64_t>(expected.actions_delayed);
        CHECK(std::abs(a - b) <= 3);
        expected.actions_delayed = replayed.total.actions_delayed;
    }
    CHECK(differing(replayed.total, expected) == "");
}

} // namespace

TEST_CASE("a workload recorded on a design replays on it with the same metrics") {
    for (const Design design : all_designs()) check_replay_reproduces(design, false);
    // mod_timer_pending() of a pending timer is written as a modify and
    // replayed as mod_timer(): the same on the modern wheel and the heap.
    check_replay_reproduces(Design::modern, true);
    check_replay_reproduces(Design::heap, true);
    // NOHZ idle: a replay wakes the CPU for the same steps.
    check_replay_reproduces(Design::modern, false, true);
    check_replay_reproduces(Design::classic, false, true);
    // Two CPUs: steps on both, callbacks on the CPU whose base fired them.
    for (const Design design : all_designs()) check_replay_reproduces(design, false, false, 2);
}

TEST_CASE("the generators recorded and replayed on the same design give the same metrics") {
    for (const char* workload : {"tcp-retransmit", "socket-timeouts", "mixed"}) {
        CAPTURE(workload);
        GeneratorParams params;
        params.connections = 400;
        params.tcp_retransmit.loss = 0.05;
        MachineConfig m;
        m.hz = kHz;
        m.ticks = 5000; // 20 s
        const WorkloadSpec spec = spec_of(workload_list_factory(workload, params, m.ticks, m.hz));
        for (const Design design : all_designs()) {
            CAPTURE(to_string(design));
            const RunResult direct = run_machine(design, m, spec);
            REQUIRE(direct.total.fired > 100);
            TempFile file("generator");
            std::FILE* f = std::fopen(file.path.c_str(), "wb");
            REQUIRE(f);
            {
                TraceWriter writer(f, header_of(m));
                run_machine(design, m, spec_of(recording(spec.factory, writer)));
                writer.flush();
            }
            std::fclose(f);
            TraceReplayStats stats;
            const RunResult replayed = replay(design, m, file.path, &stats);
            CHECK(stats.callback_events_unmatched == 0);
            CHECK(differing(replayed.total, direct.total) == "");
        }
    }
}

TEST_CASE("recording is deterministic and a recorded trace records back to the same bytes") {
    const MachineConfig m = machine();
    TempFile a("a"), b("b");
    record(Design::modern, m, a.path);
    record(Design::modern, m, b.path);
    std::ifstream fa(a.path), fb(b.path);
    const std::string ta((std::istreambuf_iterator<char>(fa)), {}), tb((std::istreambuf_iterator<char>(fb)), {});
    CHECK(ta == tb);
    CHECK(ta.find(" cb=") != std::string::npos);
    CHECK(ta.find(" flags=deferrable") != std::string::npos);
    CHECK(ta.find(" flags=pinned") != std::string::npos);
    CHECK(ta.find(" modify ") != std::string::npos); // mod_timer_pending() of a pending timer

    // Replaying it while recording again writes the same events (timers are
    // named by the replay's ids then, and a mod_timer_pending() that did
    // something is replayed as a mod_timer()).
    TempFile c("c");
    {
        std::FILE* f = std::fopen(c.path.c_str(), "wb");
        REQUIRE(f);
        TraceWriter writer(f, header_of(m));
        const TraceSummary s = summarize_trace(a.path, TraceKind::timersim, {});
        run_machine(Design::modern, m,
                    spec_of(recording(trace_replay(a.path, TraceKind::timersim, s.header), writer)));
        writer.flush();
        std::fclose(f);
    }
    std::ifstream fc(c.path);
    const std::string tc((std::istreambuf_iterator<char>(fc)), {});
    const auto count = [](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    CHECK(count(tc, "\n") == count(ta, "\n"));
    CHECK(count(tc, " cb=") == count(ta, " cb="));
    CHECK(count(tc, " cancel ") == count(ta, " cancel "));
    CHECK(count(tc, "pinned") == count(ta, "pinned"));
}

TEST_CASE("a callback block is held until its timer fires in the replay, and applied inside that callback") {
    // Recorded: timer 1 fired at 5 ms and its callback re-armed it and armed
    // timer 2. Replayed on the heap, timer 1 fires at jiffies 1010 (40 ms).
    std::vector<Fire> fires;
    TraceReplayStats stats;
    replay_text(kHeader + "0 arm 1 in=10j\n"
                          "5ms arm 1 in=20j cb=1\n"
                          "5ms arm 2 in=5j cb=1\n",
                fires, stats);
    REQUIRE(fires.size() == 3);
    CHECK(fires[0].id == 0);
    CHECK(fires[0].fired_jiffies == 1010);
    // Inside the callback: relative to the replay's jiffies then (1010).
    CHECK(fires[1].id == 1);
    CHECK(fires[1].expires == 1015);
    CHECK(fires[2].id == 0);
    CHECK(fires[2].expires == 1030);
    CHECK(stats.callback_events == 2);
    CHECK(stats.callback_events_unmatched == 0);
    CHECK(stats.events == 3);
}

TEST_CASE("a callback block of a timer that already fired unused is applied at its time") {
    // Timer 1 fires at 40 ms; the block says its callback ran at 100 ms (a
    // design that fires later recorded it): applied at 100 ms, jiffies 1025.
    std::vector<Fire> fires;
    TraceReplayStats stats;
    replay_text(kHeader + "0 arm 1 in=10j\n100ms arm 1 in=4j cb=1\n", fires, stats);
    REQUIRE(fires.size() == 2);
    CHECK(fires[0].fired_jiffies == 1010);
    CHECK(fires[1].expires == 1029);
    CHECK(stats.callback_events == 1);
    CHECK(stats.callback_events_unmatched == 0);
}

TEST_CASE("a pump left another timer's early fire to itself: it comes back at that block's time") {
    // Recorded on CPU 0 (jiffies 4294900000 at 1 s): aa and bb, armed for
    // +10 and +12, ran 5 and 8 jiffies late, at 1.06 s and 1.08 s, each
    // re-arming itself from its callback, bb for 4294900024. The heap fires
    // both on time, before their callbacks' blocks are due: aa's fire asks
    // for a pump at 1.06 s, and bb's, at 1.08 s, is left to that one (one
    // pump per earliest time). After it the replay must look again at
    // 1.08 s: bb's re-arm then fires at 4294900024. Left to the next thing
    // that reads the trace (aa's next fire, at +35), bb would fire there.
    using namespace timersim::test;
    constexpr Jiffies J = 4294900000;
    std::string t = kHz250;
    t += start(0, 1'000'000, "aa", "tcp_write_timer", J + 10, 10, 43);
    t += start(0, 1'000'001, "bb", "tcp_delack_timer", J + 12, 12, 45);
    t += cancel(0, 1'060'000, "aa");
    t += expire_entry(0, 1'060'001, "aa", "tcp_write_timer", J + 15, J + 11);
    t += start(0, 1'060'002, "aa", "tcp_write_timer", J + 35, 20, 100);
    t += expire_exit(0, 1'060'003, "aa");
    t += cancel(0, 1'080'000, "bb");
    t += expire_entry(0, 1'080'001, "bb", "tcp_delack_timer", J + 20, J + 13);
    t += start(0, 1'080'002, "bb", "tcp_delack_timer", J + 24, 4, 88);
    t += expire_exit(0, 1'080'003, "bb");
    // Nothing else reads the trace on before 1.5 s.
    t += start(0, 1'500'000, "cc", "process_timeout", J + 300, 175, 50);
    std::vector<Fire> fires;
    TraceReplayStats stats;
    replay_text(t, fires, stats, 200, TraceKind::ftrace);
    REQUIRE(fires.size() == 4);
    CHECK(fires[0].id == 0); // aa
    CHECK(fires[0].fired_jiffies == J + 10);
    CHECK(fires[1].id == 1); // bb
    CHECK(fires[1].fired_jiffies == J + 12);
    CHECK(fires[2].id == 1);
    CHECK(fires[2].fired_jiffies == J + 24);
    CHECK(fires[3].id == 0);
    CHECK(fires[3].fired_jiffies == J + 35);
    CHECK(stats.callback_events == 2);
    CHECK(stats.callback_events_unmatched == 0);
}

TEST_CASE("each fire takes one block; blocks whose fire never comes are counted") {
    std::vector<Fire> fires;
    TraceReplayStats stats;
    replay_text(kHeader + "0 arm 1 in=10j\n"
                          "1ms arm 3 in=1j cb=1\n" // two blocks of timer 1 before it fires:
                          "2ms arm 4 in=2j cb=1\n" // the fire takes the first, the second waits
                          "3ms arm 5 in=1j cb=9\n" // timer 9 is never armed
                          "3ms cancel 5 cb=9\n",
                fires, stats);
    REQUIRE(fires.size() == 2);
    CHECK(fires[0].fired_jiffies == 1010);
    CHECK(fires[1].expires == 1011); // timer 3, armed inside timer 1's callback
    CHECK(stats.callback_events == 1);
    CHECK(stats.callback_events_unmatched == 3);
}

TEST_CASE("blocks reach their timer when the machine's timer ids and the trace's differ") {
    // Timer 9 is only ever a callback (its fire was before the trace), so
    // it has a trace id but no timer on the machine: from timer 4 on, the
    // machine's ids are one behind the trace's. Timer 4's block must still
    // run in timer 4's callback, and timer 9's never.
    std::vector<Fire> fires;
    TraceReplayStats stats;
    replay_text(kHeader + "0 arm 1 in=10j\n"
                          "1ms arm 3 in=1j cb=9\n"
                          "2ms arm 4 in=20j\n"
                          "5ms arm 1 in=3j cb=4\n",
                fires, stats);
    REQUIRE(fires.size() == 3);
    CHECK(fires[0].id == 0); // timer 1
    CHECK(fires[0].fired_jiffies == 1010);
    CHECK(fires[1].id == 2); // timer 4, the machine's third timer
    CHECK(fires[1].fired_jiffies == 1020);
    CHECK(fires[2].id == 0); // timer 1 again, armed in timer 4's callback
    CHECK(fires[2].expires == 1023);
    CHECK(stats.callback_events == 1);
    CHECK(stats.callback_events_unmatched == 1);
}

TEST_CASE("a trace of two million lines loads and replays through") {
    TempFile file("big");
    {
        std::FILE* f = std::fopen(file.path.c_str(), "wb");
        REQUIRE(f);
        TraceWriter writer(f, TraceHeader{.hz = kHz, .start_jiffies = 1000});
        TraceEvent e;
        for (std::uint64_t i = 0; i < 2'000'000; ++i) {
            e.time_ns = i * 5'000; // 10 s in all
            e.kind = i % 4 == 3 ? TraceEventKind::cancel : TraceEventKind::arm;
            e.key = TimerKey{false, i % 50'000, {}};
            e.expiry = e.kind == TraceEventKind::cancel ? ExpiryForm::none : ExpiryForm::in_jiffies;
            e.expiry_value = 1 + i % 97;
            writer.write(e);
        }
        writer.flush();
        std::fclose(f);
    }
    MachineConfig m;
    m.hz = kHz;
    m.start_jiffies = 1000;
    m.ticks = 2600; // 10.4 s
    TraceReplayStats stats;
    const RunResult r = replay(Design::modern, m, file.path, &stats);
    CHECK(stats.events == 2'000'000);
    CHECK(r.total.arms == 1'500'000);
    CHECK(r.total.fired + r.total.cancelled + r.total.pending > 0);
}

TEST_CASE("a bad trace stops the replay with FILE:LINE: what (field)") {
    struct Case {
        std::string text;
        std::string error;
    };
    const std::vector<Case> cases = {
        {kHeader + "0 arm 1 in=10j\n1ms arm 2 in=1j cpu=1\n", ":3: cpu 1 is not on the machine: it has 1 CPU (--cpus) (cpu)"},
        {kHeader + "0 arm 1 in=10j\n1ms arm 2 in=1j\n100ms arm 3 in=xj\n",
         ":4: bad timeout 'xj': expected an integer with unit j, ns, us, ms or s (in)"},
        {kHeader + "0 arm 1 in=10j\n50ms arm 1 in=1j cb=1\n40ms arm 2 in=1j\n",
         ":4: time 40000000 ns is before the previous event's 50000000 ns: times must not decrease (time)"},
        {kHeader + "0 arm 1 in=10j\n50ms arm 1 in=1j cb=a=b\n", ":3: callback timer id 'a=b' contains '=' (cb)"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.text);
        TempFile file("bad");
        write_text(file.path, c.text);
        MachineConfig m;
        m.hz = kHz;
        m.start_jiffies = 1000;
        m.ticks = 100;
        std::string error;
        try {
            run_machine(Design::modern, m,
                        spec_of(trace_replay(file.path, TraceKind::timersim, header_of(m))));
        } catch (const TraceError& e) {
            error = e.what();
        }
        CHECK(error == file.path + c.error);
    }
    // The clock is the trace's: another HZ is refused.
    TempFile file("clock");
    write_text(file.path, kHeader + "0 arm 1 in=10j\n");
    MachineConfig m;
    m.hz = 1000;
    CHECK_THROWS_AS(run_machine(Design::modern, m,
                                spec_of(trace_replay(file.path, TraceKind::timersim, TraceHeader{.hz = 250}))),
                    std::invalid_argument);
}

TEST_CASE("kernel ftrace text replays directly, its callbacks' events inside our callbacks") {
    const std::string path = std::string(TEST_DATA_DIR) + "/ftrace/habits-ftrace.txt";
    const TraceSummary summary = summarize_trace(path, TraceKind::ftrace, {}); // '# hz=250' in the file
    CHECK(summary.header.hz == 250);
    CHECK(summary.header.start_jiffies == 4294967200ull);
    CHECK(summary.events == 13); // as `timersim import` writes (tests/data/ftrace/habits.expected.trace)
    CHECK(summary.cpus == 2);
    MachineConfig m;
    m.hz = summary.header.hz;
    m.start_jiffies = summary.header.start_jiffies;
    m.cpus = summary.cpus;
    m.ticks = ticks_at(m.hz, summary.last_event_ns) + 1000;
    TraceReplayStats stats;
    const RunResult r =
        run_machine(Design::modern, m, spec_of(trace_replay(path, TraceKind::ftrace, summary.header, &stats)));
    CHECK(stats.events == 13); // one of them the arm of a timer armed before the trace
    // tcp_write_timer re-armed itself from its callback at 2.016 s (cb=):
    // our wheel fires it at its expiry and the re-arm is applied there.
    CHECK(stats.callback_events == 1);
    CHECK(stats.callback_events_unmatched == 0);
    CHECK(stats.skipped_lines == 2);
    CHECK(r.total.fired >= 3);
}

TEST_CASE("summarize_trace reads the clock, the last event and the CPUs in one pass") {
    TempFile file("summary");
    write_text(file.path, kHeader + "0 arm 1 in=10j\n5ms arm 2 in=1j cpu=3\n7s cancel 1\n");
    const TraceSummary s = summarize_trace(file.path, TraceKind::timersim, {});
    CHECK(s.header.hz == 250);
    CHECK(s.header.start_jiffies == 1000);
    CHECK(s.last_event_ns == 7'000'000'000ull);
    CHECK(s.events == 3);
    CHECK(s.cpus == 4);
}

// N arms spread over a short time (issue 17: 400k over 9 ms took 4 s, 3M
// over two minutes, all but a little in the replay's own bookkeeping). The
// softirqs of the first ticks run for milliseconds while more arms come due,
// so thousands of steps are scheduled at once. The replay's work besides
// applying events must stay linear in the events and fires: counted in
// operations (TraceReplayStats::bookkeeping_steps), never timed.
TEST_CASE("replaying N arms spread over a short time does work linear in N") {
    const auto work_per_operation = [](std::uint32_t n) {
        TempFile file("spread");
        {
            std::ofstream out(file.path, std::ios::binary);
            out << "# timersim-trace v1 hz=250\n";
            for (std::uint32_t i = 0; i < n; ++i) out << i * 23 << " arm n" << i << " in=" << 1 + i % 997 << "j\n";
        }
        MachineConfig m;
        m.hz = kHz;
        m.ticks = 1100;
        TraceReplayStats stats;
        const RunResult r = replay(Design::modern, m, file.path, &stats);
        REQUIRE(stats.events == n);
        REQUIRE(r.total.fired == n);
        return static_cast<double>(stats.bookkeeping_steps) / static_cast<double>(stats.events + r.total.fired);
    };
    const double small = work_per_operation(100'000);
    const double large = work_per_operation(400'000);
    CAPTURE(small);
    CAPTURE(large);
    CHECK(small <= 2.0);
    CHECK(large <= 2.0);
}
