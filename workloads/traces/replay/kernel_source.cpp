// Kernel text in any layout as a TraceSource (trace_source.hpp). Apart from
// trace_source.cpp, which reads timersim traces: this one needs libtracecmd
// (trace.dat), which the browser playground does without.
#include "workloads/traces/replay/trace_source.hpp"

#include "workloads/traces/input/kernel_text.hpp"

#include <optional>
#include <utility>

namespace timersim {

namespace {

// Kernel text converted on the fly by FtraceImporter (no temporary trace
// v1): the same events `timersim import` writes.
class KernelSource final : public TraceSource {
public:
    KernelSource(InputFile& in, const HzChoice& hz, const TraceFilter& filter, FtraceObserver* observer)
        : text_(in), hz_(resolve_ftrace_hz([this]() -> InputFile& { return text_.pass(); }, text_.name(), hz)),
          clock_(std::move(hz_.clock_samples), hz_.hz), reader_(text_.pass(), hz_.hz), importer_(reader_) {
        if (hz_.forced) reader_.force_hz();
        importer_.use_clock(&clock_);
        if (!filter.active()) importer_.arm_before_trace(std::move(hz_.pre_trace_fires));
        reader_.set_filter(filter);
        reader_.set_observer(observer);
    }
    bool next(TraceEvent& e) override {
        started_ = true;
        if (ahead_) {
            const bool got = *ahead_;
            if (got) e = ahead_event_;
            ahead_.reset();
            return got;
        }
        const bool got = importer_.next(e);
        header_ = importer_.header();
        return got;
    }
    const TraceHeader& header() override {
        // The importer knows the jiffies at time 0 once an event showed them:
        // before the first next(), read one ahead (its views stay valid, as
        // nothing is read until next() hands it over).
        if (!started_) {
            started_ = true;
            ahead_ = importer_.next(ahead_event_);
            header_ = importer_.header();
        }
        return header_;
    }
    // The importer holds events up to its pair window, so this is the line
    // read last, at most that window past the event.
    std::uint64_t line() const override { return reader_.line(); }
    std::uint64_t skipped_lines() const override { return reader_.stats().other_events; }
    const TraceFilterCounts& filter_counts() const override { return reader_.filter_counts(); }
    const std::string& hz_source() const override { return hz_.source; }
    const KernelVersionEvidence* kernel_evidence() const override { return &hz_.kernel_evidence; }
    const FtraceReader* kernel_reader() const override { return &reader_; }
    const FtraceImporter* kernel_importer() const override { return &importer_; }
    std::size_t use_kernel(const KernelVersionRange& kernel) override {
        if (!kernel.timer_flags_unprinted()) return 0;
        const std::size_t timers = hz_.late_fired_timers.size();
        importer_.infer_deferrable(std::move(hz_.late_fired_timers));
        return timers;
    }

private:
    KernelText text_; // read twice: its HZ and clock are decided from all of it
    HzResolution hz_;
    KernelClock clock_; // the kernel's jiffies: ops land on them
    FtraceReader reader_;
    FtraceImporter importer_;
    TraceHeader header_;
    bool started_ = false;
    std::optional<bool> ahead_; // header() read ahead: whether it found an event
    TraceEvent ahead_event_;
};

} // namespace

std::unique_ptr<TraceSource> open_trace_source(InputFile& in, TraceKind kind, const HzChoice& hz,
                                               const TraceFilter& filter, FtraceObserver* observer) {
    if (kind == TraceKind::timersim) return open_timersim_source(in, filter);
    return std::make_unique<KernelSource>(in, hz, filter, observer);
}

} // namespace timersim
