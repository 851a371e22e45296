// Which kernel recorded a trace. The timer design a replay models follows
// from it (the cascading wheel up to 4.7, the wheel that expires in place
// from 4.8, its three bases and the pull model of timer migration from
// 6.9), so it is never guessed: it is read from the trace as HZ is.
//
// What a trace can say, strongest first:
//   * a header line: "# kernel: RELEASE" (scripts/capture-kernel-trace), or
//     "# os release : RELEASE" (`perf script --header`): the version itself;
//   * its events' formats, each a bound (include/trace/events/timer.h;
//     lttng-modules' instrumentation/events/timer.h keys the same formats
//     on the same versions):
//
//   | what the trace shows                          | version     |
//   |-----------------------------------------------|-------------|
//   | timer_start prints cpu= idx=                  | >= 4.11     |
//   | timer_start prints flags=0x (no idx=)         | 4.2 - 4.10  |
//   | timer_expire_entry prints baseclk=            | >= 5.2      |
//   | timer_expire_entry without baseclk=           | <= 5.1      |
//   | timer_start prints bucket_expiry=             | >= 6.8      |
//   | timer_start with idx= and no bucket_expiry=   | <= 6.7      |
//   | a timer_base_idle event                       | >= 6.8      |
//   | a timer_migration:tmigr_* event               | >= 6.9      |
//   | an hrtimer_setup event                        | >= 6.15     |
//   | an hrtimer_init event                         | <= 6.14     |
//
// A header that the events contradict is refused, as a '# hz=' line the
// jiffies contradict is; --kernel overrides both.
//
//   KernelVersionEvidence evidence;          // fed by one pass (an FtraceObserver)
//   reader.set_observer(&evidence);  while (reader.next(e)) {}
//   evidence.finish(reader.stats());
//   KernelVersionResolution k = resolve_kernel_version(evidence, option, file);
//   if (const auto era = k.era()) ... else refuse, naming --kernel
#pragma once

#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace timersim {

// A kernel's major.minor: what decides its timer code.
struct KernelVersion {
    unsigned major = 0;
    unsigned minor = 0;
    auto operator<=>(const KernelVersion&) const = default;
};
std::string to_string(KernelVersion v);

// "6.12.118+deb13-cloud-amd64", "6.12", "3.6.11-1-ARCH" -> its major.minor;
// nullopt when the text does not start with one.
std::optional<KernelVersion> parse_kernel_release(std::string_view release) noexcept;

// The timer designs a kernel runs, by version.
enum class KernelTimerEra : std::uint8_t {
    cascading,  // <= 4.7: the classic wheel (tv1..tv5, cascades)
    in_place,   // 4.8 - 6.8: the wheel that expires in place, one STD and one DEF base
    pull_model, // >= 6.9: BASE_LOCAL, BASE_GLOBAL, BASE_DEF and timer migration
};

// Versions from `at_least` up to, not including, `below` (none: no bound).
struct KernelVersionRange {
    KernelVersion at_least{0, 0};
    std::optional<KernelVersion> below;
    // One major.minor.
    bool exact() const noexcept;
    // "6.12", "6.8 or later", "5.2 to 6.7", "before 4.8", "unknown".
    std::string describe() const;
    // The era every version in the range runs, if they all run one.
    std::optional<KernelTimerEra> era() const noexcept;
    // Every version in the range is before 4.2, whose "timer: Remove FIFO
    // guarantee" made a wheel slot an hlist run newest first: before it, a
    // slot's timers run oldest first (ClassicWheel::SlotOrder).
    bool classic_slots_oldest_first() const noexcept {
        constexpr KernelVersion hlist_slots{4, 2};
        return below && *below <= hlist_slots;
    }
    // Every version in the range is before 4.2, whose timer_start tracepoint
    // first printed the timer's flags (the table above): whether a timer is
    // deferrable does not show.
    bool timer_flags_unprinted() const noexcept {
        constexpr KernelVersion flags_printed{4, 2};
        return below && *below <= flags_printed;
    }
};

// What one pass over kernel text shows of its kernel (the table above).
class KernelVersionEvidence final : public FtraceObserver {
public:
    void timer_event(const FtraceEvent& e) override;
    void timer_softirq(const FtraceTimerSoftirq&) override {}
    void other_line(std::uint64_t line, std::string_view text) override;
    // The other events' names, after the pass.
    void finish(const FtraceReaderStats& stats);

    // The header's release and its line, if any.
    const std::optional<std::string>& header_release() const noexcept { return header_release_; }
    std::uint64_t header_line() const noexcept { return header_line_; }
    const std::string& header_key() const noexcept { return header_key_; } // "# kernel:"
    // What the events bound the version to, and the event that set each
    // bound ("timer_start lines with bucket_expiry=", and the first such line).
    struct Bound {
        KernelVersion version;
        std::string why;
        std::uint64_t line = 0;
    };
    const std::optional<Bound>& lower() const noexcept { return lower_; }
    const std::optional<Bound>& upper() const noexcept { return upper_; } // the first version it is not
    KernelVersionRange range() const; // from the events alone

private:
    void at_least(KernelVersion v, std::string_view why, std::uint64_t line);
    void below(KernelVersion v, std::string_view why, std::uint64_t line);

    std::optional<std::string> header_release_;
    std::string header_key_;
    std::uint64_t header_line_ = 0;
    std::optional<Bound> lower_, upper_;
};

// The version a replay models, and where it came from.
struct KernelVersionResolution {
    KernelVersionRange range;
    // "--kernel", "the trace's '# kernel:' line", "its events (...)"; empty
    // when nothing tells.
    std::string source;
    // The line that told: the header's, or the first event that bounded
    // the range (0: none, or only other events' names).
    std::uint64_t line = 0;
    std::optional<KernelTimerEra> era() const noexcept { return range.era(); }
    // "kernel 6.12 from the trace's '# kernel:' line", "kernel unknown".
    std::string describe() const;
    // The era, where `purpose` needs one: a range that spans two eras throws
    // TraceError "FILE:LINE: ... (kernel)" naming --kernel (LINE: `line`,
    // else 1).
    KernelTimerEra era_for(std::string_view purpose, const std::string& file_name) const;
};

// --kernel (`option`, a release as parse_kernel_release() reads it) if
// given, else the header's release, else the events' range. A header
// release outside the events' range throws TraceError "FILE:LINE: ...
// (kernel)" naming the event and --kernel.
KernelVersionResolution resolve_kernel_version(const KernelVersionEvidence& evidence,
                                               const std::optional<KernelVersion>& option,
                                               const std::string& file_name);

} // namespace timersim
