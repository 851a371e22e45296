// What the seeds' designs' tests share: a queue of each design at a given
// start, and a recorder of what fired at which jiffy.
#pragma once

#include "wheel/core/heap_queue.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme1_queue.hpp"
#include "wheel/seeds/scheme2_queue.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme5_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"

#include <string>
#include <vector>

namespace timersim::test {

template <class Q>
Q make_queue(Jiffies start, unsigned slots = 0) {
    if constexpr (std::is_same_v<Q, NettyWheel>)
        return Q(NettyWheel::Config{.hz = 250, .start_jiffies = start,
                                    .ticks_per_wheel = slots ? slots : NettyWheel::kDefaultTicksPerWheel});
    else if constexpr (std::is_same_v<Q, CogWheel>)
        return Q(CogWheel::Config{.hz = 250, .start_jiffies = start});
    else if constexpr (std::is_same_v<Q, HeapQueue>)
        return Q(HeapQueue::Config{.hz = 250, .start_jiffies = start});
    else
        return Q(ListQueueConfig{.hz = 250, .start_jiffies = start, .slots = slots ? slots : 256});
}

// The revolution of a design: where its slot boundaries are (the list
// schemes have none; 64 for cog's ring 0).
template <class Q>
Jiffies revolution(const Q& q) {
    if constexpr (std::is_same_v<Q, NettyWheel>)
        return q.wheel_length();
    else if constexpr (std::is_same_v<Q, CogWheel>)
        return CogWheel::kRingSize;
    else if constexpr (requires { q.rules().slots; })
        return q.rules().slots;
    else
        return 64;
}

struct Shot {
    TimerId id;
    Jiffies expires;
    Jiffies at; // jiffies when it ran
};

} // namespace timersim::test
