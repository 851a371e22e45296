// The one JSON writer of every report: values are written as text in the
// report's own layout (fmt), and every string goes through json_string(),
// the one escaping function (nlohmann-json's, so control characters,
// quotes and backslashes are escaped as RFC 8259 says and invalid UTF-8 is
// replaced by U+FFFD rather than written out raw).
//
// Why not build documents with nlohmann::json: the reports' layouts (arrays
// of numbers on one line, fixed field order, fixed decimals such as
// "mean": 1.500000) are part of their published schemas (docs/output.md)
// and of golden outputs; nlohmann's dump() has one layout of its own.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace timersim {

// s as a JSON string literal, quotes included.
std::string json_string(std::string_view s);
// A finite double as JSON (shortest round-trip digits); NaN and infinities,
// which JSON cannot spell, as null.
std::string json_number(double v);
// A statistic as JSON, or null when it is not known (of no samples: not 0).
template <class T>
std::string json_or_null(bool known, const T& v) {
    return known ? fmt::format("{}", v) : std::string("null");
}

} // namespace timersim
