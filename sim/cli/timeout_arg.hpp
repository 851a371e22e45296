// Timeouts as users type them: a bare number is jiffies ("36"), a number
// with a unit is time ("144ms", "1.5s", "2h", "7d"; units ns, us, ms, s, m,
// h, d). Time converts to jiffies rounding up, as msecs_to_jiffies() does.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <string_view>

namespace timersim {

// Throws std::invalid_argument with a message naming what is wrong.
Jiffies parse_timeout_jiffies(std::string_view text, unsigned hz);

} // namespace timersim
