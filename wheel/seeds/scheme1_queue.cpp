// Scheme1Queue compiled once here, so every member is checked even
// where no caller uses it yet.
#include "wheel/seeds/scheme1_queue.hpp"

namespace timersim {

template class ListQueue<Scheme1Rules>;
static_assert(TimerQueue<Scheme1Queue>);

} // namespace timersim
