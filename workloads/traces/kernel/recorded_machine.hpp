// The machine a kernel trace was recorded on, as far as timers go: on each
// CPU, the jiffies at which it ran its TIMER_SOFTIRQ, and how late after a
// bucket's clock it woke to run it. Derived from the trace's
// timer_expire_entry lines (each shows a run on its CPU at now=), never from
// which timer fired in it, and the same for every design a comparison runs.
//
// On it (--machine recorded, docs/machine.md) a CPU raises TIMER_SOFTIRQ
// where the recording ran it; a design whose own timer should wake the CPU
// where the recording has no run nearby wakes it itself (its own NOHZ rule:
// 6.1 tick_nohz_stop_tick() programs the next non-deferrable expiry), after
// the wake delay the recording shows. Deferrable timers wait for a run.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace timersim {

struct RecordedMachine {
    static constexpr std::uint64_t kNoTime = UINT64_MAX;
    // One TIMER_SOFTIRQ run: its jiffy, and the replay time of its first
    // callback within that jiffy (kNoTime: not known, the tick's), so that
    // what the CPU's tasks did before the run in that jiffy is replayed
    // before it. Kept together: the engine asks for both at every tick.
    struct Run {
        Jiffies jiffy = 0;
        std::uint64_t time_ns = kNoTime;
        friend bool operator==(const Run&, const Run&) = default;
    };
    // Per CPU: its runs, ascending by jiffy, one per jiffy.
    std::vector<std::vector<Run>> runs;
    // Per CPU: the delays (now - baseclk) of the runs that expired a
    // non-deferrable timer: the longest (wake_window) and the median
    // (wake_delay). A design's due timer waits up to wake_window for a
    // recorded run; without one, the CPU wakes wake_delay after it is due.
    std::vector<Jiffies> wake_window;
    std::vector<Jiffies> wake_delay;
    // Per CPU: the jiffies it could not run TIMER_SOFTIRQ in, as [first,
    // last] spans, ascending and apart: from a non-deferrable timer's
    // bucket jiffy to the jiffy before the one its unfired cancel came in
    // (KernelUnfired). The kernel's own due timer did not wake the CPU there
    // (its vCPU held, or its wakeup slow); no design's does.
    std::vector<std::vector<std::pair<Jiffies, Jiffies>>> held;
    // 6.9+: the remote expiry runs (KernelRemoteRun), by migrator CPU,
    // ascending by jiffy: at `jiffy` its TIMER softirq ran idle CPU `cpu`'s
    // global base after its own (6.9 tmigr_handle_remote()). And by idle
    // CPU, the jiffies another CPU did so, ascending.
    struct RemoteRun {
        Jiffies jiffy = 0;
        std::uint32_t cpu = 0;
        // The trace shows idle CPU `cpu`'s own TIMER softirq run in that
        // jiffy before this one began: it is raised after that run.
        bool after_own_run = false;
        friend bool operator==(const RemoteRun&, const RemoteRun&) = default;
    };
    std::vector<std::vector<RemoteRun>> remote_runs;
    std::vector<std::vector<Jiffies>> remote_expired;
    // By idle CPU: the longest delay (now - baseclk) of the fires another
    // CPU made from its global base. Its due global timer waits that long
    // for such a remote run: the migrator's own wakeup was that late.
    std::vector<Jiffies> remote_wake_window;

    // `clock` places the unfired cancels on the kernel's jiffies (without
    // it, or without unfired cancels, nothing is held).
    static RecordedMachine from(const KernelFires& fires,
                                const std::vector<RecordedRunTime>& run_times = {},
                                const std::vector<KernelUnfired>& unfired = {}, const KernelClock* clock = nullptr,
                                const std::vector<KernelRemoteRun>& remote = {});
    // `cpu`'s run at jiffy `j`, or null where the recording shows none.
    const Run* run_at(unsigned cpu, Jiffies j) const noexcept;
    // A recorded run on `cpu` at a jiffy in [from, to]?
    bool runs_within(unsigned cpu, Jiffies from, Jiffies to) const noexcept;
    bool held_at(unsigned cpu, Jiffies j) const noexcept;
    // The idle CPUs whose global base `migrator` ran at jiffy `j`, in the
    // order it ran them.
    std::span<const RemoteRun> remote_runs_at(unsigned migrator, Jiffies j) const noexcept;
    // Did another CPU run `cpu`'s global base at a jiffy in [from, to]?
    bool remote_expired_within(unsigned cpu, Jiffies from, Jiffies to) const noexcept;
    Jiffies remote_wake_window_of(unsigned cpu) const noexcept {
        return cpu < remote_wake_window.size() ? remote_wake_window[cpu] : 0;
    }
    std::uint64_t total_runs() const noexcept;
};

} // namespace timersim
