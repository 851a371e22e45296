// The engine compiled once, for each queue of wheel/: every other file sees
// only sim/machine/engine.hpp and links these instantiations. One line per
// design of the registry (sim/machine/design.hpp).
#include "sim/machine/engine_log_impl.hpp"
#include "sim/machine/engine_ticks_impl.hpp"
#include "sim/machine/engine_timers_impl.hpp"

#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/kernel/classic_wheel.hpp"
#include "wheel/kernel/modern_wheel.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme1_queue.hpp"
#include "wheel/seeds/scheme2_queue.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme5_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"

namespace timersim {

template class Engine<ClassicWheel>;
template class Engine<ModernWheel>;
template class Engine<HeapQueue>;
template class Engine<Scheme1Queue>;
template class Engine<Scheme2Queue>;
template class Engine<Scheme4Queue>;
template class Engine<Scheme5Queue>;
template class Engine<Scheme6Queue>;
template class Engine<NettyWheel>;
template class Engine<CogWheel>;
template class Engine<CascadingWheel>;
template class Engine<InPlaceWheel>;

} // namespace timersim
