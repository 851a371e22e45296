// The one JSON writer of every report. A report builds its document as an
// nlohmann::ordered_json value (members in the order they are set, which is
// the published field order), and write_json() turns it into text in the
// project's layout, which is not nlohmann's dump():
//
//   {
//     "schema": "timersim.run.v1",
//     "machine": {"hz": 250, "cpus": 2, "nohz_idle": true},
//     "cpus": [
//       {
//         "cpu": 0,
//         "error_jiffies": {"count": 852, "mean": 0.002347, "histogram": [[0, 850], [1, 2]]}
//       }
//     ]
//   }
//
// Containers are written on one line with ", " and ": " between items,
// except those the JsonLayout names as expanded: one item per line,
// indented two spaces per expanded container around it (an expanded array
// inside a one-line object is indented from the line the object is on).
// An empty container is always "{}" or "[]". A compact layout (the step
// frames' JSON Lines, the playground) writes "," and ":" with no spaces.
//
// Every value goes through one rule: integers as integers, floating-point
// numbers in shortest round-trip form (fmt "{}": 0.01, 1.5, 20 for 20.0;
// not dump()'s "20.0"), NaN and infinities, which JSON cannot spell, as
// null, and strings and member names through json_string(), the one
// escaping function (nlohmann's: control characters, quotes and
// backslashes escaped as RFC 8259 says, invalid UTF-8 replaced by U+FFFD
// rather than written out raw). A few published numbers have a fixed count
// of decimals ("mean": 0.002347, "agreement": 1.000000): the layout names
// them by path, so the document keeps the exact value and only the text is
// rounded.
//
// What another module hands a report (a workload's parameters,
// WorkloadSpec::params; a trace filter's, filter_json()) is an
// ordered_json value too, inserted as a member and written by the same
// rules: no JSON text is rendered anywhere else.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

using ordered_json = nlohmann::ordered_json;

// Paths are JSON Pointers ("" the document, "/designs" a member of it,
// "/designs/0" an element), "*" standing for any one member name or index:
// "/designs/*" is every element of "designs". Names are compared as they
// are (no "~1" for '/': no layout names a member with one).
struct JsonLayout {
    // Containers written one item per line; every other one on one line.
    std::vector<std::string> expanded;
    // Numbers written with this many decimals rather than in shortest form.
    std::vector<std::pair<std::string, int>> fixed_decimals;
    // "," and ":" with no spaces, never a line break (JSON Lines).
    bool compact = false;
};

// `doc` as JSON text in `layout`, with no line break at the end.
std::string write_json(const ordered_json& doc, const JsonLayout& layout);

// s as a JSON string literal, quotes included.
std::string json_string(std::string_view s);
// A double as write_json() writes it (shortest round-trip digits; NaN and
// infinities as null), for the CSV reports, which give numbers alike.
std::string json_number(double v);
// A statistic, or null when it is not known (of no samples: not 0).
template <class T>
ordered_json json_or_null(bool known, const T& v) {
    return known ? ordered_json(v) : ordered_json(nullptr);
}

} // namespace timersim
