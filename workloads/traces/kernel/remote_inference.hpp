// Remote expiries of a 6.9+ trace that has no timer_migration events (an
// LTTng trace: lttng-modules has no tmigr probe; an ftrace capture of
// timer:* alone), inferred from the timer events it does have.
//
// 6.9 tmigr_handle_remote_cpu() -> timer_expire_remote(cpu) ->
// __run_timer_base(BASE_GLOBAL) of that idle CPU: a migrator expires
// another CPU's global base only, in its own TIMER softirq, and prints the
// expiries on its own lines. A timer sits on the base its last timer_start
// chose (cpu=, and 6.9 get_timer_cpu_base(): not pinned and not deferrable
// is BASE_GLOBAL), so an expiry on CPU X of a timer queued on CPU Y's global
// base is X's remote expiry of Y: what the tmigr_handle_remote_cpu line
// would have said. A pinned or deferrable timer fired on another CPU is no
// remote expiry (those bases are never expired remotely): none is inferred.
//
// The inference follows the trace as the tmigr line would have: the
// expiries a CPU prints for Y, one after another in one TIMER softirq, are
// one remote run; its softirq's start or end, or an expiry of another base,
// ends it. A remote run that expired nothing leaves no trace to infer from.
//
//   RemoteExpiryInference infer;
//   infer.start(timer, cpu, deferrable, pinned);  // each timer_start
//   infer.forget(timer);                          // each timer_init
//   infer.softirq(cpu);                           // each TIMER softirq_entry/exit
//   const auto r = infer.expiry(timer, cpu);      // each timer_expire_entry
//   infer.remote_of(cpu);                         // for any line of cpu
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace timersim {

class RemoteExpiryInference {
public:
    static constexpr std::uint32_t kNone = static_cast<std::uint32_t>(-1);

    void start(std::uint64_t timer, std::optional<std::uint32_t> cpu, bool deferrable, bool pinned) {
        global_cpu_[timer] = !cpu || deferrable || pinned ? kNone : *cpu;
    }
    void forget(std::uint64_t timer) { global_cpu_.erase(timer); }
    void softirq(std::uint32_t cpu) { running_.erase(cpu); }

    struct Expiry {
        std::uint32_t remote_of = kNone; // the idle CPU whose global base `cpu` ran for it
        bool opens_run = false;          // the first expiry of that remote run
    };
    Expiry expiry(std::uint64_t timer, std::uint32_t cpu) {
        const auto g = global_cpu_.find(timer);
        // A timer the trace never showed started: where it sat is unknown,
        // and the run it fired in goes on as it was.
        if (g == global_cpu_.end()) return Expiry{remote_of(cpu), false};
        if (g->second == kNone || g->second == cpu) {
            running_.erase(cpu);
            return {};
        }
        const auto [r, added] = running_.try_emplace(cpu, g->second);
        const bool opens = added || r->second != g->second;
        r->second = g->second;
        return Expiry{g->second, opens};
    }
    // The idle CPU whose global base `cpu` is running now, or kNone.
    std::uint32_t remote_of(std::uint32_t cpu) const {
        const auto r = running_.find(cpu);
        return r == running_.end() ? kNone : r->second;
    }

private:
    std::unordered_map<std::uint64_t, std::uint32_t> global_cpu_; // timer -> the CPU whose global base holds it, or kNone
    std::unordered_map<std::uint32_t, std::uint32_t> running_;    // by CPU: its inferred remote run
};

// Is this line (FtraceObserver::other_line()) an event of the
// timer_migration system (tmigr_*)? One is enough to take the trace's
// tmigr_handle_remote_cpu lines, and not an inference, as the evidence.
inline bool is_timer_migration_line(std::string_view text) noexcept {
    const auto at = text.find(" tmigr_");
    return at != std::string_view::npos && text.find(':', at) != std::string_view::npos;
}

} // namespace timersim
