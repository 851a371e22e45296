// Human-readable durations for reports: jiffies at a given HZ shown with the
// largest unit that keeps the number readable ("62 ms", "4.3 m", "12.2 d").
#pragma once

#include "wheel/jiffies.hpp"

#include <string>

namespace timersim {

std::string format_seconds(long double seconds);
std::string format_jiffies_as_time(Jiffies jiffies, unsigned hz);
// "1 jiffy", "8 jiffies"
std::string jiffies_word(Jiffies jiffies);

} // namespace timersim
