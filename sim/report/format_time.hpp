// Human-readable durations for reports: jiffies at a given HZ shown with the
// largest unit that keeps the number readable ("62 ms", "4.3 m", "12.2 d").
#pragma once

#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <string>

namespace timersim {

std::string format_seconds(long double seconds);
std::string format_jiffies_as_time(Jiffies jiffies, unsigned hz);
// Fixed decimals per unit, for aligned columns: "950 ns", "12.5 us",
// "3.20 ms", "1.500 s".
std::string format_ns(std::int64_t ns);
// "1 jiffy", "8 jiffies"
std::string jiffies_word(Jiffies jiffies);

} // namespace timersim
