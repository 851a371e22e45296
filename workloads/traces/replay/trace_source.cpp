// A timersim trace (format v1) as a TraceSource (trace_source.hpp).
#include "workloads/traces/replay/trace_source.hpp"

#include "workloads/traces/layouts/trace_reader.hpp"

#include <memory>
#include <utility>

namespace timersim {

namespace {

const std::string kNoHzSource;

class TimersimSource final : public TraceSource {
public:
    TimersimSource(InputFile& in, const TraceFilter& filter, std::unique_ptr<InputFile> owned = nullptr)
        : owned_(std::move(owned)), in_(&in), filter_(filter), reader_(in) {
        reader_.set_filter(filter);
    }
    TimersimSource(std::FILE* in, std::string file_name) : reader_(in, std::move(file_name)) {}
    bool next(TraceEvent& e) override { return reader_.next(e); }
    const TraceHeader& header() override { return reader_.header(); }
    std::uint64_t line() const override { return reader_.line(); }
    std::uint64_t skipped_lines() const override { return 0; }
    const TraceFilterCounts& filter_counts() const override { return reader_.filter_counts(); }
    const std::string& hz_source() const override { return kNoHzSource; }
    const KernelVersionEvidence* kernel_evidence() const override { return nullptr; }
    const FtraceReader* kernel_reader() const override { return nullptr; }
    const FtraceImporter* kernel_importer() const override { return nullptr; }
    TraceReopener reopener() override {
        if (!in_ || !in_->kept_for_reading_again()) return {};
        return [passes = std::make_shared<InputPasses>(in_->read_again()),
                filter = filter_]() -> std::unique_ptr<TraceSource> {
            std::unique_ptr<InputFile> again = passes->next();
            InputFile& in = *again;
            return std::make_unique<TimersimSource>(in, filter, std::move(again));
        };
    }

private:
    std::unique_ptr<InputFile> owned_; // a later pass's own input; before reader_, which reads it
    InputFile* in_ = nullptr;          // null: read from a FILE*
    TraceFilter filter_;
    TraceReader reader_;
};

} // namespace

std::unique_ptr<TraceSource> open_timersim_source(InputFile& in, const TraceFilter& filter) {
    return std::make_unique<TimersimSource>(in, filter);
}

std::unique_ptr<TraceSource> open_timersim_source(std::FILE* in, std::string file_name) {
    return std::make_unique<TimersimSource>(in, std::move(file_name));
}

} // namespace timersim
