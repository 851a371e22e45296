// Scheme2Queue compiled once here, so every member is checked even
// where no caller uses it yet.
#include "wheel/seeds/scheme2_queue.hpp"

namespace timersim {

template class ListQueue<Scheme2Rules>;
static_assert(TimerQueue<Scheme2Queue>);

} // namespace timersim
