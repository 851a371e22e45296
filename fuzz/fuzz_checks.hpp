// What every libFuzzer target of fuzz/ checks the same way: a failed
// property aborts (libFuzzer keeps the input), and a TraceError is one line
// "fuzz:LINE: what (field)", naming the file, the line and the field.
#pragma once

#include "workloads/traces/input/trace_error.hpp"

#include <cstdlib>
#include <string>

namespace timersim::fuzz {

inline void check(bool ok) {
    if (!ok) std::abort();
}

// `file`: the name the target gave its input.
inline void check_error(const TraceError& e, const std::string& file = "fuzz") {
    const std::string what = e.what();
    check(what.find('\n') == std::string::npos);
    check(what.rfind(file + ":", 0) == 0);
    check(what.size() > 3 && what.back() == ')');
    check(e.line() >= 1);
}

} // namespace timersim::fuzz
