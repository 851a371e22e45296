// The report of one run (`timersim run`): text for people, JSON
// (timersim.run.v1, docs/output.md) for scripts.
#pragma once

#include "sim/machine/engine_run.hpp"

#include <string>

namespace timersim {

std::string format_run_text(const RunResult& result);
std::string format_run_json(const RunResult& result);

} // namespace timersim
