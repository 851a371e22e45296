// What a workload sees of the simulated machine (Sim), the hooks the machine
// calls (Workload), and the plain data that passes between them (Action,
// FireRecord). The engine (sim/machine/engine.hpp) implements Sim; generators and
// trace replays (workloads/) implement Workload. Keeping the two sides in one
// small header lets workloads be written, tested and recorded (a Sim that
// forwards and writes a trace) without knowing which queue or engine runs
// them.
//
// CPUs: a machine has cpus() CPUs, each with its own timer base and tick.
// Every action runs on one CPU (Action::cpu) and every callback on the CPU
// whose base fired it; arm() queues the timer on *that* CPU's base, as 6.1
// __mod_timer() -> get_target_base() does for a pinned timer or with
// timer_migration off (the model does not migrate timers to a busy CPU), so
// a pending timer re-armed from another CPU moves there. arm_on() is
// add_timer_on(): the workload "pins it elsewhere".
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// A workload step, scheduled with Sim::schedule_action(). Plain data, so
// scheduling does not allocate (beyond the event heap's amortised growth).
struct Action {
    enum class Kind : std::uint8_t {
        arm,    // arm(timer, expires, call)
        cancel, // cancel(timer)
        call,   // Workload::on_action(sim, tag)
    };
    Kind kind = Kind::call;
    ArmCall call = ArmCall::mod_timer;
    std::uint32_t cpu = 0; // the CPU it runs on (task context there)
    TimerId timer = kNoTimer;
    Jiffies expires = 0;   // arm: absolute expiry in jiffies
    std::uint64_t tag = 0; // call: handed to the workload
};

// One fired timer, as the engine saw it.
struct FireRecord {
    TimerId id;
    Jiffies requested;     // the expiry the workload asked for (before classic slack)
    Jiffies expires;       // timer->expires when it ran
    Jiffies fired_jiffies; // jiffies when its callback ran
    std::uint64_t fire_ns; // simulated time the softirq reached it
    std::int64_t error_ns; // fire_ns - nominal time of the requested expiry's tick
    std::uint32_t cpu = 0; // the CPU whose softirq ran it (a remote expiry's: the migrator)
    // The CPU whose base it was on: `cpu`, or a remote expiry's idle CPU
    // (6.9 timer_expire_remote()).
    std::uint32_t base_cpu = 0;
};

// How a replay's fires compare with the fires the recording kernel traced
// (workloads/traces/kernel/kernel_fires.hpp).
struct FireAgreement {
    std::uint64_t kernel_fires = 0; // the kernel's, of timers the replay has
    std::uint64_t replay_fires = 0;
    std::uint64_t same_jiffy_cpu = 0; // replay fires the kernel made too: same timer, jiffy and CPU
    // The kernel's fires of timers no kept event of the trace arms (armed
    // before tracing, or dropped by a filter): no replay can make them, so
    // they are outside kernel_fires.
    std::uint64_t kernel_fires_unreplayable = 0;
    // The kernel as recorded, a column beside the designs': how late its
    // own fires were (now - the expires of the timer's last timer_start, in
    // jiffies; negative: early), as exact counts by value over its fires
    // whose start the trace shows; the same by function; its fires by CPU.
    struct KernelFunction {
        std::uint64_t fires = 0;
        std::map<std::int64_t, std::uint64_t> error_jiffies;
    };
    std::uint64_t kernel_fires_total = 0; // every timer_expire_entry read
    std::map<std::int64_t, std::uint64_t> kernel_error_jiffies;
    std::map<std::string, KernelFunction, std::less<>> kernel_by_function;
    std::vector<std::uint64_t> kernel_fires_by_cpu;
    // Its fires on another CPU than the timer's base's: a 6.9+ migrator's
    // remote expiries (KernelFire::remote).
    std::uint64_t kernel_remote_expiries = 0;
    // Set when the recording kernel is 6.9 or later, whose design (three
    // bases, the pull model of timer migration) is modern-6.9, not modern:
    // what in the trace shows it. (Named when no design modelled it.)
    std::string unmodelled_kernel;
    // Set when the trace (6.9+) has no timer_migration events: its remote
    // expiries were inferred (remote_inference.hpp), and how many.
    std::string remote_inference;
    // Set where validate's replay, asked to class the lost history, refused
    // the trace: why, and the rule used instead.
    std::string lost_history_unclassed;
    // Where CPUs lost events (a line says so, validate's model proves it
    // from a sequence the kernel cannot print, or validate's classic wheel
    // fell too far behind and was re-placed: lost_history.hpp): the
    // kernel's fires validate leaves out as lost history, and the replay's
    // fires on such a CPU in its lost windows that match none of the
    // kernel's, outside kernel_fires and replay_fires
    // (kernel_fire_index.hpp). All zero for a trace that lost nothing.
    struct LostHistory {
        std::uint64_t lines = 0;          // lines saying a CPU lost events
        std::uint64_t sequences = 0;      // sequences the kernel cannot print (validate's model proved)
        std::uint64_t resets = 0;         // validate's classic wheel re-placed, too far behind the trace
        std::vector<std::uint32_t> cpus;  // the CPUs they name, ascending
        std::uint64_t kernel_fires = 0;
        std::uint64_t replay_fires = 0;
        bool any() const noexcept { return lines || sequences || resets; }
    } lost_history;
    // same_jiffy_cpu over kernel_fires and over replay_fires (1 when none).
    double recall() const noexcept { return ratio(same_jiffy_cpu, kernel_fires); }
    double precision() const noexcept { return ratio(same_jiffy_cpu, replay_fires); }

private:
    static double ratio(std::uint64_t n, std::uint64_t d) noexcept {
        return d == 0 ? 1.0 : static_cast<double>(n) / static_cast<double>(d);
    }
};

// What a workload sees of the machine.
class Sim {
public:
    virtual ~Sim() = default;
    // Inside a callback: the time the softirq has reached.
    virtual std::uint64_t now_ns() const = 0;
    // jiffies (global, advanced by the CPUs' ticks).
    virtual Jiffies jiffies() const = 0;
    virtual Jiffies start_jiffies() const = 0;
    virtual unsigned hz() const = 0;
    virtual unsigned cpus() const = 0;
    // The CPU running the current action or callback (0 outside both).
    virtual unsigned current_cpu() const = 0;
    // Actual time of the current CPU's next tick (jitter included);
    // UINT64_MAX when its tick is stopped with no timer to wake for.
    virtual std::uint64_t next_tick_ns() const = 0;
    virtual TimerId create_timer(TimerFlags flags = {}) = 0;
    // Names what the timer is for, once, right after create_timer(): the
    // kernel callback (a trace's label=, e.g. "tcp_write_timer"), or a
    // generator's own name for it. Reports group timers by it (--by
    // function); a machine that does not group ignores it.
    virtual void label_timer(TimerId /*id*/, std::string_view /*label*/) {}
    virtual void reserve_timers(std::size_t n) = 0;
    // mod_timer() family from the current CPU: the timer is queued on its base.
    virtual ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) = 0;
    // add_timer_on(): queue on `cpu`'s base (no classic slack, like 4.x).
    // `call` is what that base's queue sees: add_timer_on()'s (pinned; since
    // 6.9 it sets TIMER_PINNED). A replay of a 6.9+ trace passes mod_timer
    // for an unpinned timer_start on another CPU's base: that CPU's
    // mod_timer(), whose timer goes to its global base. Only a queue whose
    // bases follow the call (modern-6.9) tells them apart.
    virtual ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned cpu,
                              ArmCall call = ArmCall::mod_timer_pinned) = 0;
    // del_timer(): true if the timer was pending.
    virtual bool cancel(TimerId id) = 0;
    virtual void schedule_action(std::uint64_t time_ns, const Action& action) = 0;
    // The workload's own name for a timer it created (a trace's timer key as
    // written) and its label (a trace's label=, the kernel callback), for
    // the event log. The machine may ignore them (the engine keeps them only
    // while it writes an event log).
    virtual void name_timer(TimerId /*id*/, std::string_view /*name*/, std::string_view /*label*/) {}
    // A hint: timer `id` is armed or cancelled soon. The machine may fetch
    // what that touches so that the misses of several coming operations
    // overlap. Changes nothing.
    virtual void prefetch_timer(TimerId /*id*/) {}
};

// The workload's hooks. on_fire runs inside the timer's callback, so it may
// re-arm (periodic timers) or cancel through `sim`; its work is charged to
// the softirq.
class Workload {
public:
    virtual ~Workload() = default;
    virtual void on_action(Sim&, std::uint64_t /*tag*/) {}
    virtual void on_fire(Sim&, const FireRecord&) {}
    // Simulated ns the callback of this fire takes, if the workload knows
    // (a kernel trace replayed with --costs-from-trace: by the callback's
    // function); nullopt: the cost model's callback_ns. Asked after on_fire.
    virtual std::optional<std::uint64_t> callback_cost_ns(const FireRecord&) const { return std::nullopt; }
    // Operations timed after `end_ns` that the run never applied (a trace
    // that goes on past the run's end). Generators stop scheduling at the
    // run's end: none.
    virtual std::uint64_t operations_past(std::uint64_t /*end_ns*/) const { return 0; }
    // A replay of a kernel trace: its fires against the kernel's, once it
    // has run. Anything else: none.
    virtual std::optional<FireAgreement> kernel_fire_agreement() const { return std::nullopt; }
    // A hint: the call action with this tag runs soon (a few actions ahead,
    // as the machine's calendar says). A workload may fetch its own state
    // for it and pass Sim::prefetch_timer() the timers it will touch. Must
    // change nothing: a run is the same without it.
    virtual void prefetch_action(Sim&, std::uint64_t /*tag*/) {}
    // A hint: timer `id` will probably fire a few expiries from now
    // (FiredTimer::ahead). A workload may fetch the state its on_fire reads
    // for it. Must change nothing.
    virtual void prefetch_fire(TimerId /*id*/) {}
};

// Builds a workload for one run on `sim` (creating its timers there). A
// comparison calls it once per design, so each design sees the same workload
// from its start; a trace replay opens its file anew each time.
using WorkloadFactory = std::function<std::unique_ptr<Workload>(Sim&)>;

// A workload as the CLI chose it: how to build it and how to name it in
// reports.
struct WorkloadSpec {
    std::string name;        // e.g. "tcp-retransmit,socket-timeouts", "trace"
    std::string description; // one line for text reports (a trace's filter and costs: further lines)
    // Its parameters, for JSON reports: a value, which the report writes
    // in its own layout ({} when there are none to show).
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    WorkloadFactory factory;
};

} // namespace timersim
