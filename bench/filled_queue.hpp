// FilledQueue: a queue holding N pending timers, the fixture of the arm,
// re-arm and bytes-per-timer benchmarks, and the cache that keeps one alive
// across them (filling 10M timers takes seconds; Google Benchmark calls a
// benchmark function several times while it sizes the iteration count).
//
// The fill creates N timers in order (handles 0..N-1) and arms each with a
// uniform random delay (delay_tables.hpp), so every bucket holds timers
// scattered across the pool, as on a machine whose timers were armed in no
// particular order. The resident memory growth of the fill is recorded.
#pragma once

#include "bench/bench_hz.hpp"
#include "bench/cpu_clock.hpp"
#include "bench/delay_tables.hpp"
#include "bench/resident_memory.hpp"
#include "wheel/core/timer_queue.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

namespace timersim::bench {

template <TimerQueue Q>
class FilledQueue {
public:
    static constexpr std::uint64_t kFillSeed = 0x5eed'0001;

    explicit FilledQueue(std::size_t n) : ids_(n), expires_(n) {
        // Everything this fixture owns is allocated and touched before the
        // first reading, so the resident growth is the queue's alone.
        const std::vector<Jiffies> delays = uniform_delays(n, kFillSeed);
        const std::size_t rss_before = resident_bytes();
        const auto t0 = CpuClock::now();
        queue_ = std::make_unique<Q>(typename Q::Config{.hz = kBenchHz});
        const Jiffies now = queue_->jiffies();
        for (std::size_t i = 0; i < n; ++i) {
            ids_[i] = queue_->create();
            expires_[i] = now + delays[i];
            queue_->arm(ids_[i], expires_[i]);
        }
        const auto t1 = CpuClock::now();
        const std::size_t rss_after = resident_bytes();
        fill_seconds_ = std::chrono::duration<double>(t1 - t0).count(); // CPU time
        resident_growth_ = rss_after > rss_before ? rss_after - rss_before : 0;
        spare_ = queue_->create(); // the idle timer that arm+cancel uses
    }

    Q& queue() noexcept { return *queue_; }
    std::size_t size() const noexcept { return ids_.size(); }
    // The pending timers, and the expiry each was first armed with.
    const std::vector<TimerId>& ids() const noexcept { return ids_; }
    const std::vector<Jiffies>& expires() const noexcept { return expires_; }
    // A created, idle timer of the same queue.
    TimerId spare() const noexcept { return spare_; }
    double fill_seconds() const noexcept { return fill_seconds_; }
    std::size_t resident_growth() const noexcept { return resident_growth_; }

private:
    std::vector<TimerId> ids_;
    std::vector<Jiffies> expires_;
    std::unique_ptr<Q> queue_;
    TimerId spare_ = kNoTimer;
    double fill_seconds_ = 0;
    std::size_t resident_growth_ = 0;
};

namespace detail {
struct FilledQueueSlot {
    std::shared_ptr<void> queue; // a FilledQueue<Q>, type-erased
    const void* type = nullptr;  // &type_tag<Q>
    std::size_t n = 0;
};
inline FilledQueueSlot& filled_queue_slot() {
    static FilledQueueSlot slot;
    return slot;
}
template <class Q>
inline constexpr char type_tag = 0; // one distinct address per queue type
} // namespace detail

// The cached FilledQueue<Q> of n timers, built on first use. Only one is kept:
// asking for another queue type or size frees the old one first, so two
// 10M-timer queues never exist at once.
template <TimerQueue Q>
FilledQueue<Q>& filled_queue(std::size_t n) {
    auto& slot = detail::filled_queue_slot();
    if (slot.type != &detail::type_tag<Q> || slot.n != n) {
        slot = {};
        slot.queue = std::make_shared<FilledQueue<Q>>(n);
        slot.type = &detail::type_tag<Q>;
        slot.n = n;
    }
    return *static_cast<FilledQueue<Q>*>(slot.queue.get());
}

// Free the cached queue (before benchmarks that build their own).
inline void release_filled_queue() { detail::filled_queue_slot() = {}; }

} // namespace timersim::bench
