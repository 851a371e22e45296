#include "workloads/traces/kernel/hz_inference.hpp"

#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace timersim {

namespace {

// The most samples of one window that a band kHzBandTicks wide holds, with
// residuals jiffies - t * hz taken relative to the window's first sample
// (so that the numbers stay small: jiffies start near 2^32 - 300 s).
std::size_t best_band(std::span<const JiffiesSample> window, unsigned hz, std::vector<double>& residuals) {
    residuals.clear();
    const JiffiesSample& first = window.front();
    for (const JiffiesSample& s : window) {
        const double dj = static_cast<double>(jiffies_diff(s.jiffies, first.jiffies));
        const double dt = static_cast<double>(s.time_ns - first.time_ns) * 1e-9;
        residuals.push_back(dj - dt * hz);
    }
    std::sort(residuals.begin(), residuals.end());
    std::size_t best = 0;
    for (std::size_t hi = 0, lo = 0; hi < residuals.size(); ++hi) {
        while (residuals[hi] - residuals[lo] > kHzBandTicks) ++lo;
        best = std::max(best, hi - lo + 1);
    }
    return best;
}

// `sorted`: by time.
HzFit fit(std::span<const JiffiesSample> sorted, unsigned hz) {
    HzFit f{.hz = hz};
    if (sorted.empty()) {
        f.share_in_band = 1;
        f.fits = true;
        return f;
    }
    std::vector<double> residuals;
    std::size_t held = 0;
    for (std::size_t begin = 0; begin < sorted.size();) {
        std::size_t end = begin + 1;
        while (end < sorted.size() && sorted[end].time_ns - sorted[begin].time_ns < kHzWindowNs) ++end;
        held += best_band(sorted.subspan(begin, end - begin), hz, residuals);
        begin = end;
    }
    f.share_in_band = static_cast<double>(held) / static_cast<double>(sorted.size());
    f.fits = f.share_in_band >= kHzMinShare;
    return f;
}

std::vector<JiffiesSample> by_time(std::span<const JiffiesSample> samples) {
    std::vector<JiffiesSample> s(samples.begin(), samples.end());
    std::stable_sort(s.begin(), s.end(), [](const JiffiesSample& a, const JiffiesSample& b) {
        return a.time_ns < b.time_ns;
    });
    return s;
}

} // namespace

bool hz_fits(std::span<const JiffiesSample> samples, unsigned hz) { return fit(by_time(samples), hz).fits; }

HzInference infer_hz(std::span<const JiffiesSample> samples) {
    HzInference r;
    r.samples = samples.size();
    const std::vector<JiffiesSample> sorted = by_time(samples);
    if (sorted.size() >= 2) r.span_s = static_cast<double>(sorted.back().time_ns - sorted.front().time_ns) * 1e-9;
    std::vector<unsigned> fitting;
    for (unsigned hz : kKernelHz) {
        r.fits.push_back(fit(sorted, hz));
        if (r.fits.back().fits) fitting.push_back(hz);
    }
    if (samples.size() < 2) {
        r.explanation = fmt::format("{} timer event{} with jiffies: too few to tell HZ", samples.size(),
                                    samples.size() == 1 ? "" : "s");
        return r;
    }
    if (fitting.size() == 1) {
        r.hz = fitting.front();
        const auto i = static_cast<std::size_t>(std::find(kKernelHz.begin(), kKernelHz.end(), *r.hz) - kKernelHz.begin());
        r.explanation = fmt::format("HZ={} from the trace: {:.1f}% of {} jiffies samples over {:.3f} s lie within a "
                                    "tick of its line",
                                    *r.hz, 100 * r.fits[i].share_in_band, samples.size(), r.span_s);
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
                                    samples.size(), r.span_s);
    return r;
}

HzResolution resolve_ftrace_hz(std::string_view text, const std::string& file_name, const HzChoice& choice) {
    HzResolution r;
    // A first pass over the events for their jiffies (no HZ needed): they
    // decide HZ, and they are the kernel's clock for the replay.
    FtraceReader reader(text, file_name, choice.option);
    reader.allow_unknown_hz();
    if (choice.option && choice.force) reader.force_hz();
    std::vector<JiffiesSample>& samples = r.samples;
    std::uint64_t first_line = 0;
    FtraceEvent e;
    while (reader.next(e)) {
        if (first_line == 0) first_line = e.line;
        if (const auto j = e.jiffies()) samples.push_back({e.timestamp_ns, *j});
    }
    if (choice.option && choice.force) {
        r.hz = *choice.option;
        r.source = "--hz (forced)";
        r.forced = true;
        return r;
    }
    r.inference = infer_hz(samples);
    const std::uint64_t line = first_line ? first_line : 1;
    const auto given = [&](unsigned hz, std::string what, std::string_view override_hint) {
        // A given HZ the jiffies contradict: they fit one other kernel HZ.
        if (r.inference.hz && *r.inference.hz != hz && !hz_fits(samples, hz))
            throw TraceError(file_name, line, "hz",
                             fmt::format("{} says HZ={}, but the trace's jiffies say HZ={} ({}){}", what, hz,
                                         *r.inference.hz, r.inference.explanation, override_hint));
        r.hz = hz;
        r.source = std::move(what);
    };
    if (choice.option) {
        given(*choice.option, "--hz", "; pass --force-hz to replay at --hz anyway");
    } else if (const auto h = reader.header_hz()) {
        given(*h, "the trace's '# hz=' line", "; pass --hz to say which");
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

} // namespace timersim
