// The engine's tests that arm many timers on one jiffy (test_engine.cpp,
// test_bounded_softirq.cpp) watch the burst through this workload.
#pragma once

#include "workloads/workload.hpp"

#include <cstdint>

namespace timersim::test {

// Records fire times of a burst.
class BurstWorkload final : public Workload {
public:
    void on_fire(Sim&, const FireRecord& r) override {
        ++fired;
        last_fire_ns = r.fire_ns;
        last_error_ns = r.error_ns;
        last_fired_jiffies = r.fired_jiffies;
        if (fired == 1) first_fire_ns = r.fire_ns;
    }
    std::uint64_t fired = 0, first_fire_ns = 0, last_fire_ns = 0;
    std::int64_t last_error_ns = 0;
    Jiffies last_fired_jiffies = 0;
};

} // namespace timersim::test
