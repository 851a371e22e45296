// The engine compiled once, for each queue of the design registry
// (design_list.hpp) and the configurable wheel's two: every other file sees
// only sim/machine/engine.hpp and links these instantiations.
#include "sim/machine/design_queues.hpp"
#include "sim/machine/engine_log_impl.hpp"
#include "sim/machine/engine_ticks_impl.hpp"
#include "sim/machine/engine_timers_impl.hpp"

namespace timersim {

#define TIMERSIM_INSTANTIATE_ENGINE(id, name, Queue, ...) template class Engine<Queue>;
TIMERSIM_DESIGNS(TIMERSIM_INSTANTIATE_ENGINE)
#undef TIMERSIM_INSTANTIATE_ENGINE
template class Engine<CascadingWheel>;
template class Engine<InPlaceWheel>;

} // namespace timersim
