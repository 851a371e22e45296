// libFuzzer target: the kernel-trace replay behind `timersim validate`
// (sim/validate/kernel_replay.hpp) on arbitrary bytes, read as ftrace text
// (built by scripts/fuzz, not by meson). Besides crashes, leaks, UB and
// hangs it checks that
//   * every error is a TraceError whose what() is one line "fuzz:LINE: ... (field)";
//   * every checked event is classed exactly once (agree, disagree, unknown
//     history, lost history, resynchronised), for both checks;
//   * the agreement is a share, and the listed disagreements and lost checks
//     stay within what was counted.
#include "fuzz/fuzz_checks.hpp"
#include "sim/validate/kernel_replay.hpp"
#include "workloads/traces/input/trace_error.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace timersim;
using timersim::fuzz::check;
using timersim::fuzz::check_error;

namespace {

void check_counts(const ReplayCheckCounts& c) {
    check(c.agree + c.disagree + c.unknown + c.lost + c.resynced_agree + c.resynced_disagree == c.events);
    check(c.boot_agree <= c.boot_events && c.boot_events <= c.events);
    const double a = c.agreement();
    check(a >= 0.0 && a <= 1.0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // Half the inputs bring their own "# hz=" line (or fail without one);
    // the other half get --hz 250, as the command line would give it.
    ReplayOptions options;
    if (size % 2 == 0) options.hz = 250;
    options.max_notes_per_class = 4;
    try {
        const ReplayResult r = replay_kernel_trace(text, "fuzz", options);
        // Before 4.8 (the classic wheel) timer_starts are counted, not checked.
        if (r.kernel_classic)
            check(r.idx.agree + r.idx.disagree + r.idx.unknown + r.idx.lost + r.idx.resynced_agree +
                      r.idx.resynced_disagree ==
                  0);
        else
            check_counts(r.idx);
        check_counts(r.expiry);
        std::uint64_t disagreements = 0;
        for (const ReplayCheckCounts* c : {&r.idx, &r.expiry}) disagreements += c->disagree + c->resynced_disagree;
        check(r.disagreements.size() == disagreements);
        check(r.lost.size() <= r.idx.lost + r.expiry.lost);
        check(r.notes.size() <= r.notes_by_class.size() * options.max_notes_per_class);
    } catch (const TraceError& e) {
        check_error(e);
    }
    return 0;
}
