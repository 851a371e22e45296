// Scheme6Queue compiled once here, so every member is checked even
// where no caller uses it yet.
#include "wheel/seeds/scheme6_queue.hpp"

namespace timersim {

template class ListQueue<Scheme6Rules>;
static_assert(TimerQueue<Scheme6Queue>);

} // namespace timersim
