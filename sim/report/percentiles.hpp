// The percentiles every report shows, and their names ("p50" ... "max").
#pragma once

#include <fmt/core.h>

#include <array>
#include <string>

namespace timersim {

inline constexpr std::array<double, 5> kPercentiles{50, 90, 99, 99.9, 100};

inline std::string percentile_name(double p) {
    if (p == 100) return "max";
    return fmt::format("p{}", p);
}

} // namespace timersim
