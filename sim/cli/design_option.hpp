// --design with the configurable wheel: a plain design name, or
// "wheel:SPEC" (wheel/configurable/wheel_spec.hpp), validated here so every command
// reports a bad spec as one usage line naming --design.
#pragma once

#include "sim/machine/design.hpp"
#include "wheel/configurable/wheel_spec.hpp"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace timersim::cli {

struct DesignChoice {
    Design design = Design::modern;
    std::optional<WheelSpec> wheel; // Design::wheel only
    std::string name;               // as reports print it: "classic", "wheel:rfc-2015", ...
};

// `value` is one of `names` (plain designs; none given: any design of the
// registry) or wheel[:SPEC]; throws
// UsageError("--design: ...") otherwise. The spec is checked at `hz`.
DesignChoice design_choice(const std::string& value, std::initializer_list<std::string_view> names, unsigned hz);

// The spec grammar and the presets, for --help texts.
std::string wheel_spec_help();

} // namespace timersim::cli
