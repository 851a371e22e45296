// Small parsing helpers shared by the trace readers: whitespace tokens and
// whole-token integers via std::from_chars. Internal.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>

namespace timersim::detail {

constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// ASCII letters and digits, and hex digit values (-1: not one): what
// std::isalnum and std::isxdigit answer in the "C" locale, without a call
// into the C library's locale tables for every character.
constexpr bool is_alnum(char c) noexcept {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
constexpr int hex_digit(char c) noexcept {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Printable ASCII other than space.
constexpr bool is_graph(char c) noexcept { return c > ' ' && c < 0x7f; }

constexpr std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

// Splits off the next blank-separated token; false when none is left.
inline bool next_token(std::string_view& rest, std::string_view& token) noexcept {
    std::size_t i = 0;
    while (i < rest.size() && is_blank(rest[i])) ++i;
    if (i == rest.size()) {
        rest = {};
        return false;
    }
    std::size_t j = i;
    while (j < rest.size() && !is_blank(rest[j])) ++j;
    token = rest.substr(i, j - i);
    rest.remove_prefix(j);
    return true;
}

// The whole of `s` as an unsigned integer in `base` (no sign, no spaces).
// Decimal numbers of up to 19 digits (every one fits in 64 bits) are
// summed digit by digit, with no overflow check at every digit as
// std::from_chars makes (perf: 7 % of a replay). Anything else, and a string with a
// non-digit (from_chars stores the number before it), goes to from_chars,
// so results and `value` after a failure are as before.
template <class T>
bool parse_uint(std::string_view s, T& value, int base = 10) noexcept {
    if (s.empty()) return false;
    if (base == 10 && s.size() <= 19) {
        std::uint64_t v = 0;
        std::size_t i = 0;
        for (; i < s.size(); ++i) {
            const auto d = static_cast<unsigned>(static_cast<unsigned char>(s[i]) - '0');
            if (d > 9) break;
            v = v * 10 + d;
        }
        if (i == s.size()) {
            constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
            if constexpr (kMax < std::numeric_limits<std::uint64_t>::max())
                if (v > kMax) return false; // out of range: value untouched
            value = static_cast<T>(v);
            return true;
        }
    }
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
    return ec == std::errc{} && end == s.data() + s.size();
}

// The whole of `s` as a signed integer (optional leading '-').
inline bool parse_int(std::string_view s, std::int64_t& value) noexcept {
    if (s.empty()) return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    return ec == std::errc{} && end == s.data() + s.size();
}

inline bool all_digits(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (const char c : s)
        if (!is_digit(c)) return false;
    return true;
}

// Splits "key=value" at the first '='; false if there is none.
inline bool split_key_value(std::string_view token, std::string_view& key, std::string_view& value) noexcept {
    const auto eq = token.find('=');
    if (eq == std::string_view::npos) return false;
    key = token.substr(0, eq);
    value = token.substr(eq + 1);
    return true;
}

} // namespace timersim::detail
