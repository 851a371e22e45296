// The seeds' designs by Design: with_seed_queue(d, f) calls
// f.template operator()<Q>() with d's queue type, so a caller that builds
// any of them at its default geometry (run_machine(), `timersim step`) has
// one generic lambda instead of a case per design. One line per design.
#pragma once

#include "sim/machine/design.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme1_queue.hpp"
#include "wheel/seeds/scheme2_queue.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme5_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"

#include <stdexcept>

namespace timersim {

template <class F>
decltype(auto) with_seed_queue(Design d, F&& f) {
    switch (d) {
    case Design::scheme1: return f.template operator()<Scheme1Queue>();
    case Design::scheme2: return f.template operator()<Scheme2Queue>();
    case Design::scheme4: return f.template operator()<Scheme4Queue>();
    case Design::scheme5: return f.template operator()<Scheme5Queue>();
    case Design::scheme6: return f.template operator()<Scheme6Queue>();
    case Design::netty: return f.template operator()<NettyWheel>();
    case Design::cog: return f.template operator()<CogWheel>();
    default: break;
    }
    throw std::invalid_argument("not one of the seeds' designs");
}

} // namespace timersim
