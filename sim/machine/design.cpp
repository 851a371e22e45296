#include "sim/machine/design.hpp"

namespace timersim {

std::string_view to_string(Design d) {
    switch (d) {
    case Design::classic: return "classic";
    case Design::modern: return "modern";
    case Design::heap: return "heap";
    case Design::wheel: return "wheel";
    }
    return "?";
}

std::optional<Design> design_from_string(std::string_view name) {
    for (Design d : all_designs())
        if (to_string(d) == name) return d;
    return std::nullopt;
}

std::vector<Design> all_designs() { return {Design::classic, Design::modern, Design::heap}; }

} // namespace timersim
