#include "sim/cli/timeout_arg.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace timersim {

Jiffies parse_timeout_jiffies(std::string_view text, unsigned hz) {
    const auto bad = [&](const char* why) {
        return std::invalid_argument("timeout '" + std::string(text) + "': " + why);
    };
    std::size_t digits = 0;
    while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
        ++digits;
    if (digits == 0) throw bad("expected a number, optionally followed by ns, us, ms, s, m, h or d");
    const std::string_view number = text.substr(0, digits);
    const std::string_view unit = text.substr(digits);
    if (unit.empty()) {
        Jiffies j = 0;
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), j);
        if (ec != std::errc{} || end != number.data() + number.size())
            throw bad("a timeout without a unit is a whole number of jiffies (below 2^64)");
        return j;
    }
    static constexpr std::array<std::pair<std::string_view, long double>, 7> units{{
        {"ns", 1e-9L}, {"us", 1e-6L}, {"ms", 1e-3L}, {"s", 1.0L}, {"m", 60.0L}, {"h", 3600.0L}, {"d", 86400.0L},
    }};
    long double seconds_per_unit = 0;
    for (const auto& [name, seconds] : units)
        if (unit == name) seconds_per_unit = seconds;
    if (seconds_per_unit == 0) throw bad("unknown unit (use ns, us, ms, s, m, h or d)");
    long double value = 0;
    try {
        std::size_t used = 0;
        value = std::stold(std::string(number), &used);
        if (used != number.size()) throw bad("malformed number");
    } catch (const std::logic_error&) {
        throw bad("malformed number");
    }
    // Round up like msecs_to_jiffies(); a hair of tolerance keeps 1ms at
    // HZ=1000 from becoming 2 jiffies through binary rounding.
    const long double jiffies = std::ceil(value * seconds_per_unit * hz - 1e-9L);
    if (!(jiffies < 1.8e19L)) throw bad("too large for 64-bit jiffies");
    return jiffies < 0 ? 0 : static_cast<Jiffies>(jiffies);
}

} // namespace timersim
