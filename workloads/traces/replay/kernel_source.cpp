// Kernel text in any layout as a TraceSource (trace_source.hpp). Apart from
// trace_source.cpp, which reads timersim traces: this one needs libtracecmd
// (trace.dat), which the browser playground does without.
#include "workloads/traces/replay/trace_source.hpp"

#include "workloads/traces/input/kernel_text.hpp"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace timersim {

namespace {

// What the first pass over kernel text decided, for every later pass over
// it: the load's, and each replay's own when the events are read again
// (TraceSource::reopener()). Shared and never changed once the load's
// source knows the recording kernel.
struct KernelPassSetup {
    unsigned hz = 0;
    bool forced = false;
    KernelClock clock;
    TraceFilter filter;
    std::vector<PreTraceFire> pre_trace_fires;  // armed at the start when no filter is active
    std::vector<std::uint64_t> late_fired_timers; // deferrable, before 4.2 (use_kernel())
};

// One pass over the text: the reader and the importer over it, set up as
// the first pass decided. `owned`, if given, is the text (a later pass's
// own input); else `text` must outlive the pass.
class KernelPass {
public:
    KernelPass(InputFile& text, std::unique_ptr<InputFile> owned, const KernelPassSetup& setup,
               FtraceObserver* observer)
        : owned_(std::move(owned)), reader_(text, setup.hz),
          importer_(reader_, FtraceImporter::kDefaultPairWindowNs, observer) {
        if (setup.forced) reader_.force_hz();
        importer_.use_clock(&setup.clock);
        if (!setup.filter.active()) importer_.arm_before_trace(setup.pre_trace_fires);
        if (!setup.late_fired_timers.empty()) importer_.infer_deferrable(setup.late_fired_timers);
        reader_.set_filter(setup.filter);
    }
    FtraceReader& reader() noexcept { return reader_; }
    const FtraceReader& reader() const noexcept { return reader_; }
    FtraceImporter& importer() noexcept { return importer_; }
    const FtraceImporter& importer() const noexcept { return importer_; }

private:
    std::unique_ptr<InputFile> owned_; // before reader_: it reads it
    FtraceReader reader_;
    FtraceImporter importer_;
};

const std::string kNoHzSource;

// The events of kernel text: a pass converted on the fly by FtraceImporter
// (no temporary trace v1), the same events `timersim import` writes.
class KernelEvents final : public TraceSource {
public:
    KernelEvents(InputFile& text, std::unique_ptr<InputFile> owned, std::shared_ptr<const KernelPassSetup> setup,
                 FtraceObserver* observer)
        : setup_(std::move(setup)), pass_(text, std::move(owned), *setup_, observer) {}
    bool next(TraceEvent& e) override {
        started_ = true;
        if (ahead_) {
            const bool got = *ahead_;
            if (got) e = ahead_event_;
            ahead_.reset();
            return got;
        }
        const bool got = pass_.importer().next(e);
        header_ = pass_.importer().header();
        return got;
    }
    const TraceHeader& header() override {
        // The importer knows the jiffies at time 0 once an event showed them:
        // before the first next(), read one ahead (its views stay valid, as
        // nothing is read until next() hands it over).
        if (!started_) {
            started_ = true;
            ahead_ = pass_.importer().next(ahead_event_);
            header_ = pass_.importer().header();
        }
        return header_;
    }
    // The line of the event given last (the reader is ahead of it: the
    // kernel event stream's window).
    std::uint64_t line() const override { return pass_.importer().line(); }
    std::uint64_t skipped_lines() const override { return pass_.reader().stats().other_events; }
    const TraceFilterCounts& filter_counts() const override { return pass_.reader().filter_counts(); }
    const std::string& hz_source() const override { return kNoHzSource; }
    const KernelVersionEvidence* kernel_evidence() const override { return nullptr; }
    const FtraceReader* kernel_reader() const override { return &pass_.reader(); }
    const FtraceImporter* kernel_importer() const override { return &pass_.importer(); }
    KernelPass& pass() noexcept { return pass_; }
    TraceReopener reopener() override { return {}; } // a later pass: KernelSource makes them

private:
    std::shared_ptr<const KernelPassSetup> setup_; // before pass_: it reads it
    KernelPass pass_;
    TraceHeader header_;
    bool started_ = false;
    std::optional<bool> ahead_; // header() read ahead: whether it found an event
    TraceEvent ahead_event_;
};

// Kernel text as the load reads it: a first pass decides its HZ and clock
// (hz_inference.hpp), the second converts it; reopener() makes more of the
// second.
class KernelSource final : public TraceSource {
public:
    KernelSource(InputFile& in, const HzChoice& hz, const TraceFilter& filter, FtraceObserver* observer)
        : text_(in), hz_(resolve_ftrace_hz([this]() -> InputFile& { return text_.pass(); }, text_.name(), hz)),
          setup_(make_setup(hz_, filter)), events_(text_.pass(), nullptr, setup_, observer) {}
    bool next(TraceEvent& e) override { return events_.next(e); }
    const TraceHeader& header() override { return events_.header(); }
    std::uint64_t line() const override { return events_.line(); }
    std::uint64_t skipped_lines() const override { return events_.skipped_lines(); }
    const TraceFilterCounts& filter_counts() const override { return events_.filter_counts(); }
    const std::string& hz_source() const override { return hz_.source; }
    const KernelVersionEvidence* kernel_evidence() const override { return &hz_.kernel_evidence; }
    const FtraceReader* kernel_reader() const override { return events_.kernel_reader(); }
    const FtraceImporter* kernel_importer() const override { return events_.kernel_importer(); }
    std::size_t use_kernel(const KernelVersionRange& kernel) override {
        if (!kernel.timer_flags_unprinted()) return 0;
        const std::size_t timers = hz_.late_fired_timers.size();
        setup_->late_fired_timers = hz_.late_fired_timers;
        events_.pass().importer().infer_deferrable(std::move(hz_.late_fired_timers));
        return timers;
    }
    std::unique_ptr<InputFile> kernel_text() override { return text_.copy_for_passes(); }
    TraceReopener reopener() override {
        auto passes = std::make_shared<InputPasses>(text_.copy_for_passes());
        return [passes, setup = std::shared_ptr<const KernelPassSetup>(setup_)]() -> std::unique_ptr<TraceSource> {
            std::unique_ptr<InputFile> text = passes->next();
            InputFile& t = *text;
            auto events = std::make_unique<KernelEvents>(t, std::move(text), setup, nullptr);
            events->pass().importer().forget_recorded_runs(); // the load's pass has them
            return events;
        };
    }

private:
    static std::shared_ptr<KernelPassSetup> make_setup(HzResolution& hz, const TraceFilter& filter) {
        auto setup = std::make_shared<KernelPassSetup>();
        setup->hz = hz.hz;
        setup->forced = hz.forced;
        setup->clock = KernelClock(std::move(hz.clock_samples), hz.hz);
        setup->filter = filter;
        setup->pre_trace_fires = std::move(hz.pre_trace_fires);
        return setup;
    }

    KernelText text_; // read twice: its HZ and clock are decided from all of it
    HzResolution hz_;
    std::shared_ptr<KernelPassSetup> setup_;
    KernelEvents events_;
};

} // namespace

std::unique_ptr<TraceSource> open_trace_source(InputFile& in, TraceKind kind, const HzChoice& hz,
                                               const TraceFilter& filter, FtraceObserver* observer) {
    if (kind == TraceKind::timersim) return open_timersim_source(in, filter);
    return std::make_unique<KernelSource>(in, hz, filter, observer);
}

} // namespace timersim
