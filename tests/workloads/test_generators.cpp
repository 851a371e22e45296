// The workload generators (workloads/), each driven on the real engine with
// a zero cost model and checked against its definition at the timer level:
// what it arms (relative timeout, arm call), what fires when, and what a
// callback does. A spy between the engine and the generator records every
// arm, cancel and fire. Also: composition, determinism, CPU placement, the
// 1M-connection start without per-connection allocation, and the parameter
// table's checks.
#include "sim/machine/engine.hpp"
#include "sim/machine/engine_run.hpp"
#include "wheel/core/heap_queue.hpp"
#include "workloads/generators/burst.hpp"
#include "workloads/generators/delayed_ack.hpp"
#include "workloads/generators/generator_catalog.hpp"
#include "workloads/generators/generator_parameters.hpp"
#include "workloads/generators/keepalive.hpp"
#include "workloads/generators/socket_timeouts.hpp"
#include "workloads/generators/tcp_retransmit.hpp"
#include "workloads/generators/time_wait.hpp"
#include "workloads/generators/uniform_timers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>
#include <new>
#include <string>
#include <vector>

// Counting allocations, for the scale test.
namespace {
std::atomic<std::uint64_t> g_allocations{0};
}
void* operator new(std::size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
// GCC 12 inlines these into library code (nlohmann-json's containers among
// it) and then sees free() of memory from operator new: a false alarm, as
// this operator new is malloc(). (Clang has no such warning.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;

struct ArmRecord {
    TimerId id;
    Jiffies at;      // jiffies when armed
    Jiffies expires;
    ArmCall call;
    bool in_fire;    // armed from a callback
};

struct Recording {
    std::vector<ArmRecord> arms;
    std::vector<std::pair<TimerId, Jiffies>> cancels; // timer, jiffies
    std::vector<FireRecord> fires;
    std::vector<std::size_t> ops_in_fire; // by fire: arms, cancels and actions the callback made
    std::vector<Action> actions;          // scheduled actions
};

// Forwards to the engine and records.
class SpySim final : public Sim {
public:
    SpySim(Sim& base, Recording& rec) : base_(&base), rec_(rec) {}
    void rebind(Sim& base) { base_ = &base; }
    bool in_fire = false;
    std::size_t ops = 0;

    std::uint64_t now_ns() const override { return base_->now_ns(); }
    Jiffies jiffies() const override { return base_->jiffies(); }
    Jiffies start_jiffies() const override { return base_->start_jiffies(); }
    unsigned hz() const override { return base_->hz(); }
    unsigned cpus() const override { return base_->cpus(); }
    unsigned current_cpu() const override { return base_->current_cpu(); }
    std::uint64_t next_tick_ns() const override { return base_->next_tick_ns(); }
    TimerId create_timer(TimerFlags flags = {}) override { return base_->create_timer(flags); }
    void reserve_timers(std::size_t n) override { base_->reserve_timers(n); }
    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) override {
        ++ops;
        rec_.arms.push_back(ArmRecord{id, base_->jiffies(), expires, call, in_fire});
        return base_->arm(id, expires, call);
    }
    ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned cpu,
                      ArmCall call = ArmCall::mod_timer_pinned) override {
        ++ops;
        rec_.arms.push_back(ArmRecord{id, base_->jiffies(), expires, call, in_fire});
        return base_->arm_on(id, expires, cpu, call);
    }
    bool cancel(TimerId id) override {
        ++ops;
        rec_.cancels.emplace_back(id, base_->jiffies());
        return base_->cancel(id);
    }
    void schedule_action(std::uint64_t time_ns, const Action& action) override {
        ++ops;
        rec_.actions.push_back(action);
        base_->schedule_action(time_ns, action);
    }

private:
    Sim* base_;
    Recording& rec_;
};

class SpyWorkload final : public Workload {
public:
    SpyWorkload(Sim& sim, Recording& rec, const WorkloadFactory& inner) : spy_(sim, rec), rec_(rec) {
        inner_ = inner(spy_);
    }
    void on_action(Sim& sim, std::uint64_t tag) override {
        spy_.rebind(sim);
        inner_->on_action(spy_, tag);
    }
    void on_fire(Sim& sim, const FireRecord& fired) override {
        spy_.rebind(sim);
        rec_.fires.push_back(fired);
        spy_.in_fire = true;
        const std::size_t before = spy_.ops;
        inner_->on_fire(spy_, fired);
        spy_.in_fire = false;
        rec_.ops_in_fire.push_back(spy_.ops - before);
    }

private:
    SpySim spy_;
    Recording& rec_;
    std::unique_ptr<Workload> inner_;
};

MachineConfig exact_machine(std::uint64_t ticks, unsigned hz = kHz) {
    MachineConfig m;
    m.hz = hz;
    m.ticks = ticks;
    m.costs = CostModel::zero();
    return m;
}

// Runs `factory` on the exact heap with zero cost, recording everything.
RunResult run_spied(const WorkloadFactory& factory, Recording& rec, const MachineConfig& machine,
                    Design design = Design::heap) {
    const WorkloadSpec spec{.name = "test", .description = "test",
                            .factory = [&](Sim& sim) -> std::unique_ptr<Workload> {
                                return std::make_unique<SpyWorkload>(sim, rec, factory);
                            }};
    return run_machine(design, machine, spec);
}

// The arm whose expiry a fire ran: the last arm of that timer before it.
const ArmRecord* last_arm_before(const Recording& rec, TimerId id, Jiffies fired) {
    const ArmRecord* last = nullptr;
    for (const ArmRecord& a : rec.arms)
        if (a.id == id && time_before_eq(a.at, fired)) last = &a;
    return last;
}

} // namespace

TEST_CASE("tcp-retransmit: RTO 0.2 -> 0.4 -> 0.8 s ... on a connection whose ACKs never come") {
    TcpRetransmitConfig c;
    c.connections = 1;
    c.loss = 1; // every segment and every retransmission lost
    c.initial_rto_ms = 200;
    c.max_retransmits = 5;
    c.send_interval_ms = 100;
    Recording rec;
    run_spied(tcp_retransmit_workload(c, 5000), rec, exact_machine(5000));
    REQUIRE(rec.arms.size() >= 7);
    // The send arms jiffies + 200 ms (50 jiffies at HZ=250) with mod_timer.
    CHECK(rec.arms[0].expires - rec.arms[0].at == 50);
    CHECK_FALSE(rec.arms[0].in_fire);
    REQUIRE(rec.fires.size() >= 6);
    // Each timeout fires exactly when asked (heap, zero cost) and re-arms from
    // its callback for twice the previous RTO.
    Jiffies rto = 50;
    for (std::size_t k = 0; k < 5; ++k) {
        CAPTURE(k);
        const FireRecord& f = rec.fires[k];
        CHECK(f.fired_jiffies == f.requested);
        CHECK(f.requested == rec.arms[k].expires);
        rto *= 2;
        CHECK(rec.arms[k + 1].in_fire);
        CHECK(rec.arms[k + 1].at == f.fired_jiffies);
        CHECK(rec.arms[k + 1].expires - f.fired_jiffies == rto); // 100, 200, 400, 800, 1600
    }
    // The 6th timeout exceeds max_retransmits: the connection is reset, the
    // callback arms nothing, and a new connection starts over at the initial RTO.
    CHECK(rec.ops_in_fire[5] == 1); // only the next send is scheduled
    const auto next_send = std::find_if(rec.arms.begin() + 6, rec.arms.end(), [](const ArmRecord& a) { return !a.in_fire; });
    REQUIRE(next_send != rec.arms.end());
    CHECK(next_send->expires - next_send->at == 50);
}

TEST_CASE("tcp-retransmit: the backoff stops at TCP_RTO_MAX") {
    TcpRetransmitConfig c;
    c.connections = 1;
    c.loss = 1;
    c.initial_rto_ms = 200;
    c.rto_max_ms = 1000; // 250 jiffies
    c.max_retransmits = 15;
    Recording rec;
    run_spied(tcp_retransmit_workload(c, 5000), rec, exact_machine(5000));
    std::vector<Jiffies> deltas;
    for (const ArmRecord& a : rec.arms) deltas.push_back(a.expires - a.at);
    REQUIRE(deltas.size() >= 6);
    CHECK(deltas[0] == 50);
    CHECK(deltas[1] == 100);
    CHECK(deltas[2] == 200);
    CHECK(deltas[3] == 250);
    CHECK(deltas[4] == 250);
    CHECK(deltas[5] == 250);
}

TEST_CASE("tcp-retransmit: defaults are the kernel's (TCP_TIMEOUT_INIT 1 s before the first RTT sample)") {
    const TcpRetransmitConfig c;
    CHECK(c.initial_rto_ms == 1000);
    CHECK(c.rto_min_ms == 200);
    CHECK(c.rto_max_ms == 120000);
    CHECK(c.max_retransmits == 15);
    TcpRetransmitConfig one = c;
    one.connections = 1;
    one.loss = 0;
    Recording rec;
    run_spied(tcp_retransmit_workload(one, 2500), rec, exact_machine(2500));
    REQUIRE(!rec.arms.empty());
    CHECK(rec.arms[0].expires - rec.arms[0].at == kHz); // 1 s
    // After a sample, rto = srtt + max(4 rttvar, TCP_RTO_MIN): above 200 ms.
    for (std::size_t k = 1; k < rec.arms.size(); ++k) CHECK(rec.arms[k].expires - rec.arms[k].at > 50);
}

TEST_CASE("tcp-retransmit: all acked clears the timer without deleting it; its expiry does nothing") {
    TcpRetransmitConfig c;
    c.connections = 20;
    c.loss = 0;
    c.rtt_ms = 10;
    c.rtt_spread = 1;
    c.send_interval_ms = 2000; // mostly longer than the RTO: the cleared timer expires first
    Recording rec;
    run_spied(tcp_retransmit_workload(c, 30 * kHz), rec, exact_machine(30 * kHz));
    CHECK(rec.cancels.empty()); // never deleted
    REQUIRE(rec.fires.size() > 50);
    for (std::size_t k = 0; k < rec.fires.size(); ++k) {
        CAPTURE(k);
        const FireRecord& f = rec.fires[k];
        CHECK(rec.ops_in_fire[k] == 0); // cleared: the callback does nothing
        const ArmRecord* armed = last_arm_before(rec, f.id, f.fired_jiffies);
        REQUIRE(armed != nullptr);
        CHECK(armed->expires == f.requested); // the timer stayed queued as last armed
    }
    // Each flight re-arms on its first ACK (data still in flight) and not on
    // its last: with 4 segments, 2 arms per flight (send + first ACK).
    CHECK(rec.arms.size() % 2 == 0);
}

TEST_CASE("tcp-retransmit: a send before the cleared timer expires re-arms it first") {
    TcpRetransmitConfig c;
    c.connections = 20;
    c.loss = 0;
    c.rtt_ms = 10;
    c.rtt_spread = 1;
    c.send_interval_ms = 20; // far below the RTO
    Recording rec;
    run_spied(tcp_retransmit_workload(c, 30 * kHz), rec, exact_machine(30 * kHz));
    const std::size_t flights = rec.arms.size() / 2;
    CHECK(flights > 1000);
    CHECK(rec.fires.size() * 20 < flights); // few dead expiries survive
}

TEST_CASE("tcp-retransmit: losses time out, retransmit from the callback and recover") {
    TcpRetransmitConfig c;
    c.connections = 200;
    c.loss = 0.05;
    Recording rec;
    run_spied(tcp_retransmit_workload(c, 60 * kHz), rec, exact_machine(60 * kHz));
    std::size_t retransmits = 0, dead = 0;
    for (std::size_t k = 0; k < rec.fires.size(); ++k) (rec.ops_in_fire[k] ? retransmits : dead) += 1;
    CHECK(retransmits > 50);
    CHECK(dead > 50);
    for (const ArmRecord& a : rec.arms) CHECK(a.expires - a.at <= 120u * kHz);
}

TEST_CASE("socket-timeouts: messages keep the idle timer from firing; it fires idle-timeout after the last one") {
    SocketTimeoutsConfig c;
    c.connections = 200;
    c.message_interval_ms = 100;
    c.activity_spread = 1;
    c.idle_timeout_s = 2; // 20 mean gaps: never while traffic flows
    c.reader_fraction = 0;
    Recording rec;
    // Messages stop after 10 s; the machine runs on to 15 s.
    run_spied(socket_timeouts_workload(c, 10 * kHz), rec, exact_machine(15 * kHz));
    const Jiffies start = initial_jiffies(kHz);
    REQUIRE(rec.arms.size() > 200 * 50);
    std::map<TimerId, Jiffies> last_message;
    for (const ArmRecord& a : rec.arms) {
        CHECK(a.expires - a.at == 2 * kHz);
        CHECK(a.call == ArmCall::mod_timer);
        last_message[a.id] = a.at;
    }
    CHECK(rec.fires.size() == 200); // each idle timer once, after the traffic stopped
    for (const FireRecord& f : rec.fires) {
        CAPTURE(f.id);
        CHECK(f.fired_jiffies - start >= 10 * kHz);
        CHECK(f.fired_jiffies == f.requested);
        CHECK(f.requested - last_message.at(f.id) == 2 * kHz);
    }
}

TEST_CASE("socket-timeouts: receive timeouts are cancelled by data and re-armed after EAGAIN") {
    SocketTimeoutsConfig c;
    c.connections = 100;
    c.message_interval_ms = 1000;
    c.activity_spread = 1;
    c.idle_timeout_s = 60;
    c.receive_timeout_ms = 600; // 150 jiffies
    c.reader_fraction = 1;
    Recording rec;
    run_spied(socket_timeouts_workload(c, 20 * kHz), rec, exact_machine(20 * kHz));
    std::set<TimerId> receive_timers; // armed the schedule_timeout() way
    for (const ArmRecord& a : rec.arms)
        if (a.call == ArmCall::mod_timer_pinned) receive_timers.insert(a.id);
    std::size_t receive_fires = 0;
    for (std::size_t k = 0; k < rec.fires.size(); ++k) {
        if (!receive_timers.count(rec.fires[k].id)) continue;
        ++receive_fires;
        CHECK(rec.ops_in_fire[k] == 1); // recv() again: one re-arm
    }
    CHECK(receive_fires > 100);
    std::size_t receive_arms = 0;
    for (const ArmRecord& a : rec.arms) {
        if (a.call != ArmCall::mod_timer_pinned) continue; // schedule_timeout(): no classic slack
        ++receive_arms;
        CHECK(a.expires - a.at == 150);
    }
    CHECK(receive_arms > 1000);
    CHECK(rec.cancels.size() > 1000); // data woke the reader: del_timer
}

TEST_CASE("delayed-ack: timeouts within TCP_DELACK_MIN..TCP_DELACK_MAX; ACKs clear without deleting") {
    DelayedAckConfig c;
    c.connections = 300;
    c.segment_interval_ms = 100;
    Recording rec;
    DelayedAckStats stats;
    run_spied(delayed_ack_workload(c, 30 * kHz, &stats), rec, exact_machine(30 * kHz));
    CHECK(rec.cancels.empty());
    REQUIRE(rec.arms.size() > 1000);
    // A timer is pending from its arm to its fire (nothing deletes it). Walk
    // arms and fires in time order: a jiffy's fires (in its tick's softirq)
    // come before the actions that run later in that jiffy.
    std::map<TimerId, bool> pending;
    std::size_t fire_index = 0;
    std::size_t at_min = 0, above_min = 0;
    std::size_t arms_checked = 0;
    std::size_t a = 0;
    while (a < rec.arms.size() || fire_index < rec.fires.size()) {
        const bool take_fire = fire_index < rec.fires.size() &&
                               (a == rec.arms.size() || time_before_eq(rec.fires[fire_index].fired_jiffies, rec.arms[a].at));
        if (take_fire) {
            pending[rec.fires[fire_index].id] = false;
            ++fire_index;
            continue;
        }
        const ArmRecord& arm = rec.arms[a++];
        const Jiffies delta = arm.expires - arm.at;
        CHECK(delta <= 50); // TCP_DELACK_MAX = HZ/5
        if (!pending[arm.id] && !arm.in_fire) {
            ++arms_checked;
            CHECK(delta >= 10); // TCP_DELACK_MIN = HZ/25
            (delta == 10 ? at_min : above_min) += 1;
        }
        pending[arm.id] = true;
    }
    CHECK(arms_checked > 1000);
    CHECK(at_min > 100);
    CHECK(above_min > 10); // ato adapts to the gaps
    CHECK(stats.dead_expiries > 100); // cleared by an ACK, expired doing nothing
    CHECK(stats.acks_by_timer > 100);
    CHECK(stats.acks_at_once > 100);
    CHECK(stats.acks_on_reply > 100);
    CHECK(stats.dead_expiries + stats.acks_by_timer + stats.rearms <= rec.fires.size());
    for (std::size_t k = 0; k < rec.fires.size(); ++k) CHECK(rec.ops_in_fire[k] <= 1);
}

TEST_CASE("keepalive: 7200 s, then 9 probes 75 s apart, then the reset") {
    KeepaliveConfig c;
    c.connections = 3;
    c.dead_peer_fraction = 1;
    c.traffic_interval_s = 0;
    c.lifetime_s = 0;
    constexpr unsigned hz = 100;
    MachineConfig m = exact_machine(8000 * hz, hz);
    m.nohz_idle = true;
    Recording rec;
    run_spied(keepalive_workload(c, m.ticks), rec, m);
    std::set<TimerId> ids;
    for (const ArmRecord& a : rec.arms) ids.insert(a.id);
    REQUIRE(ids.size() == 3);
    for (const TimerId id : ids) {
        CAPTURE(id);
        std::vector<FireRecord> fires;
        for (const FireRecord& f : rec.fires)
            if (f.id == id) fires.push_back(f);
        std::vector<ArmRecord> arms;
        for (const ArmRecord& a : rec.arms)
            if (a.id == id) arms.push_back(a);
        REQUIRE(fires.size() >= 10);
        REQUIRE(arms.size() >= 11);
        // The first arm: the rest of the 7200 s for a connection already idle a while.
        CHECK(arms[0].expires - arms[0].at <= 7200u * hz);
        for (std::size_t k = 0; k < 9; ++k) {
            CHECK(fires[k].fired_jiffies == fires[k].requested);
            CHECK(arms[k + 1].expires - arms[k + 1].at == 75u * hz); // probe k+1, then 75 s
        }
        CHECK(fires[9].fired_jiffies - fires[0].fired_jiffies == 9u * 75 * hz);
        // After 9 unanswered probes: reset, and a new connection's 7200 s.
        CHECK(arms[10].expires - arms[10].at == 7200u * hz);
    }
}

TEST_CASE("keepalive: an answered probe puts the timer back to keepalive_time") {
    KeepaliveConfig c;
    c.connections = 2;
    c.dead_peer_fraction = 0;
    c.traffic_interval_s = 0;
    c.lifetime_s = 0;
    constexpr unsigned hz = 100;
    MachineConfig m = exact_machine(7400 * hz, hz);
    m.nohz_idle = true;
    Recording rec;
    run_spied(keepalive_workload(c, m.ticks), rec, m);
    std::set<TimerId> ids;
    for (const ArmRecord& a : rec.arms) ids.insert(a.id);
    REQUIRE(ids.size() == 2);
    for (const TimerId id : ids) {
        std::vector<Jiffies> deltas;
        for (const ArmRecord& a : rec.arms)
            if (a.id == id) deltas.push_back(a.expires - a.at);
        REQUIRE(deltas.size() >= 3);
        CHECK(deltas[1] == 75u * hz);                  // the probe
        CHECK(deltas[2] == 7200u * hz - (75u * hz - 5)); // answered 50 ms later: the rest of 7200 s
    }
}

TEST_CASE("time-wait: each timer fires once, 60 s after the close, armed pinned (no classic slack)") {
    TimeWaitConfig c;
    c.connections = 50;
    c.lifetime_ms = 1000;
    c.port_reuse_fraction = 0;
    Recording rec;
    run_spied(time_wait_workload(c, 200 * kHz), rec, exact_machine(200 * kHz));
    REQUIRE(rec.arms.size() >= 100);
    std::map<TimerId, std::size_t> armed, fired;
    for (const ArmRecord& a : rec.arms) {
        CHECK(a.call == ArmCall::mod_timer_pinned);
        CHECK(a.expires - a.at == 60u * kHz);
        ++armed[a.id];
    }
    for (const FireRecord& f : rec.fires) {
        CHECK(f.fired_jiffies == f.requested);
        ++fired[f.id];
    }
    for (const auto& [id, n] : armed) CHECK(n - fired[id] <= 1); // at most the last one still pending
    CHECK(rec.cancels.empty());

    TimeWaitConfig reuse = c;
    reuse.port_reuse_fraction = 1;
    Recording r2;
    run_spied(time_wait_workload(reuse, 200 * kHz), r2, exact_machine(200 * kHz));
    CHECK(r2.fires.empty()); // every TIME_WAIT socket was killed by a reusing SYN
    CHECK(r2.cancels.size() + 50 >= r2.arms.size());
}

TEST_CASE("burst: N timers on one jiffy, once or repeated") {
    BurstConfig c;
    c.size = 1000;
    c.timeout_ms = 1000;
    Recording rec;
    run_spied(burst_workload(c, 3 * kHz), rec, exact_machine(3 * kHz));
    REQUIRE(rec.fires.size() == 1000);
    for (const FireRecord& f : rec.fires) {
        CHECK(f.requested == rec.fires.front().requested);
        CHECK(f.fired_jiffies == f.requested);
    }
    CHECK(rec.fires.front().requested - initial_jiffies(kHz) == kHz);

    BurstConfig repeated = c;
    repeated.interval_ms = 2000;
    Recording r2;
    run_spied(burst_workload(repeated, 10 * kHz), r2, exact_machine(10 * kHz));
    CHECK(r2.fires.size() == 5000); // at 1, 3, 5, 7 and 9 s
}

TEST_CASE("uniform: timeouts in range, the configured share of cancels") {
    UniformConfig c;
    c.timers = 500;
    c.timeout_min_ms = 100;
    c.timeout_max_ms = 2000;
    c.cancel_fraction = 0.25;
    Recording rec;
    run_spied(uniform_workload(c, 20 * kHz), rec, exact_machine(20 * kHz));
    for (const ArmRecord& a : rec.arms) {
        CHECK(a.expires - a.at >= 25);
        CHECK(a.expires - a.at <= 500);
    }
    const double ops = static_cast<double>(rec.arms.size() + rec.cancels.size());
    CHECK(ops > 5000);
    const double cancel_share = static_cast<double>(rec.cancels.size()) / ops;
    CHECK(cancel_share > 0.23);
    CHECK(cancel_share < 0.27);
}

TEST_CASE("composite: each part sees exactly what it would see alone") {
    GeneratorParams p;
    p.connections = 300;
    const MachineConfig m = exact_machine(20 * kHz);
    const auto run = [&](const char* list) {
        return run_machine(Design::heap, m,
                           WorkloadSpec{.name = list, .description = "",
                                        .factory = workload_list_factory(list, p, m.ticks, kHz)});
    };
    const RunResult both = run("tcp-retransmit,socket-timeouts");
    const RunResult tcp = run("tcp-retransmit");
    const RunResult sock = run("socket-timeouts");
    CHECK(tcp.total.arms > 0);
    CHECK(sock.total.fired > 0);
    CHECK(both.total.arms == tcp.total.arms + sock.total.arms);
    CHECK(both.total.fired == tcp.total.fired + sock.total.fired);
    CHECK(both.total.cancelled == tcp.total.cancelled + sock.total.cancelled);

    const RunResult mixed = run("mixed");
    CHECK(mixed.total.fired > 0);
    CHECK_THROWS_AS(expand_workload_list("mixed,keepalive", 10), std::invalid_argument);
    CHECK_THROWS_AS(expand_workload_list("tcp-retransmit,nope", 10), std::invalid_argument);
    CHECK_THROWS_AS(expand_workload_list("tcp-retransmit,", 10), std::invalid_argument);
    CHECK(expand_workload_list("mixed", 100).size() == 5);
}

TEST_CASE("determinism: same seed, same metrics; another seed, other metrics") {
    GeneratorParams p;
    p.connections = 500;
    MachineConfig m;
    m.hz = kHz;
    m.ticks = 20 * kHz;
    const auto run = [&](std::uint64_t seed) {
        p.seed = seed;
        return run_machine(Design::modern, m,
                           WorkloadSpec{.name = "mixed", .description = "",
                                        .factory = workload_list_factory("mixed", p, m.ticks, kHz)});
    };
    const RunResult a = run(7), b = run(7), c = run(8);
    CHECK(a.per_cpu == b.per_cpu);
    CHECK_FALSE(a.per_cpu == c.per_cpu);
}

TEST_CASE("CPUs: connection c's actions run on CPU c % cpus, and its timers fire there") {
    GeneratorParams p;
    p.connections = 40;
    MachineConfig m = exact_machine(10 * kHz);
    m.cpus = 4;
    for (const std::string name : {"tcp-retransmit", "socket-timeouts", "delayed-ack", "keepalive", "time-wait", "uniform"}) {
        CAPTURE(name);
        Recording rec;
        run_spied(generator_factory(name, p, p.connections, m.ticks, kHz), rec, m);
        REQUIRE(rec.actions.size() >= 20);
        for (const Action& a : rec.actions) CHECK(a.cpu == (a.tag & 0xFFFFFFFFu) % 4);
        const TimerId per_connection = name == "socket-timeouts" ? 2 : 1;
        for (const FireRecord& f : rec.fires) CHECK(f.cpu == f.id / per_connection % 4);
    }
}

TEST_CASE("scale: 1M socket-timeouts connections start without per-connection allocation") {
    SocketTimeoutsConfig c;
    c.connections = 1'000'000;
    const MachineConfig m = exact_machine(2);
    const WorkloadSpec spec{.name = "socket-timeouts", .description = "",
                            .factory = socket_timeouts_workload(c, 2)};
    const std::uint64_t before = g_allocations.load();
    const RunResult r = run_machine(Design::modern, m, spec);
    const std::uint64_t allocations = g_allocations.load() - before;
    CHECK(allocations < 500); // vectors reserved or grown by doubling, nothing per connection
    CHECK(r.total.pending <= 2'000'000);
}

namespace {

// A --workload list and generator parameters given as the options give them
// ("--loss", "0.05"), set through the parameter table and checked as a whole.
GeneratorWorkload choose(const std::vector<std::string>& args) {
    std::string list = "tcp-retransmit,socket-timeouts"; // --workload's default
    GeneratorParams params;
    for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
        const std::string name = args[i].substr(2);
        if (name == "workload") {
            list = args[i + 1];
            continue;
        }
        const GeneratorParameter* found = nullptr;
        for (const GeneratorParameterGroup& g : generator_parameter_groups())
            for (const GeneratorParameter& p : g.parameters)
                if (name == p.name) found = &p;
        REQUIRE(found != nullptr);
        if (found->integer)
            set_generator_parameter(params, *found, static_cast<std::uint64_t>(std::stoull(args[i + 1])));
        else
            set_generator_parameter(params, *found, std::stod(args[i + 1]));
    }
    return generator_workload(list, params);
}

std::string usage_error(const std::vector<std::string>& args) {
    try {
        choose(args);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("generator parameters: description, JSON and one-line errors naming the option") {
    const GeneratorWorkload d = choose({});
    CHECK(d.parts.size() == 2);
    CHECK(d.description.find("tcp-retransmit (10000 connections") != std::string::npos);
    CHECK(d.description.find('\n') == std::string::npos);
    // Counts as integers, the other parameters as doubles, as the options hold them.
    CHECK(d.params.at("tcp-retransmit").at("connections").is_number_unsigned());
    CHECK(d.params.at("tcp-retransmit").at("connections") == 10000);
    CHECK(d.params.at("tcp-retransmit").begin().key() == "connections");
    CHECK(std::next(d.params.at("tcp-retransmit").begin()).key() == "send_interval_ms");
    CHECK(d.params.at("tcp-retransmit").at("send_interval_ms").is_number_float());
    CHECK(d.params.at("tcp-retransmit").at("send_interval_ms") == 5000.0);
    CHECK(choose({"--workload", "burst", "--burst-size", "5"}).description.find("5 timers") != std::string::npos);

    CHECK(usage_error({"--loss", "1.5"}) == "--loss: must be 0..1, got 1.5");
    CHECK(usage_error({"--connections", "0"}) == "--connections: must be 1..50000000, got 0");
    CHECK(usage_error({"--workload", "tcp"}).rfind("--workload: unknown generator 'tcp'", 0) == 0);
    CHECK(usage_error({"--workload", "mixed,time-wait"}).rfind("--workload: 'time-wait' is listed twice", 0) == 0);
    CHECK(usage_error({"--rto-min-ms", "5000", "--rto-max-ms", "1000"}) ==
          "--rto-min-ms: must not exceed --rto-max-ms (1000), got 5000");
    CHECK(usage_error({"--delack-min-ms", "300"}) == "--delack-min-ms: must not exceed --delack-max-ms (200), got 300");
    CHECK(usage_error({"--keepalive-probes", "200"}) == "--keepalive-probes: must be 1..127, got 200");
    CHECK(usage_error({"--rtt-ms", "nan"}).rfind("--rtt-ms: must be", 0) == 0);
    CHECK(usage_error({"--workload", "mixed", "--connections", "50000000"}).rfind("--connections:", 0) == 0);
}
