// SoftirqCpu: one CPU's softirq state (kernel/softirq.c, Linux 6.1) as a
// small state machine the engine drives. It knows nothing about timers or
// simulated costs: it holds the pending mask, decides whether irq_exit() runs
// the softirqs inline, applies the restart rules of handle_softirqs() and
// says when ksoftirqd gets to run.
//
// The engine's sequence for one run:
//
//   raise(timer_softirq)                 from the tick (hardirq)
//   if (irq_exit()) {                    invoke_softirq(): run inline now?
//       begin(jiffies, SoftirqContext::irq_exit)
//       do {
//           mask = start_pass();         set_softirq_pending(0), then run the
//           ...run handlers of mask...   handlers, advancing simulated time
//       } while (end_pass(jiffies, now_ns) == PassEnd::restart);
//   }
//   ...
//   at ksoftirqd_run_at():  if (ksoftirqd_runs()) { begin(jiffies, SoftirqContext::ksoftirqd); same loop }
//
// One SoftirqCpu per simulated CPU; they share nothing.
//
// Not modelled: need_resched() (always false: no other task competes, so
// only the time and restart limits end a run), force_irqthreads, PREEMPT_RT,
// local_bh_enable() as an entry point, and raising from task context (which
// wakes ksoftirqd directly).
#pragma once

#include "wheel/core/clock.hpp"
#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <optional>

namespace timersim {

// include/linux/interrupt.h (6.1): softirq vector numbers = pending-mask bits,
// run in ascending order.
enum SoftirqVector : unsigned {
    hi_softirq = 0,
    timer_softirq = 1,
    net_tx_softirq = 2,
    net_rx_softirq = 3,
    block_softirq = 4,
    irq_poll_softirq = 5,
    tasklet_softirq = 6,
    sched_softirq = 7,
    hrtimer_softirq = 8,
    rcu_softirq = 9,
    nr_softirqs = 10,
};

// 6.1 kernel/softirq.c: MAX_SOFTIRQ_RESTART.
inline constexpr unsigned kMaxSoftirqRestart = 10;

// 6.1 kernel/softirq.c: MAX_SOFTIRQ_TIME = msecs_to_jiffies(2): 2 jiffies at
// HZ=1000, 1 jiffy at HZ=100/250/300.
constexpr Jiffies max_softirq_time(unsigned hz) noexcept { return msecs_to_jiffies(2, hz); }

// 6.1 kernel/softirq.c: SOFTIRQ_NOW_MASK, the vectors irq_exit() runs even
// while ksoftirqd is runnable.
inline constexpr std::uint32_t kSoftirqNowMask = (1u << hi_softirq) | (1u << tasklet_softirq);

enum class SoftirqContext : std::uint8_t {
    irq_exit,  // __do_softirq() from invoke_softirq(), on the way out of a hardirq
    ksoftirqd, // run_ksoftirqd() in the per-CPU kthread
};

class SoftirqCpu {
public:
    struct Config {
        unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
        // From wakeup_softirqd() to ksoftirqd actually running: the scheduler's
        // wakeup latency for a SCHED_NORMAL kthread (see sim/machine/engine.hpp for the
        // default the engine uses).
        std::uint64_t ksoftirqd_delay_ns = 50'000;
    };

    // What handle_softirqs() does after one pass over the pending vectors.
    enum class PassEnd : std::uint8_t {
        done,     // nothing pending: the run ends
        restart,  // pending again, within both limits: goto restart
        deferred, // pending again, a limit hit: wakeup_softirqd(), the run ends
    };

    struct Stats {
        std::uint64_t runs_irq_exit = 0;    // handle_softirqs() from irq_exit()
        std::uint64_t runs_ksoftirqd = 0;   // handle_softirqs() from ksoftirqd
        std::uint64_t passes = 0;           // handler passes (1 + restarts per run)
        std::uint64_t restarts = 0;         // "goto restart" taken
        std::uint64_t deferrals = 0;        // runs that ended by waking ksoftirqd
        std::uint64_t deferrals_by_time = 0;     // ... because jiffies reached end
        std::uint64_t deferrals_by_restarts = 0; // ... because max_restart ran out
        std::uint64_t irq_exit_skipped = 0; // irq_exit() with work pending left it to a runnable ksoftirqd
        std::uint64_t max_passes_per_run = 0;
        // Several CPUs together: counts add, the maximum is the largest.
        void merge(const Stats& o) noexcept {
            runs_irq_exit += o.runs_irq_exit;
            runs_ksoftirqd += o.runs_ksoftirqd;
            passes += o.passes;
            restarts += o.restarts;
            deferrals += o.deferrals;
            deferrals_by_time += o.deferrals_by_time;
            deferrals_by_restarts += o.deferrals_by_restarts;
            irq_exit_skipped += o.irq_exit_skipped;
            if (o.max_passes_per_run > max_passes_per_run) max_passes_per_run = o.max_passes_per_run;
        }
        friend bool operator==(const Stats&, const Stats&) = default;
    };

    explicit SoftirqCpu(Config config);

    // __raise_softirq_irqoff(): set the pending bit (from a hardirq, so no
    // ksoftirqd wakeup: the pending work runs at irq_exit()).
    void raise(unsigned vector) noexcept { pending_ |= 1u << vector; }
    std::uint32_t pending() const noexcept { return pending_; }
    bool is_pending(unsigned vector) const noexcept { return (pending_ >> vector) & 1u; }

    // Inside handle_softirqs() (between begin() and the last end_pass()).
    bool running() const noexcept { return running_; }
    // wakeup_softirqd() was called and ksoftirqd has not run yet.
    bool ksoftirqd_runnable() const noexcept { return ksoftirqd_run_at_.has_value(); }
    // When the woken ksoftirqd gets the CPU.
    std::optional<std::uint64_t> ksoftirqd_run_at() const noexcept { return ksoftirqd_run_at_; }

    // 6.1 irq_exit_rcu() -> invoke_softirq(): true when handle_softirqs()
    // must run now. Not from inside a running softirq (in_interrupt(): the
    // tick that interrupts a softirq only raises), not with nothing pending,
    // and not while ksoftirqd is runnable unless HI or TASKLET is pending
    // (ksoftirqd_running(), present in 6.1 since commit 4cd13c21b207 and
    // reverted in 6.5).
    bool irq_exit() noexcept;

    // ksoftirqd got the CPU (at ksoftirqd_run_at()). 6.1 run_ksoftirqd():
    // true when work is pending, and the caller then runs handle_softirqs()
    // from begin(..., ksoftirqd); otherwise the thread goes back to sleep.
    bool ksoftirqd_runs() noexcept;

    // 6.1 handle_softirqs() entry: end = jiffies + MAX_SOFTIRQ_TIME,
    // max_restart = MAX_SOFTIRQ_RESTART.
    void begin(Jiffies jiffies, SoftirqContext context);
    // One pass: set_softirq_pending(0) and return the mask whose handlers run.
    std::uint32_t start_pass();
    // After the handlers: 6.1 handle_softirqs() restarts while something is
    // pending, time_before(jiffies, end) and --max_restart != 0; otherwise,
    // if something is pending, wakeup_softirqd(): ksoftirqd runs at
    // now_ns + ksoftirqd_delay_ns (if it is not already due earlier).
    PassEnd end_pass(Jiffies jiffies, std::uint64_t now_ns);

    const Stats& stats() const noexcept { return stats_; }
    const Config& config() const noexcept { return config_; }
    // The jiffy the running handle_softirqs() stops restarting at.
    Jiffies end_jiffies() const noexcept { return end_; }
    // Restarts the running handle_softirqs() may still take.
    unsigned restarts_left() const noexcept { return max_restart_ > 0 ? max_restart_ - 1 : 0; }

private:
    Config config_;
    std::uint32_t pending_ = 0;
    bool running_ = false;
    bool in_pass_ = false;
    SoftirqContext context_ = SoftirqContext::irq_exit;
    Jiffies end_ = 0;
    unsigned max_restart_ = 0;
    std::uint64_t passes_this_run_ = 0;
    std::optional<std::uint64_t> ksoftirqd_run_at_;
    Stats stats_;
};

} // namespace timersim
