// What `timersim validate` prints: the replay of a kernel trace
// (sim/validate/kernel_replay.hpp) as text, or as JSON
// (timersim.validate, docs/output.md and docs/validation.md).
#pragma once

#include "sim/report/json.hpp"
#include "sim/validate/kernel_replay.hpp"

#include <cstddef>
#include <string>

namespace timersim {

// "agreement: idx A/B, expiry C/D": the last line of the text report.
std::string agreement_line(const ReplayResult& r);
std::string format_validate_text(const ReplayResult& r, std::size_t max_listed);
// The JSON report: the document, and its text as write_json() lays it out.
// At most `max_listed` disagreements and lost-history checks are listed.
ordered_json validate_document(const ReplayResult& r, std::size_t max_listed, double min_percent, bool passed);
std::string format_validate_json(const ReplayResult& r, std::size_t max_listed, double min_percent, bool passed);

} // namespace timersim
