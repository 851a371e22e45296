#include "sim/report/json.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace timersim {

std::string json_string(std::string_view s) {
    return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

} // namespace timersim
