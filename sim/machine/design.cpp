#include "sim/machine/design.hpp"

#include <string>

namespace timersim {

namespace {

// One row per design, in enum order.
const std::vector<DesignInfo>& table() {
    static const std::vector<DesignInfo> rows = {
        {Design::classic, "classic", {}, "cascading wheel, Linux <= 4.7", false, false},
        {Design::modern, "modern", {}, "expire-in-place wheel, Linux 4.8+ (6.1)", false, false},
        {Design::heap, "heap", {"scheme3"}, "exact binary heap (Varghese-Lauck scheme 3)", false, false},
        {Design::scheme1, "scheme1", {"unsorted-list"}, "Varghese-Lauck 1: unsorted list, per-tick decrement", true, false},
        {Design::scheme2, "scheme2", {"ordered-list"}, "Varghese-Lauck 2: ordered list", true, false},
        {Design::scheme4, "scheme4", {"simple-wheel"}, "Varghese-Lauck 4: simple wheel + overflow list", true, false},
        {Design::scheme5, "scheme5", {"hashed-sorted"}, "Varghese-Lauck 5: hashed wheel, sorted slots", true, false},
        {Design::scheme6, "scheme6", {"hashed-unsorted"}, "Varghese-Lauck 6: hashed wheel, unsorted slots, rounds", true, false},
        {Design::netty, "netty", {"hashed-wheel-timer"}, "Netty HashedWheelTimer: 512-tick ring, rounds, deferred cancel", true, true},
        {Design::cog, "cog", {}, "cog: base-64 cascading rings, block buckets, tombstone cancel", true, true},
        {Design::wheel, "wheel", {}, "configurable hierarchical wheel: --design wheel:SPEC", false, false},
    };
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

std::string design_names() {
    std::string out;
    for (const Design d : every_design()) {
        if (!out.empty()) out += ", ";
        out += to_string(d);
    }
    return out + ", wheel:SPEC";
}

} // namespace timersim
