// The queue each design of the registry (design_list.hpp) runs on, and how
// it is built: with_design_queue(d, wheel, f) calls f.template operator()<Q>()
// with d's queue type, and queue_config<Q>(params) gives that queue's Config.
// So run_machine(), `timersim step` and the browser playground each hold one
// generic lambda instead of a case per design:
//
//     with_design_queue(design, params.wheel, [&]<TimerQueue Q>() {
//         Q queue(queue_config<Q>(params));
//         ...
//     });
//
// A new design's header goes here; a queue whose Config reads more than
// {hz, start_jiffies} gets its queue_config() specialisation here too.
#pragma once

#include "sim/machine/design.hpp"
#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"
#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_levels.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern69_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme1_queue.hpp"
#include "wheel/seeds/scheme2_queue.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme5_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace timersim {

// What any design's queue is built from: the machine's clock, and the
// options only some designs read.
struct QueueParams {
    unsigned hz = 0;
    Jiffies start_jiffies = 0;
    classic::Geometry classic_geometry = classic::Geometry::normal(); // classic
    std::optional<std::int64_t> classic_slack = -1; // classic, cascading wheel:SPEC (ClassicWheel::Config::slack)
    bool classic_oldest_first = false;               // classic: ClassicWheel::SlotOrder::oldest_first
    std::optional<WheelGeometry> wheel;             // Design::wheel: its geometry at hz
};

// Q's Config: every queue takes the clock; the others read what they need.
template <class Q>
typename Q::Config queue_config(const QueueParams& p) {
    return {.hz = p.hz, .start_jiffies = p.start_jiffies};
}

template <>
inline ClassicWheel::Config queue_config<ClassicWheel>(const QueueParams& p) {
    return {.hz = p.hz, .start_jiffies = p.start_jiffies, .geometry = p.classic_geometry, .slack = p.classic_slack};
}

template <>
inline CascadingWheel::Config queue_config<CascadingWheel>(const QueueParams& p) {
    return {.hz = p.hz, .start_jiffies = p.start_jiffies, .geometry = p.wheel.value(), .slack = p.classic_slack};
}

template <>
inline InPlaceWheel::Config queue_config<InPlaceWheel>(const QueueParams& p) {
    return {.hz = p.hz, .start_jiffies = p.start_jiffies, .geometry = p.wheel.value()};
}

// The configurable wheel's queue: cascading or in place, as its geometry says.
template <class F>
decltype(auto) with_configurable_wheel(const std::optional<WheelGeometry>& wheel, F&& f) {
    if (!wheel) throw std::invalid_argument("the wheel design needs a geometry");
    if (wheel->mode == WheelMode::cascade) return f.template operator()<CascadingWheel>();
    return f.template operator()<InPlaceWheel>();
}

template <class F>
decltype(auto) with_design_queue(Design d, const std::optional<WheelGeometry>& wheel, F&& f) {
#define TIMERSIM_DESIGN_CASE(id, name, Queue, ...)                                                                        \
    case Design::id: return f.template operator()<Queue>();
    switch (d) {
        TIMERSIM_DESIGNS(TIMERSIM_DESIGN_CASE)
    case Design::wheel: return with_configurable_wheel(wheel, f);
    }
#undef TIMERSIM_DESIGN_CASE
    throw std::invalid_argument("unknown design");
}

// A queue of type Q for params: its Config, then what the Config does not
// hold (the classic wheel's slot order).
template <class Q>
Q make_queue(const QueueParams& p) {
    Q q(queue_config<Q>(p));
    if constexpr (std::is_same_v<Q, ClassicWheel>)
        if (p.classic_oldest_first) q.set_slot_order(ClassicWheel::SlotOrder::oldest_first);
    return q;
}

} // namespace timersim
