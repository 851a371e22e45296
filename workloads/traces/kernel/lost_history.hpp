// Lost history as validate's model of the kernel's wheels classes it, for
// the replays of `run` and `compare` to leave out the same kernel fires.
//
// A CPU's history is lost where the trace says it lost events (a ring
// buffer's "[LOST N EVENTS]" line) or where a sequence the kernel cannot
// print proves it (a timer_start of a timer pending in the model without its
// timer_cancel: 6.1 __mod_timer() -> detach_if_pending() always traces the
// detach; an expiry of a timer the model never had pending). Which of those
// sequences a trace shows depends on the model's state, so only validate's
// replay (sim/validate, a layer beside the replays') can class them. The
// load of a kernel trace asks it through a hook the command line hands it,
// where the trace gives cause (KernelFireCollector::history_in_doubt(),
// which reads validate's rules for what leaves a timer pending off the
// trace alone): a trace that gives none has no lost history in validate
// either.
//
//   TraceLoadOptions load;
//   load.lost_history = [](const LostHistoryRequest& r) { ... validate's replay ... };
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace timersim {

struct LostHistoryClasses {
    // A timer_expire_entry validate classed lost history: its timer= and
    // now=, and the CPU that printed it.
    struct Expiry {
        std::uint64_t timer = 0;
        Jiffies now = 0;
        std::uint32_t cpu = 0;
        friend auto operator<=>(const Expiry&, const Expiry&) = default;
    };
    // A CPU's history lost, in jiffies: from (the latest the trace had
    // shown when it was lost; none: before any) to the now= of the expiry
    // that pinned its wheel again (none: to the end). For a 6.9+ remote
    // expiry, the CPU is the idle one whose base it ran.
    struct Window {
        std::uint32_t cpu = 0;
        std::optional<Jiffies> from;
        std::optional<Jiffies> to;
    };
    std::vector<Expiry> expiries; // in the order classed
    std::vector<Window> windows;  // in the order they opened; a CPU's in jiffies order, disjoint
    std::uint64_t lines = 0;      // lines saying a CPU lost events
    std::uint64_t sequences = 0;  // sequences the kernel cannot print
    std::uint64_t resets = 0;     // the classic wheel re-placed, more than 2^20 jiffies behind the trace
};

// What validate's replay needs to class a trace's lost history as its own
// command would: the text again, each call a pass from its start, and what
// the load decided of it.
struct LostHistoryRequest {
    std::function<std::unique_ptr<InputFile>()> pass;
    unsigned hz = 0;
    bool forced_hz = false;
    KernelVersionResolution kernel;
    TraceFilter filter;
};
using LostHistoryClassifier = std::function<LostHistoryClasses(const LostHistoryRequest&)>;

} // namespace timersim
