#include "workloads/traces/kernel/kernel_version.hpp"

#include "workloads/traces/input/trace_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace timersim {

namespace {

// A header's release in an error message: as it is when it is printable
// ASCII, else quote_for_error()'s escaped form (a NUL would end the
// message), so the message stays one printable line.
bool printable(const std::string& text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}
std::string quoted_release(const std::string& release) {
    return printable(release) ? "'" + release + "'" : quote_for_error(release);
}
std::string printable_release(const std::string& release) {
    return printable(release) ? release : quote_for_error(release);
}

// The versions where the timer code and its tracepoints changed.
constexpr KernelVersion k4_2{4, 2}, k4_8{4, 8}, k4_11{4, 11}, k5_2{5, 2}, k6_8{6, 8}, k6_9{6, 9}, k6_15{6, 15};

std::optional<unsigned> leading_number(std::string_view& s) noexcept {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end == s.data()) return std::nullopt;
    s.remove_prefix(static_cast<std::size_t>(end - s.data()));
    return v;
}

std::string_view trimmed(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// The one version just before `v` as a bound: "to 6.7" for below 6.8.
std::string last_before(KernelVersion v) {
    if (v.minor > 0) return to_string(KernelVersion{v.major, v.minor - 1});
    return fmt::format("{}.x", v.major - 1);
}

} // namespace

std::string to_string(KernelVersion v) { return fmt::format("{}.{}", v.major, v.minor); }

std::optional<KernelVersion> parse_kernel_release(std::string_view release) noexcept {
    std::string_view s = trimmed(release);
    const auto major = leading_number(s);
    if (!major || s.empty() || s.front() != '.') return std::nullopt;
    s.remove_prefix(1);
    const auto minor = leading_number(s);
    if (!minor || *major == 0 || *major > 99 || *minor > 999) return std::nullopt;
    // What follows is the sublevel and the local version ("6.12.118+deb13-cloud-amd64").
    if (!s.empty() && s.front() != '.' && s.front() != '-' && s.front() != '+' && s.front() != ' ') return std::nullopt;
    return KernelVersion{*major, *minor};
}

bool KernelVersionRange::exact() const noexcept {
    return below && *below == KernelVersion{at_least.major, at_least.minor + 1};
}

std::string KernelVersionRange::describe() const {
    if (exact()) return to_string(at_least);
    const bool low = at_least != KernelVersion{0, 0};
    if (low && below) return fmt::format("{} to {}", to_string(at_least), last_before(*below));
    if (low) return fmt::format("{} or later", to_string(at_least));
    if (below) return fmt::format("before {}", to_string(*below));
    return "unknown";
}

std::optional<KernelTimerEra> KernelVersionRange::era() const noexcept {
    // The last version in the range is below `below`; without one, no bound.
    const auto era_of = [](KernelVersion v) {
        return v < k4_8 ? KernelTimerEra::cascading : v < k6_9 ? KernelTimerEra::in_place : KernelTimerEra::pull_model;
    };
    const KernelTimerEra first = era_of(at_least);
    if (!below) {
        if (first == KernelTimerEra::pull_model) return first;
        return std::nullopt;
    }
    // Every version from at_least to below - 1 must share it: the era's
    // boundaries (4.8, 6.9) must not lie inside (at_least, below).
    for (KernelVersion edge : {k4_8, k6_9})
        if (at_least < edge && edge < *below) return std::nullopt;
    return first;
}

void KernelVersionEvidence::at_least(KernelVersion v, std::string_view why, std::uint64_t line) {
    if (!lower_ || lower_->version < v) lower_ = Bound{v, std::string(why), line};
}

void KernelVersionEvidence::below(KernelVersion v, std::string_view why, std::uint64_t line) {
    if (!upper_ || v < upper_->version) upper_ = Bound{v, std::string(why), line};
}

void KernelVersionEvidence::timer_event(const FtraceEvent& e) {
    // Only the first line of each format counts: a bound once set by a
    // line is not set again by a later one of the same kind.
    if (e.type == FtraceEventType::timer_start) {
        if (e.bucket_expiry) {
            // 6.8 trace_timer_start(timer, bucket_expiry) prints it.
            at_least(k6_8, "timer_start lines with bucket_expiry=", e.line);
        } else if (e.idx) {
            // "timers: Make flags output in the timer_start tracepoint
            // useful" (4.11) printed cpu= idx=; 6.8 added bucket_expiry=.
            at_least(k4_11, "timer_start lines with idx=", e.line);
            below(k6_8, "timer_start lines without bucket_expiry=", e.line);
        } else if (e.cpu) {
            at_least(k4_2, "timer_start lines with flags=0x", e.line);
            below(k4_11, "timer_start lines without idx=", e.line);
        } else {
            below(k4_2, "timer_start lines without flags", e.line);
        }
    } else if (e.type == FtraceEventType::timer_expire_entry) {
        // "timer/trace: Improve timer tracing" (5.2) added baseclk=.
        if (e.baseclk) at_least(k5_2, "timer_expire_entry lines with baseclk=", e.line);
        else below(k5_2, "timer_expire_entry lines without baseclk=", e.line);
    }
}

void KernelVersionEvidence::other_line(std::uint64_t line, std::string_view text) {
    if (header_release_ || text.empty() || text.front() != '#') return;
    // "# kernel: RELEASE" (our captures), "# os release : RELEASE" (perf).
    for (std::string_view key : {std::string_view("# kernel:"), std::string_view("# os release :")}) {
        if (text.starts_with(key)) {
            header_release_ = std::string(trimmed(text.substr(key.size())));
            header_key_ = std::string(trimmed(key));
            header_line_ = line;
            return;
        }
    }
}

void KernelVersionEvidence::finish(const FtraceReaderStats& stats) {
    for (const auto& [name, count] : stats.other_by_name) {
        if (name.starts_with("tmigr_")) at_least(k6_9, "timer_migration:tmigr_* events", 0);
        else if (name == "timer_base_idle") at_least(k6_8, "timer_base_idle events", 0);
        else if (name == "hrtimer_setup") at_least(k6_15, "hrtimer_setup events", 0);
        else if (name == "hrtimer_init") below(k6_15, "hrtimer_init events", 0);
    }
}

KernelVersionRange KernelVersionEvidence::range() const {
    KernelVersionRange r;
    if (lower_) r.at_least = lower_->version;
    if (upper_) r.below = upper_->version;
    return r;
}

std::string KernelVersionResolution::describe() const {
    if (source.empty()) return "kernel unknown";
    return fmt::format("kernel {} from {}", range.describe(), source);
}

KernelTimerEra KernelVersionResolution::era_for(std::string_view purpose, const std::string& file_name) const {
    if (const auto e = era()) return *e;
    const std::string shown = source.empty() ? std::string("the trace does not show its kernel's version")
                                             : fmt::format("the trace shows only that its kernel is {} ({})",
                                                           range.describe(), source);
    throw TraceError(file_name, line ? line : 1, "kernel",
                     fmt::format("{} needs the timer design the recording kernel ran, and {}, which spans more than "
                                 "one (4.8 and 6.9 changed it); pass --kernel VERSION",
                                 purpose, shown));
}

KernelVersionResolution resolve_kernel_version(const KernelVersionEvidence& evidence,
                                               const std::optional<KernelVersion>& option,
                                               const std::string& file_name) {
    const auto exactly = [](KernelVersion v) { return KernelVersionRange{v, KernelVersion{v.major, v.minor + 1}}; };
    if (option) return {exactly(*option), "--kernel", 0};
    const auto& lower = evidence.lower();
    const auto& upper = evidence.upper();
    if (lower && upper && upper->version <= lower->version)
        throw TraceError(file_name, upper->line ? upper->line : lower->line, "kernel",
                         fmt::format("no kernel prints this: the trace has {} (version {} or later) and {} (before {}); "
                                     "pass --kernel to say which",
                                     lower->why, to_string(lower->version), upper->why, to_string(upper->version)));
    if (const auto& release = evidence.header_release()) {
        const auto v = parse_kernel_release(*release);
        if (!v)
            throw TraceError(file_name, evidence.header_line(), "kernel",
                             fmt::format("{} is no kernel release (expected MAJOR.MINOR...); pass --kernel",
                                         quoted_release(*release)));
        const auto contradiction = [&](const KernelVersionEvidence::Bound& b, const std::string& bound) {
            return TraceError(file_name, evidence.header_line(), "kernel",
                              fmt::format("the trace's '{}' line says {}, but the trace has {}{}, so it is {}; pass --kernel "
                                          "to say which",
                                          evidence.header_key(), printable_release(*release), b.why,
                                          b.line ? fmt::format(" (line {})", b.line) : "", bound));
        };
        if (lower && *v < lower->version)
            throw contradiction(*lower, fmt::format("{} or later", to_string(lower->version)));
        if (upper && !(*v < upper->version))
            throw contradiction(*upper, fmt::format("before {}", to_string(upper->version)));
        return {exactly(*v), fmt::format("the trace's '{}' line", evidence.header_key()), evidence.header_line()};
    }
    KernelVersionResolution r{evidence.range(), "", 0};
    if (lower && lower->line) r.line = lower->line;
    else if (upper) r.line = upper->line;
    if (lower || upper) {
        std::string why;
        if (lower) why = lower->why;
        if (upper && (!lower || upper->why != lower->why)) why += (why.empty() ? "" : ", ") + upper->why;
        r.source = fmt::format("its events: {}", why);
    }
    return r;
}

} // namespace timersim
