// Several workloads on one machine (`--workload a,b,...`). Each part runs
// against its own view of the machine (a Sim that forwards everything), so
// parts need not know about each other:
//   actions  the part's index goes into the top 8 bits of its call tags
//            (generators use the low 40, see generator_support.hpp), and
//            on_action hands the tag back without it;
//   fires    each part's timers are recorded as id ranges when it creates
//            them, and on_fire goes to the part that owns the timer.
#pragma once

#include "workloads/workload.hpp"

#include <vector>

namespace timersim {

inline constexpr std::size_t kMaxWorkloadParts = 255;

// Builds the parts in order (their timers are created in that order).
WorkloadFactory composite_workload(std::vector<WorkloadFactory> parts);

} // namespace timersim
