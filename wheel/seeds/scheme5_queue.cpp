// Scheme5Queue compiled once here, so every member is checked even
// where no caller uses it yet.
#include "wheel/seeds/scheme5_queue.hpp"

namespace timersim {

template class ListQueue<Scheme5Rules>;
static_assert(TimerQueue<Scheme5Queue>);

} // namespace timersim
