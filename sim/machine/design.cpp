#include "sim/machine/design.hpp"

#include <string>

namespace timersim {

namespace {

// One row per design, in enum order: the registry's rows, then the
// configurable wheel.
const std::vector<DesignInfo>& table() {
#define TIMERSIM_DESIGN_INFO(id, name, Queue, alias, summary, paper_costs, holds_garbage)                          \
    {Design::id, name, std::string_view(alias).empty() ? std::vector<std::string_view>{}                            \
                                                       : std::vector<std::string_view>{alias},                      \
     summary, paper_costs, holds_garbage},
    static const std::vector<DesignInfo> rows = {
        TIMERSIM_DESIGNS(TIMERSIM_DESIGN_INFO)
        {Design::wheel, "wheel", {}, "configurable hierarchical wheel: --design wheel:SPEC", false, false},
    };
#undef TIMERSIM_DESIGN_INFO
    return rows;
}

} // namespace

std::span<const DesignInfo> design_table() { return table(); }

const DesignInfo& design_info(Design d) { return table().at(static_cast<std::size_t>(d)); }

std::string_view to_string(Design d) {
    const auto i = static_cast<std::size_t>(d);
    return i < table().size() ? table()[i].name : "?";
}

std::optional<Design> design_from_string(std::string_view name) {
    for (const DesignInfo& info : table()) {
        if (info.name == name) return info.design;
        for (std::string_view alias : info.aliases)
            if (alias == name) return info.design;
    }
    return std::nullopt;
}

std::vector<Design> all_designs() { return {Design::classic, Design::modern, Design::heap}; }

std::vector<Design> every_design() {
    std::vector<Design> all;
    for (const DesignInfo& info : table())
        if (info.design != Design::wheel) all.push_back(info.design); // it needs a geometry
    return all;
}

std::string registry_design_names() {
    std::string out;
    for (const Design d : every_design()) {
        if (!out.empty()) out += ", ";
        out += to_string(d);
    }
    return out;
}

std::string design_names() { return registry_design_names() + ", wheel:SPEC"; }

} // namespace timersim
