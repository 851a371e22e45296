// Scheme4Queue compiled once here, so every member is checked even
// where no caller uses it yet.
#include "wheel/seeds/scheme4_queue.hpp"

namespace timersim {

template class ListQueue<Scheme4Rules>;
static_assert(TimerQueue<Scheme4Queue>);

} // namespace timersim
