#include "sim/queue_comparison.hpp"

#include "wheel/classic_wheel.hpp"
#include "wheel/heap_queue.hpp"
#include "wheel/modern_wheel.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace timersim {

namespace {

template <TimerQueue Q>
DesignResult drive(Q& queue, Design design, const ComparisonConfig& config, Jiffies ticks,
                   const std::function<void(Jiffies)>& on_tick_done, EventLog* events) {
    DesignResult result;
    result.design = design;
    result.bytes_per_timer = queue.bytes_per_timer();

    const Jiffies start = queue.jiffies();
    ConnectionChurn churn(config.workload, start);
    const std::uint32_t n = churn.connections();
    queue.reserve(n);
    std::vector<TimerId> ids(n);
    std::vector<Jiffies> requested(n, 0);
    // Timer ids are dense, so a flat table maps a timer back to its connection.
    std::vector<std::uint32_t> conn_of;
    for (std::uint32_t c = 0; c < n; ++c) {
        ids[c] = queue.create(TimerFlags{});
        if (conn_of.size() <= ids[c]) conn_of.resize(ids[c] + 1);
        conn_of[ids[c]] = c;
    }

    const std::string_view name = to_string(design);
    const bool has_buckets = design != Design::heap;
    // Tick t happens at floor(t * 1e9 / HZ) ns: exact, no drift at HZ=300.
    const unsigned hz = config.workload.hz;
    auto time_ns = [&](Jiffies j) { return (j - start) * 1000000000ull / hz; };

    auto on_fire = [&](const FiredTimer& fired) {
        const std::uint32_t c = conn_of[fired.id];
        result.error_jiffies.add(jiffies_diff(queue.jiffies(), requested[c]));
        if (events)
            events->add(name, 0, time_ns(queue.jiffies()), queue.jiffies(), TimerEvent::fire, c, fired.expires,
                        nullptr, has_buckets);
    };

    for (Jiffies t = 1; t <= ticks; ++t) {
        queue.set_jiffies(start + t);
        if (queue.softirq_due()) {
            const std::uint64_t expired_before = queue.counters().expired;
            const std::uint64_t moves_before = queue.counters().cascade_moves;
            queue.run_softirq(on_fire);
            ++result.ticks_with_softirq;
            result.max_expired_per_tick =
                std::max(result.max_expired_per_tick, queue.counters().expired - expired_before);
            result.max_cascade_moves_per_tick = std::max(
                result.max_cascade_moves_per_tick, queue.counters().cascade_moves - moves_before);
        }
        while (const auto conn = churn.pop_message(queue.jiffies())) {
            const Jiffies expires = queue.jiffies() + churn.draw_timeout(*conn);
            requested[*conn] = expires;
            const TimerId id = ids[*conn];
            const bool was_pending = events && queue.is_pending(id);
            const ArmOutcome outcome = queue.arm(id, expires, ArmCall::mod_timer);
            ++result.arms;
            if (events && outcome == ArmOutcome::queued) {
                const Placement p = queue.placement(id);
                const std::uint64_t now_ns = time_ns(queue.jiffies());
                if (was_pending)
                    events->add(name, 0, now_ns, queue.jiffies(), TimerEvent::cancel, *conn, p.expires, nullptr,
                                has_buckets);
                events->add(name, 0, now_ns, queue.jiffies(), TimerEvent::enqueue, *conn, p.expires, &p, has_buckets);
            }
        }
        if (on_tick_done && (t & 1023) == 0) on_tick_done(t);
    }
    result.counters = queue.counters();
    result.pending_at_end = queue.pending();
    return result;
}

} // namespace

ComparisonResult run_comparison(const ComparisonConfig& config, const ProgressFn& progress, EventLog* events) {
    const unsigned hz = config.workload.hz;
    if (hz == 0 || hz > 10000) throw std::invalid_argument("hz must be in 1..10000");
    if (!(config.duration_s > 0) || config.duration_s * hz > 1e10)
        throw std::invalid_argument("duration must be positive and at most 1e10 ticks");
    if (config.designs.empty()) throw std::invalid_argument("no design selected");

    ComparisonResult out;
    out.config = config;
    out.start_jiffies = initial_jiffies(hz);
    out.ticks = static_cast<Jiffies>(std::llround(config.duration_s * hz));

    const double total = static_cast<double>(out.ticks) * static_cast<double>(config.designs.size());
    for (std::size_t i = 0; i < config.designs.size(); ++i) {
        const Design d = config.designs[i];
        auto tick_done = [&](Jiffies t) {
            if (progress) progress((static_cast<double>(i * out.ticks) + static_cast<double>(t)) / total);
        };
        switch (d) {
        case Design::classic: {
            ClassicWheel q(ClassicWheel::Config{.hz = hz, .start_jiffies = out.start_jiffies,
                                                .geometry = config.classic_geometry,
                                                .slack = config.classic_slack});
            out.designs.push_back(drive(q, d, config, out.ticks, tick_done, events));
            break;
        }
        case Design::modern: {
            ModernWheel q(ModernWheel::Config{.hz = hz, .start_jiffies = out.start_jiffies});
            out.designs.push_back(drive(q, d, config, out.ticks, tick_done, events));
            break;
        }
        case Design::heap: {
            HeapQueue q(HeapQueue::Config{.hz = hz, .start_jiffies = out.start_jiffies});
            out.designs.push_back(drive(q, d, config, out.ticks, tick_done, events));
            break;
        }
        }
    }
    if (progress) progress(1.0);
    return out;
}

} // namespace timersim
