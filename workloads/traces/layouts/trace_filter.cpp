#include "workloads/traces/layouts/trace_filter.hpp"

#include "workloads/traces/input/parse_util.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace timersim {

bool filter_event(const TraceFilter& filter, TraceFilterCounts& counts, std::uint32_t cpu,
                  std::string_view function, std::uint64_t relative_ns, std::uint64_t absolute_ns) {
    const auto at = [&](const TraceTime& t) { return t.absolute ? absolute_ns : relative_ns; };
    if ((filter.from && at(*filter.from) < filter.from->ns) || (filter.to && at(*filter.to) >= filter.to->ns)) {
        ++counts.dropped_by_time;
        return false;
    }
    if (!filter.keeps_cpu(cpu)) {
        ++counts.dropped_by_cpu;
        return false;
    }
    if (filter.function && (function.empty() || !glob_match(*filter.function, function))) {
        ++counts.dropped_by_function;
        return false;
    }
    ++counts.kept;
    return true;
}

std::vector<bool> parse_cpu_list(std::string_view text) {
    // The kernel's cpulist format (Documentation/admin-guide/cputopology):
    // numbers and ranges A-B, comma-separated.
    if (text.empty()) throw std::invalid_argument("empty CPU list: expected e.g. 0,2-3");
    std::vector<bool> cpus;
    std::string_view rest = text;
    while (true) {
        const std::size_t comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        const std::size_t dash = part.find('-');
        std::uint32_t first = 0;
        std::uint32_t last = 0;
        const bool ok = dash == std::string_view::npos
                            ? detail::parse_uint(part, first) && (last = first, true)
                            : detail::parse_uint(part.substr(0, dash), first) &&
                                  detail::parse_uint(part.substr(dash + 1), last);
        if (!ok)
            throw std::invalid_argument(fmt::format("'{}' in '{}' is not a CPU number or a range A-B", part, text));
        if (first > last) throw std::invalid_argument(fmt::format("range '{}' runs backwards", part));
        if (last > kMaxFilterCpu)
            throw std::invalid_argument(fmt::format("CPU {} is above {}", last, kMaxFilterCpu));
        if (cpus.size() <= last) cpus.resize(std::size_t{last} + 1, false);
        for (std::uint32_t c = first; c <= last; ++c) cpus[c] = true;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return cpus;
}

namespace {

// "12.345" with `scale` ns per unit, exactly (no binary floating point).
bool decimal_ns(std::string_view number, std::uint64_t scale, std::uint64_t& ns) {
    const std::size_t dot = number.find('.');
    const std::string_view whole = number.substr(0, dot);
    const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : number.substr(dot + 1);
    std::uint64_t w = 0;
    if (!detail::parse_uint(whole, w)) return false;
    if (dot != std::string_view::npos && (frac.empty() || !detail::all_digits(frac))) return false;
    if (w > UINT64_MAX / scale) return false;
    ns = w * scale;
    std::uint64_t unit = scale;
    for (const char c : frac) {
        if (unit % 10 != 0) {
            if (c != '0') return false; // finer than 1 ns
            continue;
        }
        unit /= 10;
        ns += static_cast<std::uint64_t>(c - '0') * unit;
    }
    return true;
}

} // namespace

TraceTime parse_trace_time(std::string_view text) {
    TraceTime t;
    std::string_view number = text;
    std::uint64_t scale = 0;
    if (number.starts_with('@')) {
        t.absolute = true;
        number.remove_prefix(1);
        if (number.ends_with('s')) number.remove_suffix(1);
        scale = 1'000'000'000;
    } else {
        static constexpr std::pair<std::string_view, std::uint64_t> kUnits[] = {
            {"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}};
        for (const auto& [unit, ns] : kUnits)
            if (number.ends_with(unit) && number.size() > unit.size() &&
                detail::is_digit(number[number.size() - unit.size() - 1])) {
                number.remove_suffix(unit.size());
                scale = ns;
                break;
            }
        if (scale == 0)
            throw std::invalid_argument(fmt::format(
                "'{}' is not a time: expected a number with a unit (ns, us, ms, s), e.g. 1.5s or 200ms, "
                "or @SECONDS for a trace timestamp", text));
    }
    if (!decimal_ns(number, scale, t.ns))
        throw std::invalid_argument(fmt::format("'{}' is not a time: malformed number, below 1 ns or too large", text));
    return t;
}

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
    // Iterative matching with one backtrack point (the last '*'): linear in
    // practice, never exponential.
    std::size_t p = 0, t = 0, star = std::string_view::npos, star_t = 0;
    const auto one = [&](std::size_t& pi, char c) -> bool {
        // Matches pattern[pi] (a literal, '?' or a class) against c, moving pi past it.
        if (pattern[pi] == '?') {
            ++pi;
            return true;
        }
        if (pattern[pi] == '[') {
            std::size_t i = pi + 1;
            const bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
            if (negate) ++i;
            bool hit = false;
            bool first = true;
            while (i < pattern.size() && (first || pattern[i] != ']')) {
                first = false;
                if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
                    hit = hit || (c >= pattern[i] && c <= pattern[i + 2]);
                    i += 3;
                } else {
                    hit = hit || c == pattern[i];
                    ++i;
                }
            }
            pi = i + 1; // past ']' (check_glob made sure there is one)
            return hit != negate;
        }
        return pattern[pi++] == c;
    };
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_t = t;
            continue;
        }
        std::size_t q = p;
        if (p < pattern.size() && one(q, text[t])) {
            p = q;
            ++t;
            continue;
        }
        if (star == std::string_view::npos) return false;
        p = star + 1;
        t = ++star_t;
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

void check_glob(std::string_view pattern) {
    if (pattern.empty()) throw std::invalid_argument("empty pattern: expected a function name or a glob like tcp_*");
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '[') continue;
        std::size_t j = i + 1;
        if (j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^')) ++j;
        if (j < pattern.size()) ++j; // a ']' first is a member
        while (j < pattern.size() && pattern[j] != ']') ++j;
        if (j == pattern.size())
            throw std::invalid_argument(fmt::format("'{}': '[' at {} is never closed", pattern, i + 1));
        i = j;
    }
}

std::string describe_filter_counts(const TraceFilterCounts& c, std::string_view what) {
    std::string out = fmt::format("kept {} of {} {}", c.kept, c.kept + c.dropped(), what);
    std::vector<std::string> parts;
    if (c.dropped_by_time) parts.push_back(fmt::format("{} by --from/--to", c.dropped_by_time));
    if (c.dropped_by_cpu) parts.push_back(fmt::format("{} by --cpu", c.dropped_by_cpu));
    if (c.dropped_by_function) parts.push_back(fmt::format("{} by --function", c.dropped_by_function));
    if (!parts.empty()) out += fmt::format("; dropped {}", fmt::join(parts, ", "));
    return out;
}

namespace {

std::string cpu_list_text(const std::vector<bool>& cpus) {
    std::vector<std::string> parts;
    for (std::size_t c = 0; c < cpus.size(); ++c) {
        if (!cpus[c]) continue;
        std::size_t last = c;
        while (last + 1 < cpus.size() && cpus[last + 1]) ++last;
        parts.push_back(last == c ? fmt::format("{}", c) : fmt::format("{}-{}", c, last));
        c = last;
    }
    return fmt::format("{}", fmt::join(parts, ","));
}

std::string time_text(const TraceTime& t) {
    if (t.absolute) return fmt::format("@{}.{:09}", t.ns / 1'000'000'000, t.ns % 1'000'000'000);
    // In seconds, exactly: 1.5s, 0.2s, 0.000000001s.
    std::string frac = fmt::format("{:09}", t.ns % 1'000'000'000);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return fmt::format("{}{}{}s", t.ns / 1'000'000'000, frac.empty() ? "" : ".", frac);
}

} // namespace

std::string describe_filter(const TraceFilter& f) {
    std::vector<std::string> parts;
    if (f.cpus) parts.push_back("--cpu " + cpu_list_text(*f.cpus));
    if (f.function) parts.push_back(fmt::format("--function '{}'", *f.function));
    if (f.from) parts.push_back("--from " + time_text(*f.from));
    if (f.to) parts.push_back("--to " + time_text(*f.to));
    return fmt::format("{}", fmt::join(parts, " "));
}

nlohmann::ordered_json filter_json(const TraceFilter& f, const TraceFilterCounts& c) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (f.cpus) out["cpu"] = cpu_list_text(*f.cpus);
    if (f.function) out["function"] = *f.function;
    const auto time = [&](const char* name, const TraceTime& t) {
        out[fmt::format("{}_{}", name, t.absolute ? "timestamp_ns" : "ns")] = t.ns;
    };
    if (f.from) time("from", *f.from);
    if (f.to) time("to", *f.to);
    out["kept"] = c.kept;
    out["dropped"] = {{"time", c.dropped_by_time}, {"cpu", c.dropped_by_cpu}, {"function", c.dropped_by_function}};
    return out;
}

} // namespace timersim
