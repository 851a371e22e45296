// Rendering a Comparison: side-by-side text for the terminal, JSON and CSV
// for tools (both documented field by field in docs/output.md). Pure
// functions of the result, so the output is deterministic.
#pragma once

#include "sim/machine/comparison.hpp"
#include "sim/report/json.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace timersim {

// The JSON's "schema" value; bump it when a field changes meaning or goes.
inline constexpr std::string_view kCompareJsonSchema = "timersim.compare.v2";

// Each design's table of timer groups (Comparison's RunResult::groups)
// shows its `group_rows` groups that fired most (0: all, for --by).
std::string format_comparison_text(const Comparison& comparison, std::size_t group_rows = 10);
// The JSON report: the document ({} with no runs), and its text as
// write_json() lays it out.
ordered_json comparison_document(const Comparison& comparison);
std::string format_comparison_json(const Comparison& comparison);
// One row per design and metric: design,metric,value (units in the names).
std::string format_comparison_csv(const Comparison& comparison);
// The trade-off in numbers, one paragraph (no line breaks); the text report
// ends with it wrapped, the JSON carries it as "verdict".
std::string comparison_verdict(const Comparison& comparison);

} // namespace timersim
