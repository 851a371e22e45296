// HZ from a kernel trace's own numbers. Raw /sys/kernel/tracing/trace text
// never says CONFIG_HZ, and a trace replayed at the wrong HZ gives wrong
// errors, cascades and costs without a word, so timersim never assumes one.
// The trace tells it: every timer_start says jiffies = expires - timeout at
// its timestamp (6.1 trace_timer_start(): timeout = expires - jiffies), and
// every timer_expire_entry says now= (jiffies) at its timestamp. Jiffies
// advance HZ times a second, so against time they lie on a line of slope HZ,
// within a tick (events land between two ticks; a CPU's tick may run a
// little late).
//
// Real traces bend that line: the trace clock (sched_clock) and the tick
// drift apart by parts per million (tens of jiffies an hour), and early
// boot can step it (the committed TCG capture: 13 jiffies in its first 3 s).
// So the fit is local: the samples are cut into windows of 10 s, and in each
// window a kernel HZ is asked to hold its samples in a band two ticks wide
// around one line of slope HZ. The HZ fits when at least 80% of all samples
// are in their window's band (the capture: 93% for 250, at most 1.3% for
// 100, 300 and 1000). Over 50 ms or so no two kernel HZ values both fit
// (250 and 300 drift apart by 2.5 jiffies in 50 ms); a shorter trace may be
// ambiguous and is refused, never guessed.
//
//   std::vector<JiffiesSample> s = ...;      // from FtraceEvent::jiffies()
//   const HzInference r = infer_hz(s);
//   if (r.hz) use(*r.hz); else fail(r.explanation);
//
// A pass over a trace takes its samples in as they come (JiffiesSampler):
// one window of them for the fits, and the clock samples (at most two a
// jiffy); the same numbers as infer_hz() over all of them.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "workloads/traces/kernel/pre_trace_timers.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// The CONFIG_HZ values a Linux kernel can be built with (kernel/Kconfig.hz).
inline constexpr std::array<unsigned, 4> kKernelHz{100, 250, 300, 1000};

struct JiffiesSample {
    std::uint64_t time_ns = 0; // the event's timestamp
    Jiffies jiffies = 0;       // jiffies when it was traced
};

struct HzFit {
    unsigned hz = 0;
    // Share of the samples inside their window's two-tick band for this HZ.
    double share_in_band = 0;
    bool fits = false;
};

struct HzInference {
    std::optional<unsigned> hz;  // the one kernel HZ that fits, if exactly one does
    std::vector<HzFit> fits;     // every kernel HZ, in kKernelHz order
    std::size_t samples = 0;
    double span_s = 0;           // time between the first and the last sample
    // One line for people: what was found, or why no HZ can be chosen
    // ("no kernel HZ fits ...", "ambiguous: 250 and 300 both fit ...").
    std::string explanation;
};

// The band's width in ticks (one either side of the line), the window, and
// the share of samples an HZ must hold in its bands to fit.
inline constexpr double kHzBandTicks = 2.0;
inline constexpr std::uint64_t kHzWindowNs = 10'000'000'000;
inline constexpr double kHzMinShare = 0.8;

HzInference infer_hz(std::span<const JiffiesSample> samples);

// Does `hz` fit the samples (for checking a --hz or a "# hz=" line against
// what the trace shows)? Without samples anything fits.
bool hz_fits(std::span<const JiffiesSample> samples, unsigned hz);

// The samples the kernel's clock needs (kernel_clock.hpp): by time, each
// raised to the highest jiffies before it, and of each run of equal jiffies
// only the first and the last (KernelClock::jiffies_at() gives the same
// answer at every time without the ones between). At most two per jiffy.
std::vector<JiffiesSample> clock_samples(std::span<const JiffiesSample> samples);

// The samples of one pass over a trace, taken in time order (FtraceReader
// refuses lines out of it): what infer_hz(), hz_fits() and clock_samples()
// would say of all of them, in memory bounded by one window of samples and
// the clock samples. In this order, any step out of it a std::logic_error:
//
//   fit_also()...  add()...  finish()  then inference(), fits(), take_clock_samples() (once)
class JiffiesSampler {
public:
    JiffiesSampler();
    ~JiffiesSampler();
    JiffiesSampler(const JiffiesSampler&) = delete;
    JiffiesSampler& operator=(const JiffiesSampler&) = delete;
    // Fits `hz` too (besides kKernelHz), for fits(). Before the first add()
    // (the windows already closed would not count for it).
    void fit_also(unsigned hz);
    // Throws std::logic_error for a sample earlier than the one before.
    void add(const JiffiesSample& sample);
    // No more samples.
    void finish();
    HzInference inference() const;
    bool fits(unsigned hz) const; // kKernelHz or a fit_also() one, else std::logic_error
    std::vector<JiffiesSample> take_clock_samples();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The HZ to replay a kernel trace (ftrace or trace-cmd text) at, and where
// it came from. Every command that reads a kernel trace decides it here:
//   * --hz given: used, unless the trace shows another HZ (one kernel HZ
//     fits its jiffies and --hz does not): then refused, saying what the
//     trace shows, unless `force` (--force-hz) says to replay at --hz anyway;
//   * else a "# hz=N" line: used, checked against the jiffies the same way;
//   * else the trace's jiffies (infer_hz()), when exactly one kernel HZ fits.
// Otherwise it throws TraceError "FILE:LINE: ... (hz)" with the candidates
// and "pass --hz" (LINE: the first timer event, or 1).
struct HzChoice {
    std::optional<unsigned> option; // --hz
    bool force = false;             // --force-hz
};
struct HzResolution {
    unsigned hz = 0;
    std::string source;      // "--hz", "the trace's '# hz=' line", "the trace's jiffies", "--hz (forced)"
    bool forced = false;     // --force-hz: readers of the trace must not check its '# hz=' line against hz
    std::vector<JiffiesSample> clock_samples; // clock_samples() of every event that shows jiffies (kernel_clock.hpp)
    HzInference inference;   // what the jiffies say
    std::uint64_t timer_events = 0; // timer_* lines the pass read (a later pass may reserve for them)
    KernelVersionEvidence kernel_evidence; // what the same pass shows of the kernel (kernel_version.hpp)
    std::vector<PreTraceFire> pre_trace_fires; // timers armed before the trace (pre_trace_timers.hpp)
    // Timers without flags= that fired late: deferrable if the kernel is before 4.2 (deferrable_inference.hpp).
    std::vector<std::uint64_t> late_fired_timers;
};
// What the pass gathers besides HZ, the clock and the kernel's evidence:
// with `replay`, the timers a replay of the trace's timers needs
// (HzResolution::pre_trace_fires, late_fired_timers); `none` leaves them
// empty (validate: its replay reads the trace's own starts).
enum class HzPassExtras : bool { none, replay };
// Text read in passes (KernelText::pass()): each call of `pass` gives it
// from its start. This reads one pass.
using TextPasses = std::function<InputFile&()>;
// `watch`, if given, also observes the pass (validate's survey of the trace:
// sim/validate/kernel_replay.hpp).
HzResolution resolve_ftrace_hz(const TextPasses& pass, const std::string& file_name, const HzChoice& choice,
                               HzPassExtras extras = HzPassExtras::replay, FtraceObserver* watch = nullptr);
// Text in memory (the playground, tests).
HzResolution resolve_ftrace_hz(std::string_view text, const std::string& file_name, const HzChoice& choice,
                               HzPassExtras extras = HzPassExtras::replay, FtraceObserver* watch = nullptr);

} // namespace timersim
