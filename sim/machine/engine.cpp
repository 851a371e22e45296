// The engine compiled once, for each queue of wheel/: every other file sees
// only sim/machine/engine.hpp and links these instantiations.
#include "sim/machine/engine_ticks_impl.hpp"

#include "wheel/cascading_wheel.hpp"
#include "wheel/classic_wheel.hpp"
#include "wheel/heap_queue.hpp"
#include "wheel/in_place_wheel.hpp"
#include "wheel/modern_wheel.hpp"

namespace timersim {

template class Engine<ClassicWheel>;
template class Engine<ModernWheel>;
template class Engine<HeapQueue>;
template class Engine<CascadingWheel>;
template class Engine<InPlaceWheel>;

} // namespace timersim
