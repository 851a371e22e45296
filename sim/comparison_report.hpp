// Rendering a ComparisonResult: side-by-side text for the terminal, JSON and
// CSV for tools. Pure functions of the result, so output is deterministic.
#pragma once

#include "sim/queue_comparison.hpp"

#include <string>

namespace timersim {

std::string format_comparison_text(const ComparisonResult& result);
std::string format_comparison_json(const ComparisonResult& result);
// One row per design and metric: design,metric,value
std::string format_comparison_csv(const ComparisonResult& result);

} // namespace timersim
