#include "sim/cli/design_option.hpp"

#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"

#include <fmt/format.h>

namespace timersim::cli {

DesignChoice design_choice(const std::string& value, std::initializer_list<std::string_view> names, unsigned hz) {
    DesignChoice c;
    if (value == "wheel" || value.starts_with("wheel:")) {
        try {
            c.wheel = parse_wheel_spec(value);
            c.wheel->geometry(hz); // fail now, not inside the run
        } catch (const WheelSpecError& e) {
            throw UsageError(fmt::format("--design: {}: {}", value, e.what()));
        }
        c.design = Design::wheel;
        c.name = to_string(*c.wheel);
        return c;
    }
    if (names.size() == 0) { // every design of the registry
        c.design = parse_design(value);
        c.name = to_string(c.design);
        return c;
    }
    for (std::string_view n : names)
        if (value == n) {
            c.design = *design_from_string(value);
            c.name = value;
            return c;
        }
    throw UsageError(fmt::format("--design: expected {} or wheel:SPEC, got '{}'", fmt::join(names, ", "), value));
}

std::string wheel_spec_help() {
    std::string out =
        "The configurable wheel: --design wheel:PRESET[:KEY=VALUE...] or wheel:KEY=VALUE[:...].\n"
        "  bits=8/6/6/6/6 | bits=6x9   log2 buckets per level (one per level, or BITSxLEVELS)\n"
        "  shift=3 | shift=3/3/2       in-place: clock shift between levels (one, or one per pair)\n"
        "  base=G                      in-place: level 0 granularity 2^G jiffies (round=up)\n"
        "  depth=N | depth=hz          levels (hz: 6.1 LVL_DEPTH, one fewer at HZ <= 100)\n"
        "  mode=cascade | in-place     cascade down level by level (<= 4.7) or expire in place (4.8+)\n"
        "  round=up | down             bucket time after the expiry (never early) or before it\n"
        "                              (cascading stays exact; in place it fires EARLY);\n"
        "                              default: up in place, down cascading\n"
        "Presets:\n";
    for (const WheelPreset& p : wheel_presets()) out += fmt::format("  {:<14}{}\n  {:<14}({})\n", p.name, p.spec, "", p.source);
    return out;
}

} // namespace timersim::cli
