// `timersim explain` and `timersim levels` for the seeds' designs: where a
// timer lands in scheme 4/5/6's slots, netty's ring or cog's rings (read
// from the queue itself: placement() and layout()), and each design's ring
// table. The list schemes (1 and 2) have no buckets: both commands say so
// and exit 2. Pure text, beside explain_report.hpp, for the CLI and the
// browser playground (web/).
#pragma once

#include "sim/machine/design.hpp"
#include "wheel/core/jiffies.hpp"

#include <optional>
#include <stdexcept>
#include <string>

namespace timersim {

// A design these views do not apply to (the list schemes: "explain does not
// apply to scheme1: ..."); the CLI reports it as a usage error.
struct SeedViewError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Throws SeedViewError for a list scheme.
std::string explain_seed_text(Design d, Jiffies now, Jiffies expires, unsigned hz, std::optional<Jiffies> clk);
std::string seed_levels_text(Design d, unsigned hz);

} // namespace timersim
