#include "sim/report/format_time.hpp"

#include <fmt/core.h>

#include <cmath>

namespace timersim {

namespace {

// Up to three significant digits, no trailing zeros: 62, 4.3, 0.125 -> 0.125.
std::string trim(long double v) {
    std::string s = fmt::format("{:.3g}", static_cast<double>(v));
    if (s.find('e') != std::string::npos) s = fmt::format("{:.0f}", static_cast<double>(v));
    return s;
}

} // namespace

std::string format_seconds(long double s) {
    if (s == 0) return "0";
    if (s < 1e-6L) return trim(s * 1e9L) + " ns";
    if (s < 1e-3L) return trim(s * 1e6L) + " us";
    if (s < 1) return trim(s * 1e3L) + " ms";
    if (s < 60) return trim(s) + " s";
    if (s < 3600) return trim(s / 60) + " m";
    if (s < 86400) return trim(s / 3600) + " h";
    return trim(s / 86400) + " d";
}

std::string format_jiffies_as_time(Jiffies jiffies, unsigned hz) {
    return format_seconds(static_cast<long double>(jiffies) / hz);
}

std::string format_ns(std::int64_t ns) {
    const double a = ns < 0 ? -static_cast<double>(ns) : static_cast<double>(ns);
    const double v = static_cast<double>(ns);
    if (a < 1e3) return fmt::format("{} ns", ns);
    if (a < 1e6) return fmt::format("{:.1f} us", v / 1e3);
    if (a < 1e9) return fmt::format("{:.2f} ms", v / 1e6);
    return fmt::format("{:.3f} s", v / 1e9);
}

std::string jiffies_word(Jiffies jiffies) {
    return jiffies == 1 ? std::string("1 jiffy") : fmt::format("{} jiffies", jiffies);
}

} // namespace timersim
