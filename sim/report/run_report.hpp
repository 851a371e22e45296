// The report of one run (`timersim run`): text for people, JSON
// (timersim.run.v1, docs/output.md) for scripts.
#pragma once

#include "sim/machine/engine_run.hpp"
#include "sim/report/json.hpp"

#include <cstddef>
#include <string>

namespace timersim {

// The table of timer groups (RunResult::groups) shows the `group_rows`
// groups that fired most (0: all, for --by).
std::string format_run_text(const RunResult& result, std::size_t group_rows = 10);
// The JSON report: the document, and its text as write_json() lays it out.
ordered_json run_document(const RunResult& result);
std::string format_run_json(const RunResult& result);
// The group table as CSV (sim/report/group_report.hpp; docs/output.md).
std::string format_run_csv(const RunResult& result);

} // namespace timersim
