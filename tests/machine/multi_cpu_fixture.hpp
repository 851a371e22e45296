// What the multi-CPU engine tests share (test_multi_cpu.cpp,
// test_running_timer.cpp): queues for N CPUs and a workload whose actions
// and fires are test code.
#pragma once

#include "sim/machine/engine.hpp"
#include "wheel/kernel/classic_wheel.hpp"

#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

namespace timersim::test {

inline constexpr unsigned kHz = 250;

template <class Q>
inline Q make_queue(unsigned hz = kHz) {
    if constexpr (std::is_same_v<Q, ClassicWheel>)
        return ClassicWheel(ClassicWheel::Config{.hz = hz, .slack = std::nullopt});
    else
        return Q(typename Q::Config{.hz = hz});
}

template <class Q>
inline std::vector<Q> make_queues(unsigned n, unsigned hz = kHz) {
    std::vector<Q> v;
    for (unsigned i = 0; i < n; ++i) v.push_back(make_queue<Q>(hz));
    return v;
}

// Runs a workload step on a CPU.
struct Call final : Workload {
    std::function<void(Sim&, std::uint64_t)> action;
    std::vector<FireRecord> fired;
    std::function<void(Sim&, const FireRecord&)> fire;
    void on_action(Sim& sim, std::uint64_t tag) override {
        if (action) action(sim, tag);
    }
    void on_fire(Sim& sim, const FireRecord& r) override {
        fired.push_back(r);
        if (fire) fire(sim, r);
    }
    const FireRecord* find(TimerId id) const {
        for (const auto& r : fired)
            if (r.id == id) return &r;
        return nullptr;
    }
};

inline Action call_on(unsigned cpu, std::uint64_t tag = 0) { return Action{.kind = Action::Kind::call, .cpu = cpu, .tag = tag}; }

} // namespace timersim::test
