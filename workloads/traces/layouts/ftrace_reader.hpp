// Reading real kernel timer traces (docs/kernel-traces.md, "What is
// read"): FtraceReader parses the text of /sys/kernel/tracing/trace, of
// `trace-cmd report` (plain or -l) and of `perf script` into FtraceEvents,
// one per timer_* line, keeping every value the kernel printed. Turning them
// into trace v1 events is the importer's (kernel/ftrace_import.hpp).
#pragma once

#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/layouts/trace_event.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

inline constexpr std::size_t kMaxFtraceLine = 64 * 1024;

enum class FtraceEventType : std::uint8_t {
    timer_init,
    timer_start,
    timer_cancel,
    timer_expire_entry,
    timer_expire_exit,
};

std::string_view to_string(FtraceEventType type) noexcept;

// include/linux/timer.h flag bits (4.8+ values; see docs for 4.2-4.7).
inline constexpr std::uint32_t kFtraceCpuMask = 0x0003FFFF;
inline constexpr std::uint32_t kFtraceMigrating = 0x00040000;
inline constexpr std::uint32_t kFtraceDeferrable = 0x00080000;
inline constexpr std::uint32_t kFtracePinned = 0x00100000;
inline constexpr std::uint32_t kFtraceIrqsafe = 0x00200000;
inline constexpr unsigned kFtraceArrayShift = 22;

// One timer_* line, with everything the kernel printed. string_views point
// into the reader's line buffer: valid until the next call to next().
struct FtraceEvent {
    FtraceEventType type = FtraceEventType::timer_init;
    std::uint64_t line = 0;          // 1-based line in the input
    std::uint64_t timestamp_ns = 0;  // as printed (seconds since boot), in ns
    std::uint32_t line_cpu = 0;      // the [CPU] column: where the event happened
    std::uint64_t timer = 0;         // the timer_list pointer (hashed or not)
    std::string_view function;       // function=, without a " [module]" suffix
    std::string_view module;         // the module of "function=fn [module]", if any
    // timer_start
    Jiffies expires = 0;
    std::int64_t timeout = 0;                 // [timeout=] = expires - now
    std::optional<std::uint32_t> cpu;         // cpu= (4.11+), or from flags=0x (4.2-4.10)
    std::optional<std::uint32_t> idx;         // idx= (4.11+): the wheel bucket 0..575
    std::optional<Jiffies> bucket_expiry;     // bucket_expiry= (6.8+)
    std::uint32_t flags = 0;                  // M/D/P/I as kernel bits (kFtrace*)
    bool flags_known = false;                 // the line had flags=
    // timer_expire_entry
    std::optional<Jiffies> now;               // now=
    std::optional<Jiffies> baseclk;           // baseclk= (5.2+): the bucket expiry collected

    // jiffies when the event was traced, if the line tells (timer_start:
    // expires - timeout; timer_expire_entry: now).
    std::optional<Jiffies> jiffies() const noexcept;
};

// One irq:softirq_entry or irq:softirq_exit line of TIMER_SOFTIRQ (vec=1),
// for a FtraceObserver (the cost model from a trace, trace_costs.hpp).
struct FtraceTimerSoftirq {
    bool entry = true;               // softirq_entry; else softirq_exit
    std::uint64_t line = 0;
    std::uint64_t timestamp_ns = 0;
    std::uint32_t line_cpu = 0;
};

// The "[CPU]" column of a line other_line() passes (below): the first
// "[digits]" of the text before the event name. False if there is none.
bool other_line_cpu(std::string_view prefix, std::uint32_t& cpu);

// Sees every timer_* event (before any filter) and every TIMER_SOFTIRQ
// entry/exit line as the reader reads them. The softirq lines are still
// skipped and counted as other events: next() returns what it always did.
class FtraceObserver {
public:
    virtual ~FtraceObserver() = default;
    virtual void timer_event(const FtraceEvent& event) = 0;
    virtual void timer_softirq(const FtraceTimerSoftirq& event) = 0;
    // Every line that is no timer_* event, trimmed, with its 1-based line
    // number: comments, lost-event markers, other events (validate finds
    // lost events and its workload marker there).
    virtual void other_line(std::uint64_t /*line*/, std::string_view /*text*/) {}
};

// Passes each call on to its observers, in order: several observers of one
// pass (the HZ pass's version evidence and pre-trace timers; the import's
// kernel fires and trace costs). Null observers are left out.
class FtraceObserverTee final : public FtraceObserver {
public:
    FtraceObserverTee(std::initializer_list<FtraceObserver*> observers) {
        for (FtraceObserver* o : observers)
            if (o) observers_.push_back(o);
    }
    void timer_event(const FtraceEvent& e) override {
        for (FtraceObserver* o : observers_) o->timer_event(e);
    }
    void timer_softirq(const FtraceTimerSoftirq& e) override {
        for (FtraceObserver* o : observers_) o->timer_softirq(e);
    }
    void other_line(std::uint64_t line, std::string_view text) override {
        for (FtraceObserver* o : observers_) o->other_line(line, text);
    }

private:
    std::vector<FtraceObserver*> observers_;
};

struct FtraceReaderStats {
    std::uint64_t lines = 0;
    std::uint64_t timer_events = 0;      // timer_* lines read (returned by next() unless a filter dropped them)
    std::uint64_t other_events = 0;      // event lines of any other event, skipped
    std::map<std::string, std::uint64_t, std::less<>> other_by_name;
    std::uint64_t lost_event_markers = 0; // "CPU:N [LOST n EVENTS]" / "[n EVENTS DROPPED]"
    std::uint64_t lost_events = 0;        // the n of those markers, where given
    // timer_start lines with flags=, and those of them with D, P and I all set:
    // libtraceevent 1.7.1 (trace-cmd report, perf script) prints D|P|I on
    // every 6.1 timer_start, so "all of them" means the flags are garbled.
    std::uint64_t starts_with_flags = 0;
    std::uint64_t starts_with_dpi = 0;
};

class FtraceReader {
public:
    // `hz`: --hz, if given. The input may instead (or also, if they agree)
    // carry a line "# hz=N" before its first event.
    FtraceReader(std::istream& in, std::string file_name, std::optional<unsigned> hz = {});
    FtraceReader(std::FILE* in, std::string file_name, std::optional<unsigned> hz = {});
    // Text already in memory, read in place (it must outlive the reader).
    FtraceReader(std::string_view text, std::string file_name, std::optional<unsigned> hz = {});
    // Any file, "-", compressed or not (input_file.hpp); named in.name().
    explicit FtraceReader(InputFile& in, std::optional<unsigned> hz = {});
    ~FtraceReader();
    FtraceReader(const FtraceReader&) = delete;
    FtraceReader& operator=(const FtraceReader&) = delete;

    // The next timer_* event; other lines are skipped (and counted). Throws
    // TraceError for anything malformed.
    bool next(FtraceEvent& event);

    // Known once the first event line was read (throws before that if neither
    // --hz nor "# hz=" gave it).
    unsigned hz() const noexcept;
    // For a first pass that finds HZ from the trace itself (hz_inference):
    // a missing HZ is then no error and hz() stays 0. Call before next().
    void allow_unknown_hz() noexcept;
    // --force-hz: the `hz` given wins over a '# hz=' line that says
    // otherwise (header_hz() still tells what the line said). Call before
    // next().
    void force_hz() noexcept;
    // Keep only the events `filter` names (trace_filter.hpp): --from/--to
    // against the first event line's timestamp (or the timestamp as printed,
    // for '@'), --cpu against the [CPU] column, --function against the
    // timer's callback: function= of the line, else of the timer's last
    // timer_start or timer_expire_entry (a cancel or expire_exit prints
    // none; a timer never seen with one matches no pattern). Call before
    // next().
    void set_filter(TraceFilter filter);
    const TraceFilterCounts& filter_counts() const noexcept;
    // Not owned; must outlive the reading. Call before next().
    void set_observer(FtraceObserver* observer) noexcept;
    // The value of the input's "# hz=N" line, if it has one.
    std::optional<unsigned> header_hz() const noexcept;
    // Timestamp of the first event line (of any event), in ns.
    std::optional<std::uint64_t> first_timestamp_ns() const noexcept;
    const FtraceReaderStats& stats() const noexcept;
    const std::string& file_name() const noexcept;
    std::uint64_t line() const noexcept;
    [[noreturn]] void fail(std::string_view field, std::string message) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace timersim
