// What every generator shares: the run's end, unit conversions, and the tag
// layout of its call actions (the connection in the low 32 bits, the step
// kind in the next 8; a composite workload owns the top 8 bits).
#pragma once

#include "workloads/workload.hpp"

#include <cmath>
#include <cstdint>
#include <memory>

namespace timersim::gen {

inline constexpr std::uint64_t kNsPerMs = 1'000'000;
inline constexpr std::uint64_t kNsPerS = 1'000'000'000;

// Nominal time of tick n, as sim/machine/engine.hpp tick_time_ns().
constexpr std::uint64_t tick_ns(std::uint64_t n, unsigned hz) noexcept {
    return n / hz * kNsPerS + n % hz * kNsPerS / hz;
}

// A duration in ms as jiffies, rounded up like msecs_to_jiffies(), at least 1.
inline Jiffies ms_to_jiffies(double ms, unsigned hz) {
    const double j = std::ceil(ms * hz / 1000.0 - 1e-9);
    return j < 1 ? 1 : static_cast<Jiffies>(j);
}

inline std::uint64_t ms_to_ns(double ms) { return static_cast<std::uint64_t>(std::llround(ms * 1e6)); }

constexpr std::uint64_t action_tag(std::uint32_t conn, std::uint8_t kind) noexcept {
    return std::uint64_t{kind} << 32 | conn;
}
constexpr std::uint32_t tag_connection(std::uint64_t tag) noexcept { return static_cast<std::uint32_t>(tag); }
constexpr std::uint8_t tag_kind(std::uint64_t tag) noexcept { return static_cast<std::uint8_t>(tag >> 32); }

// Connection c runs on CPU c % cpus: its actions run there, so its timers
// are queued on that CPU's base.
inline std::uint32_t cpu_of(std::uint32_t conn, const Sim& sim) noexcept { return conn % sim.cpus(); }

// The run's end: generators schedule nothing after it, so a run's pending
// actions stay bounded by one per connection.
struct RunEnd {
    std::uint64_t end_ns;

    RunEnd(std::uint64_t ticks, unsigned hz) : end_ns(tick_ns(ticks, hz)) {}

    // Schedules step `kind` of `conn` at `at_ns` on the connection's CPU;
    // false (nothing scheduled) past the end.
    bool schedule(Sim& sim, std::uint64_t at_ns, std::uint32_t conn, std::uint8_t kind) const {
        if (at_ns > end_ns) return false;
        sim.schedule_action(at_ns, Action{.kind = Action::Kind::call, .cpu = cpu_of(conn, sim),
                                          .tag = action_tag(conn, kind)});
        return true;
    }
};

// The factory of a generator whose workload class W is built as
// W(config, sim, ticks): what each generator's *_workload() returns.
template <class W, class Config>
WorkloadFactory factory_of(const Config& config, std::uint64_t ticks) {
    return [=](Sim& sim) -> std::unique_ptr<Workload> { return std::make_unique<W>(config, sim, ticks); };
}

} // namespace timersim::gen
