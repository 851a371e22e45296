#include "workloads/traces/kernel/hz_inference.hpp"

#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/deferrable_inference.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

namespace timersim {

namespace {

// The most samples of one window that a band kHzBandTicks wide holds, with
// residuals jiffies - t * hz taken relative to the window's first sample
// (so that the numbers stay small: jiffies start near 2^32 - 300 s).
std::size_t best_band(std::span<const JiffiesSample> window, unsigned hz, std::vector<double>& residuals) {
    residuals.clear();
    const JiffiesSample& first = window.front();
    double lowest = std::numeric_limits<double>::infinity();
    double highest = -lowest;
    for (const JiffiesSample& s : window) {
        const double dj = static_cast<double>(jiffies_diff(s.jiffies, first.jiffies));
        const double dt = static_cast<double>(s.time_ns - first.time_ns) * 1e-9;
        const double r = dj - dt * hz;
        residuals.push_back(r);
        lowest = std::min(lowest, r);
        highest = std::max(highest, r);
    }
    // One band holds them all (the HZ that fits, on a trace without
    // outliers): no need to sort them to find it (the sort is most of a
    // window's cost).
    if (highest - lowest <= kHzBandTicks) return residuals.size();
    std::sort(residuals.begin(), residuals.end());
    std::size_t best = 0;
    for (std::size_t hi = 0, lo = 0; hi < residuals.size(); ++hi) {
        while (residuals[hi] - residuals[lo] > kHzBandTicks) ++lo;
        best = std::max(best, hi - lo + 1);
    }
    return best;
}

// Samples taken in time order: each HZ's count of samples inside its
// window's band, window by window, and the clock samples. Windows start at
// a sample and hold the samples less than kHzWindowNs after it.
class SortedSamples {
public:
    SortedSamples() {
        for (unsigned hz : kKernelHz) fit_also(hz);
    }
    void fit_also(unsigned hz) {
        if (std::find(hzs_.begin(), hzs_.end(), hz) == hzs_.end()) {
            hzs_.push_back(hz);
            held_.push_back(0);
        }
    }
    void take(const JiffiesSample& s) {
        if (!window_.empty() && s.time_ns - window_.front().time_ns >= kHzWindowNs) close_window();
        if (count_ == 0) first_ns_ = s.time_ns;
        last_ns_ = s.time_ns;
        ++count_;
        window_.push_back(s);
        keep_for_clock(s);
    }
    void finish() { close_window(); }

    std::size_t count() const noexcept { return count_; }
    double span_s() const noexcept { return count_ >= 2 ? static_cast<double>(last_ns_ - first_ns_) * 1e-9 : 0; }
    HzFit fit(unsigned hz) const {
        HzFit f{.hz = hz};
        const auto i = static_cast<std::size_t>(std::find(hzs_.begin(), hzs_.end(), hz) - hzs_.begin());
        if (i == hzs_.size()) throw std::logic_error(fmt::format("HZ {} was not fitted (fit_also() it first)", hz));
        if (count_ == 0) {
            f.share_in_band = 1;
            f.fits = true;
            return f;
        }
        f.share_in_band = static_cast<double>(held_[i]) / static_cast<double>(count_);
        f.fits = f.share_in_band >= kHzMinShare;
        return f;
    }
    std::vector<JiffiesSample>& clock() noexcept { return clock_; }

private:
    void close_window() {
        if (window_.empty()) return;
        for (std::size_t i = 0; i < hzs_.size(); ++i) held_[i] += best_band(window_, hzs_[i], residuals_);
        window_.clear();
    }
    // jiffies is one global counter: a sample printed after a later one
    // (another CPU's skew) says no less than what was seen before. Of a run
    // of equal jiffies the clock needs its first and last sample only:
    // between them it says that value anyway.
    void keep_for_clock(JiffiesSample s) {
        if (!clock_.empty()) s.jiffies = std::max(s.jiffies, clock_.back().jiffies);
        const std::size_t n = clock_.size();
        if (n >= 2 && clock_[n - 1].jiffies == s.jiffies && clock_[n - 2].jiffies == s.jiffies)
            clock_.back() = s;
        else
            clock_.push_back(s);
    }

    std::vector<unsigned> hzs_;
    std::vector<std::size_t> held_; // by hzs_
    std::vector<JiffiesSample> window_;
    std::vector<double> residuals_;
    std::vector<JiffiesSample> clock_;
    std::size_t count_ = 0;
    std::uint64_t first_ns_ = 0;
    std::uint64_t last_ns_ = 0;
};

SortedSamples sorted(std::span<const JiffiesSample> samples, std::optional<unsigned> also = {}) {
    std::vector<JiffiesSample> s(samples.begin(), samples.end());
    std::stable_sort(s.begin(), s.end(), [](const JiffiesSample& a, const JiffiesSample& b) {
        return a.time_ns < b.time_ns;
    });
    SortedSamples out;
    if (also) out.fit_also(*also);
    for (const JiffiesSample& x : s) out.take(x);
    out.finish();
    return out;
}

HzInference conclude(const SortedSamples& samples) {
    HzInference r;
    r.samples = samples.count();
    r.span_s = samples.span_s();
    std::vector<unsigned> fitting;
    for (unsigned hz : kKernelHz) {
        r.fits.push_back(samples.fit(hz));
        if (r.fits.back().fits) fitting.push_back(hz);
    }
    if (r.samples < 2) {
        r.explanation = fmt::format("{} timer event{} with jiffies: too few to tell HZ", r.samples,
                                    r.samples == 1 ? "" : "s");
        return r;
    }
    if (fitting.size() == 1) {
        r.hz = fitting.front();
        const auto i =
            static_cast<std::size_t>(std::find(kKernelHz.begin(), kKernelHz.end(), *r.hz) - kKernelHz.begin());
        r.explanation = fmt::format("HZ={} from the trace: {:.1f}% of {} jiffies samples over {:.3f} s lie within a "
                                    "tick of its line",
                                    *r.hz, 100 * r.fits[i].share_in_band, r.samples, r.span_s);
        return r;
    }
    std::vector<std::string> spreads;
    for (const HzFit& f : r.fits) spreads.push_back(fmt::format("{} {:.1f}%", f.hz, 100 * f.share_in_band));
    if (fitting.empty())
        r.explanation = fmt::format("no kernel HZ fits the trace's jiffies over {:.3f} s (samples within a tick of "
                                    "the line: {})",
                                    r.span_s, fmt::join(spreads, ", "));
    else
        r.explanation = fmt::format("ambiguous: HZ {} fit {} samples over {:.3f} s alike", fmt::join(fitting, " and "),
                                    r.samples, r.span_s);
    return r;
}

} // namespace

bool hz_fits(std::span<const JiffiesSample> samples, unsigned hz) { return sorted(samples, hz).fit(hz).fits; }

HzInference infer_hz(std::span<const JiffiesSample> samples) { return conclude(sorted(samples)); }

std::vector<JiffiesSample> clock_samples(std::span<const JiffiesSample> samples) {
    return std::move(sorted(samples).clock());
}

struct JiffiesSampler::Impl {
    SortedSamples taken;
    std::optional<std::uint64_t> last_ns; // the last sample's: set once one was added
    bool finished = false;
    bool clock_taken = false;

    // std::logic_error unless finish() was called as `finished` says.
    void require_finished(bool finished_wanted, const char* what) const {
        if (finished != finished_wanted)
            throw std::logic_error(fmt::format("JiffiesSampler::{} {} finish()", what, finished ? "after" : "before"));
    }
};

JiffiesSampler::JiffiesSampler() : impl_(std::make_unique<Impl>()) {}
JiffiesSampler::~JiffiesSampler() = default;

void JiffiesSampler::fit_also(unsigned hz) {
    // The samples already taken would not count for it.
    if (impl_->last_ns || impl_->finished) throw std::logic_error("JiffiesSampler::fit_also() after add() or finish()");
    impl_->taken.fit_also(hz);
}

void JiffiesSampler::add(const JiffiesSample& s) {
    impl_->require_finished(false, "add()");
    if (impl_->last_ns && s.time_ns < *impl_->last_ns)
        throw std::logic_error("JiffiesSampler::add(): samples must come in time order");
    impl_->last_ns = s.time_ns;
    impl_->taken.take(s);
}

void JiffiesSampler::finish() {
    impl_->require_finished(false, "finish()");
    impl_->taken.finish();
    impl_->finished = true;
}

HzInference JiffiesSampler::inference() const {
    impl_->require_finished(true, "inference()");
    return conclude(impl_->taken);
}

bool JiffiesSampler::fits(unsigned hz) const {
    impl_->require_finished(true, "fits()");
    return impl_->taken.fit(hz).fits;
}

std::vector<JiffiesSample> JiffiesSampler::take_clock_samples() {
    impl_->require_finished(true, "take_clock_samples()");
    if (impl_->clock_taken) throw std::logic_error("JiffiesSampler::take_clock_samples() twice");
    impl_->clock_taken = true;
    return std::move(impl_->taken.clock());
}

namespace {

// `open()` gives a new FtraceReader over the text from its start, for each
// pass.
template <class OpenReader>
HzResolution resolve(OpenReader open, const std::string& file_name, const HzChoice& choice, HzPassExtras extras,
                     FtraceObserver* watch) {
    HzResolution r;
    // A first pass over the events for their jiffies (no HZ needed): they
    // decide HZ, and they are the kernel's clock for the replay.
    std::unique_ptr<FtraceReader> reader = open();
    reader->allow_unknown_hz();
    if (choice.option && choice.force) reader->force_hz();
    // The same pass also finds the timers armed before the trace.
    PreTraceTimers pre_trace;
    DeferrableInference late;
    const bool replay = extras == HzPassExtras::replay;
    FtraceObserverTee all = replay ? FtraceObserverTee{&r.kernel_evidence, &pre_trace, &late, watch}
                                   : FtraceObserverTee{&r.kernel_evidence, watch};
    reader->set_observer(&all);
    JiffiesSampler sampler;
    if (choice.option) sampler.fit_also(*choice.option);
    std::uint64_t first_line = 0;
    FtraceEvent e;
    // The reader refuses lines out of time order: samples come in order.
    while (reader->next(e)) {
        if (first_line == 0) {
            first_line = e.line;
            // The '# hz=' line comes before the first event.
            if (const auto h = reader->header_hz()) sampler.fit_also(*h);
        }
        if (const auto j = e.jiffies()) sampler.add({e.timestamp_ns, *j});
    }
    sampler.finish();
    reader->set_observer(nullptr);
    r.kernel_evidence.finish(reader->stats());
    r.pre_trace_fires = pre_trace.fires();
    r.late_fired_timers = late.timers();
    r.timer_events = reader->stats().timer_events;
    const std::optional<unsigned> header_hz = reader->header_hz();
    r.clock_samples = sampler.take_clock_samples();
    const auto fits = [&](unsigned hz) { return sampler.fits(hz); };
    if (choice.option && choice.force) {
        r.hz = *choice.option;
        r.source = "--hz (forced)";
        r.forced = true;
        return r;
    }
    r.inference = sampler.inference();
    const std::uint64_t line = first_line ? first_line : 1;
    const auto given = [&](unsigned hz, std::string what, std::string_view override_hint) {
        // A given HZ the jiffies contradict: they fit one other kernel HZ.
        if (r.inference.hz && *r.inference.hz != hz && !fits(hz))
            throw TraceError(file_name, line, "hz",
                             fmt::format("{} says HZ={}, but the trace's jiffies say HZ={} ({}){}", what, hz,
                                         *r.inference.hz, r.inference.explanation, override_hint));
        r.hz = hz;
        r.source = std::move(what);
    };
    if (choice.option) {
        given(*choice.option, "--hz", "; pass --force-hz to replay at --hz anyway");
    } else if (header_hz) {
        given(*header_hz, "the trace's '# hz=' line", "; pass --hz to say which");
    } else if (r.inference.hz) {
        r.hz = *r.inference.hz;
        r.source = "the trace's jiffies";
    } else {
        throw TraceError(file_name, line, "hz",
                         fmt::format("HZ unknown: the trace has no '# hz=' line and {}; pass --hz",
                                     r.inference.explanation));
    }
    return r;
}

} // namespace

HzResolution resolve_ftrace_hz(const TextPasses& pass, const std::string& file_name, const HzChoice& choice,
                               HzPassExtras extras, FtraceObserver* watch) {
    return resolve([&] { return std::make_unique<FtraceReader>(pass(), choice.option); }, file_name, choice,
                   extras, watch);
}

HzResolution resolve_ftrace_hz(std::string_view text, const std::string& file_name, const HzChoice& choice,
                               HzPassExtras extras, FtraceObserver* watch) {
    return resolve([&] { return std::make_unique<FtraceReader>(text, file_name, choice.option); }, file_name, choice,
                   extras, watch);
}

} // namespace timersim
