// Small parsing helpers shared by the trace readers: whitespace tokens and
// whole-token integers via std::from_chars. Internal.
#pragma once

#include <bit>
#include <charconv>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string_view>

namespace timersim::detail {

constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// ASCII letters and digits, and hex digit values (-1: not one): what
// std::isalnum and std::isxdigit answer in the "C" locale, without a call
// into the C library's locale tables for every character. From a table:
// trace text mixes the classes at random (a hashed pointer is 40 % letters),
// so range tests would mispredict on every other character.
struct CharClasses {
    bool alnum[256] = {};
    signed char hex[256] = {};
    constexpr CharClasses() {
        for (int c = 0; c < 256; ++c) {
            const bool digit = c >= '0' && c <= '9';
            const bool lower = c >= 'a' && c <= 'z';
            const bool upper = c >= 'A' && c <= 'Z';
            alnum[c] = digit || lower || upper;
            hex[c] = static_cast<signed char>(digit                     ? c - '0'
                                              : lower && c <= 'f'       ? c - 'a' + 10
                                              : upper && c <= 'F'       ? c - 'A' + 10
                                                                        : -1);
        }
    }
};
inline constexpr CharClasses kCharClasses{};

constexpr bool is_alnum(char c) noexcept { return kCharClasses.alnum[static_cast<unsigned char>(c)]; }
constexpr int hex_digit(char c) noexcept { return kCharClasses.hex[static_cast<unsigned char>(c)]; }

// Printable ASCII other than space.
constexpr bool is_graph(char c) noexcept { return c > ' ' && c < 0x7f; }

// Blank scanning eight bytes at a time. Kernel trace lines are mostly runs
// of blanks (the right-aligned task column) and long tokens (hashed
// pointers, function names); a byte at a time, finding where they end was
// a fifth of `timersim validate`'s instructions.
//
// blank_bytes(x): the high bit of every byte of x (eight chars, loaded
// little-endian) that is ' ' or '\t', exactly: t & 0x7f plus 0x7f never
// carries into the next byte, so each byte's answer is its own.
inline std::uint64_t blank_bytes(std::uint64_t x) noexcept {
    constexpr std::uint64_t k7f = 0x7F7F7F7F7F7F7F7Full;
    constexpr std::uint64_t k80 = 0x8080808080808080ull;
    const auto nonzero = [](std::uint64_t t) { return (((t & k7f) + k7f) | t) & k80; };
    return ~(nonzero(x ^ 0x2020202020202020ull) & nonzero(x ^ 0x0909090909090909ull)) & k80;
}

inline std::uint64_t load8(const char* p) noexcept {
    std::uint64_t x;
    std::memcpy(&x, p, sizeof x);
    if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
    return x;
}

// The first byte in [p, end) that is not blank (end if none).
inline const char* skip_blanks(const char* p, const char* end) noexcept {
    if (p < end && !is_blank(*p)) return p; // the usual single separator is already passed
    for (; end - p >= 8; p += 8)
        if (const std::uint64_t m = ~blank_bytes(load8(p)) & 0x8080808080808080ull)
            return p + std::countr_zero(m) / 8;
    while (p < end && is_blank(*p)) ++p;
    return p;
}

// The first blank byte in [p, end) (end if none).
inline const char* find_blank(const char* p, const char* end) noexcept {
    for (; end - p >= 8; p += 8)
        if (const std::uint64_t m = blank_bytes(load8(p))) return p + std::countr_zero(m) / 8;
    while (p < end && !is_blank(*p)) ++p;
    return p;
}

// Decimal digits eight at a time. nondigit_bytes(x): the high bit of every
// byte of x that is not '0'..'9', exactly (as blank_bytes). digits8(d): the
// number the 8 digit values in d's bytes spell, the first (lowest) byte the
// most significant: pairs, then quads, then the eight, one multiply each.
// A number of n < 8 digits is digits8 of its bytes shifted up by 8 - n
// bytes, the zeros shifted in being leading zeros.
inline std::uint64_t nondigit_bytes(std::uint64_t x) noexcept {
    constexpr std::uint64_t k7f = 0x7F7F7F7F7F7F7F7Full;
    const std::uint64_t t = x ^ 0x3030303030303030ull; // digits become 0..9
    return (((t & k7f) + 0x7676767676767676ull) | t) & 0x8080808080808080ull;
}
inline std::uint64_t digits8(std::uint64_t d) noexcept {
    d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFull;
    d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFull;
    return (d * 10000 + (d >> 32)) & 0xFFFFFFFFull;
}

// Sixteen hex digits (a kernel pointer as %p prints it), eight at a time:
// false if any byte is not 0-9, a-f or A-F. For bytes below 0x80, b + (0x80
// - lo) has its high bit set iff b >= lo, and b + (0x7f - hi) iff b > hi,
// neither carrying into the next byte; a letter's value is its low nibble
// plus 9. The eight nibbles then pair up, first digit most significant.
inline bool hex8(const char* p, std::uint32_t& value) noexcept {
    constexpr std::uint64_t k01 = 0x0101010101010101ull;
    constexpr std::uint64_t k80 = 0x8080808080808080ull;
    std::uint64_t x;
    std::memcpy(&x, p, sizeof x);
    if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
    if (x & k80) return false;
    const auto in_range = [](std::uint64_t v, std::uint64_t lo, std::uint64_t hi) {
        return (v + k01 * (0x80 - lo)) & ~(v + k01 * (0x7f - hi)) & k80;
    };
    const std::uint64_t digits = in_range(x, '0', '9');
    const std::uint64_t letters = in_range(x | 0x2020202020202020ull, 'a', 'f');
    if ((digits | letters) != k80) return false;
    std::uint64_t v = (x & 0x0F0F0F0F0F0F0F0Full) + (letters >> 7) * 9;
    v = ((v << 4) | (v >> 8)) & 0x00FF00FF00FF00FFull;
    v = ((v << 8) | (v >> 16)) & 0x0000FFFF0000FFFFull;
    v = ((v << 16) | (v >> 32)) & 0x00000000FFFFFFFFull;
    value = static_cast<std::uint32_t>(v);
    return true;
}
inline bool parse_hex16(std::string_view s, std::uint64_t& value) noexcept {
    std::uint32_t high = 0, low = 0;
    if (s.size() != 16 || !hex8(s.data(), high) || !hex8(s.data() + 8, low)) return false;
    value = std::uint64_t{high} << 32 | low;
    return true;
}

// The end of the last byte in [begin, end) that is not blank (begin if none).
inline const char* skip_blanks_back(const char* begin, const char* end) noexcept {
    while (end > begin && is_blank(end[-1])) --end;
    return end;
}

inline std::string_view trim(std::string_view s) noexcept {
    const char* const end = s.data() + s.size();
    const char* const first = skip_blanks(s.data(), end);
    const char* const last = skip_blanks_back(first, end);
    return std::string_view(first, static_cast<std::size_t>(last - first));
}

// Splits off the next blank-separated token; false when none is left.
inline bool next_token(std::string_view& rest, std::string_view& token) noexcept {
    const char* const end = rest.data() + rest.size();
    const char* const first = skip_blanks(rest.data(), end);
    if (first == end) {
        rest = {};
        return false;
    }
    const char* const last = find_blank(first, end);
    token = std::string_view(first, static_cast<std::size_t>(last - first));
    rest = std::string_view(last, static_cast<std::size_t>(end - last));
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
