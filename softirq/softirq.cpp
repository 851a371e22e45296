#include "softirq/softirq.hpp"

#include <algorithm>
#include <stdexcept>

namespace timersim {

SoftirqCpu::SoftirqCpu(Config config) : config_(config) {
    check_config_hz(config_.hz);
}

bool SoftirqCpu::irq_exit() noexcept {
    // in_interrupt() is true inside a running softirq: a hardirq that
    // interrupts it returns to it, and the softirq sees the new bits when
    // its pass ends.
    if (running_ || pending_ == 0) return false;
    // 6.1 ksoftirqd_running(): a runnable ksoftirqd takes the work unless HI
    // or TASKLET is pending.
    if (ksoftirqd_runnable() && (pending_ & kSoftirqNowMask) == 0) {
        ++stats_.irq_exit_skipped;
        return false;
    }
    return true;
}

bool SoftirqCpu::ksoftirqd_runs() noexcept {
    if (running_) return false; // cannot happen on one CPU: a softirq is never preempted by a task
    ksoftirqd_run_at_.reset();
    return pending_ != 0;
}

void SoftirqCpu::begin(Jiffies jiffies, SoftirqContext context) {
    if (running_) throw std::logic_error("handle_softirqs() entered twice");
    running_ = true;
    context_ = context;
    // 6.1 handle_softirqs(): end = jiffies + MAX_SOFTIRQ_TIME, max_restart = MAX_SOFTIRQ_RESTART.
    end_ = jiffies + max_softirq_time(config_.hz);
    max_restart_ = kMaxSoftirqRestart;
    passes_this_run_ = 0;
    if (context == SoftirqContext::ksoftirqd) {
        // The thread is running now, no longer waiting to be scheduled.
        ksoftirqd_run_at_.reset();
        ++stats_.runs_ksoftirqd;
    } else {
        ++stats_.runs_irq_exit;
    }
}

std::uint32_t SoftirqCpu::start_pass() {
    if (!running_ || in_pass_) throw std::logic_error("start_pass() outside handle_softirqs()");
    in_pass_ = true;
    ++stats_.passes;
    ++passes_this_run_;
    stats_.max_passes_per_run = std::max(stats_.max_passes_per_run, passes_this_run_);
    // "Reset the pending bitmask before enabling irqs": bits raised while the
    // handlers run (by a tick) show up as pending at the end of the pass.
    const std::uint32_t mask = pending_;
    pending_ = 0;
    return mask;
}

SoftirqCpu::PassEnd SoftirqCpu::end_pass(Jiffies jiffies, std::uint64_t now_ns) {
    if (!in_pass_) throw std::logic_error("end_pass() without start_pass()");
    in_pass_ = false;
    if (pending_ == 0) {
        running_ = false;
        return PassEnd::done;
    }
    // 6.1 handle_softirqs(): time_before(jiffies, end) && !need_resched() &&
    // --max_restart. need_resched() is never true here (nothing else to run).
    const bool in_time = time_before(jiffies, end_);
    if (in_time && --max_restart_ != 0) {
        ++stats_.restarts;
        return PassEnd::restart;
    }
    // wakeup_softirqd(). From ksoftirqd itself this is a no-op wakeup of the
    // running thread, which loops after cond_resched(): modelled as being
    // scheduled again after the same delay.
    ++stats_.deferrals;
    if (!in_time)
        ++stats_.deferrals_by_time;
    else
        ++stats_.deferrals_by_restarts;
    const std::uint64_t run_at = now_ns + config_.ksoftirqd_delay_ns;
    if (!ksoftirqd_run_at_ || run_at < *ksoftirqd_run_at_) ksoftirqd_run_at_ = run_at;
    running_ = false;
    return PassEnd::deferred;
}

} // namespace timersim
