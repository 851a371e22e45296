// libFuzzer target: a fuzzed timersim trace (format v1) replayed, not only
// parsed (built by scripts/fuzz, not by meson): through `timersim step`'s
// feed on both kernel wheels, tick by tick, and through the simulated machine on
// every design (sim/machine/design.hpp, so a design added later is fuzzed
// too). Besides crashes, leaks, UB and hangs it checks that
//   * every error is a TraceError whose what() is one line "fuzz:LINE: ... (field)";
//   * the exact heap never fires a timer early, on any number of CPUs;
//   * each run's metrics add up: a precision error for every fired timer,
//     no more fires and cancels than arms, per-CPU figures summing to the total.
#include "fuzz/fuzz_checks.hpp"
#include "sim/machine/design.hpp"
#include "sim/machine/engine_run.hpp"
#include "sim/machine/stepper.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/replay/trace_feed.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

using namespace timersim;
using timersim::fuzz::check;
using timersim::fuzz::check_error;

namespace {

// Bounds that keep one input well under libFuzzer's time limit.
constexpr std::uint64_t kMaxSteps = 3000;   // ticks of step's wheels
constexpr std::uint64_t kMaxTicks = 3000;   // ticks of the machine
constexpr unsigned kMaxCpus = 4;            // a trace naming more CPUs is not run

void step_both_wheels(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = fmemopen(const_cast<std::uint8_t*>(data), size, "r");
    if (f == nullptr) return;
    try {
        TraceFeed feed(f, "fuzz");
        const TraceHeader& h = feed.header();
        const StepWorkload none;
        Stepper<ClassicWheel> classic(ClassicWheel::Config{.hz = h.hz, .start_jiffies = h.start_jiffies}, none, &feed);
        Stepper<ModernWheel> modern(ModernWheel::Config{.hz = h.hz, .start_jiffies = h.start_jiffies}, none, &feed);
        for (std::uint64_t t = 0; t < kMaxSteps; ++t) {
            const TickReport a = classic.step(true);
            const TickReport b = modern.step(true);
            check(a.jiffies == b.jiffies);
            for (const Fired& x : a.fired) check(x.timer < feed.labels().size());
            for (const Fired& x : b.fired) check(x.timer < feed.labels().size());
        }
    } catch (const TraceError& e) {
        check_error(e);
    }
    std::fclose(f);
}

void check_metrics(const RunResult& r) {
    const CpuMetrics& m = r.total;
    check(m.error_jiffies.total() == m.fired);
    check(m.error_ns.count() == m.fired);
    check(m.fired + m.cancelled <= m.arms + m.pending + m.fired);
    std::uint64_t fired = 0, arms = 0;
    for (const CpuMetrics& c : r.per_cpu) {
        fired += c.fired;
        arms += c.arms;
    }
    check(fired == m.fired && arms == m.arms);
    if (r.design == Design::heap) check(m.early == 0);
}

void run_every_design(const std::uint8_t* data, std::size_t size) {
    // The replay reads through InputFile, which wants a name: an in-memory file.
    const int fd = ::memfd_create("fuzz", 0);
    if (fd < 0) return;
    if (::write(fd, data, size) != static_cast<ssize_t>(size)) {
        ::close(fd);
        return;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        const auto trace = load_trace(path, TraceKind::timersim, HzChoice{});
        const TraceSummary& s = trace->summary();
        if (s.cpus <= kMaxCpus) {
            MachineConfig m;
            m.hz = s.header.hz;
            m.start_jiffies = s.header.start_jiffies;
            m.cpus = s.cpus;
            m.ticks = std::clamp<std::uint64_t>(ticks_at(s.header.hz, s.last_event_ns) + 64, 1, kMaxTicks);
            m.max_expiries_per_softirq = static_cast<std::uint32_t>(size % 4); // 0 (none) .. 3
            for (const Design d : all_designs()) {
                const WorkloadSpec spec{.name = "trace", .description = "", .factory = trace_replay(trace)};
                check_metrics(run_machine(d, m, spec));
            }
        }
    } catch (const TraceError& e) {
        check_error(e, path);
    } catch (const InputError&) {
        check(false); // an in-memory file is always readable
    }
    ::close(fd);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    step_both_wheels(data, size);
    run_every_design(data, size);
    return 0;
}
