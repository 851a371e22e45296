// The timer queues a run can use: the classic cascading wheel (Linux <= 4.7),
// the modern expire-in-place wheel (4.8-6.8, as in 6.1) and its 6.9+ bases
// (modern-6.9), the exact heap, the
// seeds' designs (Varghese & Lauck's schemes 1, 2, 4, 5 and 6: scheme 3 is
// the heap, scheme 7 the classic wheel; Netty's HashedWheelTimer; cog), and
// the configurable wheel (wheel:SPEC). The list itself is the registry in
// design_list.hpp; this is what the rest of the program asks of it.
#pragma once

#include "sim/machine/design_list.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace timersim {

enum class Design : std::uint8_t { classic, modern, modern_6_9, heap, scheme1, scheme2, scheme4, scheme5, scheme6, netty, cog,
                                   // the configurable hierarchical wheel (wheel/configurable/wheel_spec.hpp); its
                                   // geometry travels in MachineConfig::wheel. Not in every_design().
                                   wheel };

struct DesignInfo {
    Design design;
    std::string_view name;                 // what every output prints
    std::vector<std::string_view> aliases; // also accepted on the command line
    std::string_view summary;              // one line for --help and listings
    bool paper_costs;                      // counts Varghese & Lauck's START/STOP/PER_TICK/EXPIRY
    bool holds_garbage;                    // keeps cancelled entries (netty, cog)
};

std::span<const DesignInfo> design_table(); // every design, in enum order
const DesignInfo& design_info(Design d);
std::string_view to_string(Design d);
// A name or an alias.
std::optional<Design> design_from_string(std::string_view name);
// The designs the default comparison runs (`timersim compare` without
// --designs): classic, modern, heap. Kept to these three so the default
// output, and the tutorial's golden files, stay as they were.
std::vector<Design> all_designs();
// Every design in the registry, for listings, sweeps and the playground.
std::vector<Design> every_design();
// "classic, modern, heap, scheme1, ..., cog, wheel:SPEC" for messages and --help.
std::string design_names();
// The same without wheel:SPEC: every_design()'s names.
std::string registry_design_names();

} // namespace timersim
