// The timer queues a run can use: the classic cascading wheel (Linux <= 4.7),
// the modern expire-in-place wheel (4.8+, as in 6.1) and the exact heap.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace timersim {

// wheel: the configurable hierarchical wheel (wheel/wheel_spec.hpp); its
// geometry travels in MachineConfig::wheel. Not in all_designs().
enum class Design : std::uint8_t { classic, modern, heap, wheel };
std::string_view to_string(Design d);
std::optional<Design> design_from_string(std::string_view name);
std::vector<Design> all_designs(); // classic, modern, heap

} // namespace timersim
