#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/kernel/kernel_event_stream.hpp"

#include "wheel/kernel/modern_levels.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace timersim {

void KernelFireCollector::timer_event(const FtraceEvent& e) {
    // 6.1 call_timer_fn(): trace_timer_expire_entry(timer, baseclk) prints
    // now=jiffies as the callback starts, on the CPU running the softirq.
    if (const auto j = e.jiffies(); j && (!latest_jiffies_ || time_after(*j, *latest_jiffies_))) latest_jiffies_ = j;
    trace_cpus_ = trace_cpus_with(e, trace_cpus_);
    const bool start_or_entry =
        e.type == FtraceEventType::timer_start || e.type == FtraceEventType::timer_expire_entry;
    TimerSeen* seen = start_or_entry || !doubt_ ? &timers_[e.timer] : nullptr;
    if (e.type == FtraceEventType::timer_start) {
        seen->started = true;
        seen->deferrable = (e.flags & kFtraceDeferrable) != 0;
        seen->cpu = e.cpu;
        seen->expires = e.expires;
        inference_.start(e.timer, e.cpu, (e.flags & kFtraceDeferrable) != 0, (e.flags & kFtracePinned) != 0);
    }
    if (e.type == FtraceEventType::timer_init) inference_.forget(e.timer);
    note_unfired(e);
    note_next_in_run(e);
    if (!doubt_ && seen) note_sequence(e, seen->sequence);
    if (e.type == FtraceEventType::timer_expire_entry && e.now) {
        // The first expiry after a remote run began gives that run's jiffy.
        if (const auto r = remote_open_.find(e.line_cpu); r != remote_open_.end()) {
            for (const std::size_t i : r->second) remote_runs_[i].now = *e.now;
            remote_open_.erase(r);
        }
        const bool known = seen->started;
        std::uint32_t function = kNoFunction;
        if (!e.function.empty()) {
            auto f = function_ids_.find(e.function);
            if (f == function_ids_.end()) {
                f = function_ids_.emplace(std::string(e.function), static_cast<std::uint32_t>(functions_.size())).first;
                functions_.emplace_back(e.function);
            }
            function = f->second;
        }
        KernelFire f;
        f.timer = e.timer;
        f.now = *e.now;
        f.entry_ns = e.timestamp_ns;
        f.cpu = e.line_cpu;
        f.function = function;
        f.deferrable = known && seen->deferrable;
        f.remote = known && seen->cpu && *seen->cpu != e.line_cpu;
        f.set_baseclk(e.baseclk).set_requested(known ? std::optional<Jiffies>(seen->expires) : std::nullopt);
        if (const auto r = running_remote_.find(e.line_cpu); r != running_remote_.end()) f.set_remote_of(r->second);
        // What a tmigr_handle_remote_cpu line would have opened (used only
        // if the trace has none).
        if (const RemoteExpiryInference::Expiry x = inference_.expiry(e.timer, e.line_cpu);
            x.remote_of != RemoteExpiryInference::kNone) {
            inferred_fires_.emplace_back(fires_.size(), x.remote_of);
            if (x.opens_run) {
                const auto entry = softirq_entry_ns_.find(e.line_cpu);
                inferred_runs_.push_back(KernelRemoteRun{e.line_cpu, x.remote_of,
                                                         entry == softirq_entry_ns_.end() ? 0 : entry->second, *e.now});
            }
        }
        add_fire(f);
        open_[e.line_cpu] = Open{fires_.size() - 1, e.timestamp_ns};
    }
    // The exit of the callback open on its CPU; one whose entry was lost
    // (another timer's is open there) measures nothing.
    if (e.type == FtraceEventType::timer_expire_exit) {
        const auto o = open_.find(e.line_cpu);
        if (o != open_.end() && fires_[o->second.fire].timer == e.timer && e.timestamp_ns >= o->second.entry_ns) {
            fires_[o->second.fire].set_callback_ns(e.timestamp_ns - o->second.entry_ns);
            exited_[e.line_cpu] = Exited{o->second.fire, e.timestamp_ns};
        }
        if (o != open_.end()) open_.erase(o);
    }
}

void KernelFireCollector::add_fire(const KernelFire& f) {
    fires_.push_back(f);
    if (spill_name_.empty() || fires_.size() % spill_chunk_ != 0) return;
    // Each chunk it fills, what is older than every fire it may still
    // change (a callback open or just exited on a CPU) may go to the file.
    std::size_t oldest = fires_.size();
    for (const auto& [cpu, o] : open_) oldest = std::min(oldest, o.fire);
    for (const auto& [cpu, x] : exited_) oldest = std::min(oldest, x.fire);
    fires_.spill_before(oldest, spill_name_);
}

void KernelFireCollector::note_sequence(const FtraceEvent& e, SequenceState& s) {
    using Timer = SequenceState::Timer;
    const CancelNeighbour here{e.type, e.timer, e.timestamp_ns, e.line_cpu};
    // validate's cancel_to_apply(): a cancel is applied unless the timer's
    // next event (of any kind) shows it was the detach of its expiry.
    if (s.cancel_open) {
        s.cancel_open = false;
        const CancelNeighbour cancel{FtraceEventType::timer_cancel, e.timer, s.cancel_ns, s.cancel_cpu};
        if (!detaches_for(cancel, here) && s.timer == Timer::started) s.timer = Timer::known_idle;
    }
    switch (e.type) {
    case FtraceEventType::timer_init: s.timer = Timer::known_idle; break; // a new timer object, known
    case FtraceEventType::timer_start:
        // Without these validate checks nothing and arms nothing.
        if (!e.cpu || !e.idx || !e.jiffies()) break;
        if (s.timer == Timer::started) doubt_ = true;
        s.timer = Timer::started;
        break;
    case FtraceEventType::timer_cancel:
        s.cancel_open = true;
        s.cancel_cpu = e.line_cpu;
        s.cancel_ns = e.timestamp_ns;
        break;
    case FtraceEventType::timer_expire_entry:
        // Without these validate leaves the timer as it was (unknown history).
        if (!e.now || !e.baseclk) break;
        if (s.timer == Timer::known_idle) doubt_ = true;
        if (s.timer != Timer::unseen) s.timer = Timer::known_idle;
        break;
    case FtraceEventType::timer_expire_exit: break;
    }
}

void KernelFireCollector::note_next_in_run(const FtraceEvent& e) {
    const auto x = exited_.find(e.line_cpu);
    if (x == exited_.end() || e.type == FtraceEventType::timer_cancel) return;
    KernelFire& last = fires_[x->second.fire];
    if (e.type == FtraceEventType::timer_expire_entry && e.now) {
        const bool same_bucket = e.baseclk && last.baseclk() && *e.baseclk == *last.baseclk();
        if (same_bucket || e.timestamp_ns - x->second.exit_ns <= kSameRunGapNs) last.set_next_in_run(*e.now);
    }
    exited_.erase(x);
}

void KernelFireCollector::note_unfired(const FtraceEvent& e) {
    // A cancel that was not its expiry's detach (cancel_meaning.hpp): its
    // timer went unfired.
    if (const auto c = cancelled_.find(e.timer); c != cancelled_.end()) {
        const auto& [unfired, cancel] = c->second;
        if (!detaches_for(cancel, CancelNeighbour{e.type, e.timer, e.timestamp_ns, e.line_cpu}) &&
            may_prove_hold(unfired))
            unfired_.push_back(unfired);
        cancelled_.erase(c);
    }
    switch (e.type) {
    case FtraceEventType::timer_start: {
        queued_.erase(e.timer);
        if ((e.flags & kFtraceDeferrable) || !e.cpu) return;
        if (e.bucket_expiry) { // 6.8+
            queued_[e.timer] = KernelUnfired{*e.cpu, *e.bucket_expiry, 0};
        } else if (e.idx && *e.idx < modern::kLevelSize * (modern::kMaxDepth - 1)) {
            // 6.1 calc_index(): the level is the bucket's; the last level
            // holds clamped timers, whose expiry it does not round.
            const auto at = modern::place_at_level(e.expires, *e.idx / modern::kLevelSize);
            queued_[e.timer] = KernelUnfired{*e.cpu, at.bucket_expiry, 0};
        }
        return;
    }
    case FtraceEventType::timer_cancel:
        if (const auto q = queued_.find(e.timer); q != queued_.end()) {
            cancelled_[e.timer] = {KernelUnfired{q->second.cpu, q->second.bucket_expiry, e.timestamp_ns},
                                   CancelNeighbour{e.type, e.timer, e.timestamp_ns, e.line_cpu}};
            queued_.erase(q);
        }
        return;
    case FtraceEventType::timer_expire_entry: queued_.erase(e.timer); return;
    default: return;
    }
}

std::vector<KernelUnfired> KernelFireCollector::unfired() const {
    std::vector<KernelUnfired> all = unfired_;
    for (const auto& [timer, c] : cancelled_)
        if (may_prove_hold(c.first)) all.push_back(c.first);
    std::sort(all.begin(), all.end(), [](const KernelUnfired& a, const KernelUnfired& b) { return a.cancel_ns < b.cancel_ns; });
    return all;
}

void KernelFireCollector::timer_softirq(const FtraceTimerSoftirq& e) {
    // A TIMER softirq's start or end ends the remote runs open on its CPU.
    remote_open_.erase(e.line_cpu);
    running_remote_.erase(e.line_cpu);
    inference_.softirq(e.line_cpu);
    if (e.entry) softirq_entry_ns_[e.line_cpu] = e.timestamp_ns;
}

namespace {

// The number at the start of `rest`.
bool number_at(std::string_view rest, std::uint32_t& n) {
    const std::string_view digits = rest.substr(0, rest.find_first_not_of("0123456789"));
    return !digits.empty() && std::from_chars(digits.data(), digits.data() + digits.size(), n).ec == std::errc{};
}

} // namespace

void KernelFireCollector::other_line(std::uint64_t line, std::string_view text) {
    if (const std::optional<LostMarker> lost = lost_marker_of(line, text)) {
        if (lost->cpu < kMaxKernelCpus) lost_lines_.push_back(KernelLostLine{lost->cpu, latest_jiffies_, fires_.size()});
        return;
    }
    // 6.9 tmigr_handle_remote_cpu() traces the idle CPU before it calls
    // timer_expire_remote() for it, unless that CPU is the migrator itself.
    static constexpr std::string_view kRemote = " tmigr_handle_remote_cpu: cpu=";
    if (!timer_migration_ && is_timer_migration_line(text)) timer_migration_ = true;
    if (const auto at = text.find(kRemote); at != std::string_view::npos) {
        std::uint32_t migrator = 0;
        std::uint32_t cpu = 0;
        if (other_line_cpu(text.substr(0, at), migrator) && number_at(text.substr(at + kRemote.size()), cpu) &&
            cpu != migrator) {
            const auto entry = softirq_entry_ns_.find(migrator);
            remote_open_[migrator].push_back(remote_runs_.size());
            running_remote_[migrator] = cpu;
            remote_runs_.push_back(KernelRemoteRun{migrator, cpu, entry == softirq_entry_ns_.end() ? 0 : entry->second,
                                                   std::nullopt});
        }
    }
}

std::uint64_t KernelFireCollector::use_inferred_remote_runs() {
    remote_runs_ = std::move(inferred_runs_);
    remote_open_.clear();
    fires_.update_sorted(inferred_fires_.begin(), inferred_fires_.end(),
                         [](KernelFire& f, const std::pair<std::size_t, std::uint32_t>& x) { f.set_remote_of(x.second); });
    return inferred_fires_.size();
}

std::vector<KernelLostLine> KernelFireCollector::lost_lines() const {
    std::vector<KernelLostLine> on_trace_cpus;
    for (const KernelLostLine& l : lost_lines_)
        if (l.cpu < trace_cpus_) on_trace_cpus.push_back(l);
    return on_trace_cpus;
}

} // namespace timersim
