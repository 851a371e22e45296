#include "sim/comparison_report.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

namespace timersim {

namespace {

constexpr std::array<double, 5> kPercentiles{50, 90, 99, 99.9, 100};

std::string percentile_name(double p) {
    if (p == 100) return "max";
    return fmt::format("p{}", p);
}

std::string slack_description(const ComparisonConfig& c) {
    if (!c.classic_slack) return "off";
    if (*c.classic_slack < 0) return "kernel default (delay/256)";
    return fmt::format("fixed {} jiffies", *c.classic_slack);
}

double ms(std::int64_t jiffies, unsigned hz) { return static_cast<double>(jiffies) * 1000.0 / hz; }

// One named metric, evaluated per design.
struct Metric {
    std::string_view name;
    std::function<std::string(const DesignResult&)> value;
};

std::vector<Metric> metrics(unsigned hz) {
    auto u = [](auto f) { return [f](const DesignResult& d) { return fmt::format("{}", f(d)); }; };
    std::vector<Metric> m{
        {"timers armed", u([](const DesignResult& d) { return d.arms; })},
        {"  same-expiry shortcuts", u([](const DesignResult& d) { return d.counters.same_expiry_shortcuts; })},
        {"  same-bucket shortcuts", u([](const DesignResult& d) { return d.counters.same_bucket_shortcuts; })},
        {"  enqueues", u([](const DesignResult& d) { return d.counters.enqueues; })},
        {"timers fired", u([](const DesignResult& d) { return d.error_jiffies.total(); })},
        {"still pending at end", u([](const DesignResult& d) { return d.pending_at_end; })},
        {"error, jiffies: mean",
         [](const DesignResult& d) { return fmt::format("{:.3f}", d.error_jiffies.mean()); }},
    };
    for (double p : kPercentiles)
        m.push_back({"", [p](const DesignResult& d) { return fmt::format("{}", d.error_jiffies.percentile(p)); }});
    m.push_back({"early firings", u([](const DesignResult& d) { return d.error_jiffies.count_below(0); })});
    m.push_back({"error p99, ms", [hz](const DesignResult& d) {
                     return fmt::format("{:.1f}", ms(d.error_jiffies.percentile(99), hz));
                 }});
    m.push_back({"error max, ms", [hz](const DesignResult& d) {
                     return fmt::format("{:.1f}", ms(d.error_jiffies.max(), hz));
                 }});
    m.push_back({"cascade moves", u([](const DesignResult& d) { return d.counters.cascade_moves; })});
    m.push_back({"  max in one tick", u([](const DesignResult& d) { return d.max_cascade_moves_per_tick; })});
    m.push_back({"softirq runs", u([](const DesignResult& d) { return d.ticks_with_softirq; })});
    m.push_back({"  with nothing due", u([](const DesignResult& d) { return d.counters.empty_runs; })});
    m.push_back({"max expiries in one tick", u([](const DesignResult& d) { return d.max_expired_per_tick; })});
    m.push_back({"buckets scanned", u([](const DesignResult& d) { return d.counters.buckets_scanned; })});
    m.push_back({"peak pending", u([](const DesignResult& d) { return d.counters.peak_pending; })});
    m.push_back({"bytes per timer", u([](const DesignResult& d) { return d.bytes_per_timer; })});
    return m;
}

// Log2 groups of lateness: early, 0, 1, 2-3, 4-7, ...
struct Group {
    std::string label;
    std::uint64_t count;
};

std::vector<Group> group_errors(const ErrorHistogram& h, std::int64_t max_error) {
    std::vector<Group> groups{{"early", 0}, {"0", 0}};
    for (std::int64_t lo = 1; lo <= std::max<std::int64_t>(max_error, 1); lo *= 2)
        groups.push_back({lo == 1 ? "1" : fmt::format("{}-{}", lo, 2 * lo - 1), 0});
    for (const auto& [value, count] : h.counts()) {
        std::size_t g = 0;
        if (value == 0) g = 1;
        else if (value > 0) g = 2 + static_cast<std::size_t>(63 - __builtin_clzll(static_cast<std::uint64_t>(value)));
        groups[g].count += count;
    }
    return groups;
}

std::string histograms(const ComparisonResult& r) {
    std::int64_t max_error = 0;
    for (const auto& d : r.designs) max_error = std::max(max_error, d.error_jiffies.max());
    std::string out = "\nPrecision error histogram (jiffies late; bar = share of that design's fired timers)\n";
    constexpr int width = 40;
    for (const auto& d : r.designs) {
        out += fmt::format("\n{}\n", to_string(d.design));
        const auto groups = group_errors(d.error_jiffies, max_error);
        std::size_t last = groups.size();
        while (last > 2 && groups[last - 1].count == 0) --last;
        for (std::size_t i = (groups[0].count ? 0 : 1); i < last; ++i) {
            const double share = d.error_jiffies.empty()
                                     ? 0
                                     : static_cast<double>(groups[i].count) /
                                           static_cast<double>(d.error_jiffies.total());
            const int bar = static_cast<int>(share * width + 0.5);
            out += fmt::format("  {:>13} | {:<{}} {:6.2f}%  {}\n", groups[i].label,
                               std::string(static_cast<std::size_t>(bar), '#'), width, share * 100,
                               groups[i].count);
        }
    }
    return out;
}

const DesignResult* find(const ComparisonResult& r, Design d) {
    for (const auto& x : r.designs)
        if (x.design == d) return &x;
    return nullptr;
}

std::string verdict(const ComparisonResult& r) {
    const unsigned hz = r.config.workload.hz;
    std::vector<std::string> parts;
    for (const auto& d : r.designs) {
        const auto p99 = d.error_jiffies.percentile(99);
        std::string s = fmt::format("{}: {} cascade moves, p99 error {:+} jiffies ({:.1f} ms), max {:+}",
                                    to_string(d.design), d.counters.cascade_moves, p99, ms(p99, hz),
                                    d.error_jiffies.max());
        if (d.counters.empty_runs) s += fmt::format(", {} spurious softirqs", d.counters.empty_runs);
        parts.push_back(std::move(s));
    }
    std::string out = "\nVerdict: " + fmt::format("{}", fmt::join(parts, "; ")) + ".";
    const auto* c = find(r, Design::classic);
    const auto* m = find(r, Design::modern);
    if (c && m && c->error_jiffies.total() > 0) {
        out += fmt::format(
            " The classic wheel pays {:.2f} cascade moves per fired timer to stay exact (slack aside); "
            "the modern wheel moves nothing and instead fires up to {} jiffies late.",
            static_cast<double>(c->counters.cascade_moves) / static_cast<double>(c->error_jiffies.total()),
            m->error_jiffies.max());
    }
    return out + "\n";
}

} // namespace

std::string format_comparison_text(const ComparisonResult& r) {
    const auto& w = r.config.workload;
    std::string out = fmt::format(
        "timersim compare: connection churn, {} connections, a message every {} ms (x0.1..x100 per connection), "
        "{} s at HZ={} ({} ticks), seed {}\n"
        "timer kinds: 40% retransmit (RTO 200 ms..1 s), 30% delayed ACK (40 ms), 30% idle (60 s); "
        "classic slack: {}\n\n",
        w.connections, w.message_interval_ms, r.config.duration_s, w.hz, r.ticks, w.seed,
        slack_description(r.config));
    constexpr int name_width = 28;
    constexpr int col = 14;
    out += fmt::format("{:<{}}", "", name_width);
    for (const auto& d : r.designs) out += fmt::format("{:>{}}", to_string(d.design), col);
    out += '\n';
    std::size_t pct = 0;
    for (const auto& metric : metrics(w.hz)) {
        std::string name(metric.name);
        if (name.empty()) name = "  " + percentile_name(kPercentiles[pct++]);
        out += fmt::format("{:<{}}", name, name_width);
        for (const auto& d : r.designs) out += fmt::format("{:>{}}", metric.value(d), col);
        out += '\n';
    }
    out += histograms(r);
    out += verdict(r);
    return out;
}

std::string format_comparison_json(const ComparisonResult& r) {
    const auto& w = r.config.workload;
    std::string out = "{\n";
    out += fmt::format("  \"schema\": \"timersim.compare.v1\",\n");
    out += fmt::format(
        "  \"workload\": {{\"name\": \"connection-churn\", \"connections\": {}, \"message_interval_ms\": {}, "
        "\"duration_s\": {}, \"hz\": {}, \"ticks\": {}, \"start_jiffies\": {}, \"seed\": {}}},\n",
        w.connections, w.message_interval_ms, r.config.duration_s, w.hz, r.ticks, r.start_jiffies, w.seed);
    out += fmt::format("  \"classic_slack\": {},\n",
                       r.config.classic_slack ? fmt::format("{}", *r.config.classic_slack) : "null");
    out += "  \"designs\": [\n";
    for (std::size_t i = 0; i < r.designs.size(); ++i) {
        const auto& d = r.designs[i];
        const auto& c = d.counters;
        out += fmt::format("    {{\n      \"name\": \"{}\",\n", to_string(d.design));
        out += fmt::format("      \"arms\": {}, \"fired\": {}, \"pending_at_end\": {}, \"bytes_per_timer\": {},\n",
                           d.arms, d.error_jiffies.total(), d.pending_at_end, d.bytes_per_timer);
        out += fmt::format("      \"error_jiffies\": {{\"mean\": {:.6f}, \"min\": {}", d.error_jiffies.mean(),
                           d.error_jiffies.min());
        for (double p : kPercentiles)
            out += fmt::format(", \"{}\": {}", percentile_name(p), d.error_jiffies.percentile(p));
        out += fmt::format(", \"early\": {}}},\n", d.error_jiffies.count_below(0));
        std::vector<std::string> bins;
        for (const auto& [value, count] : d.error_jiffies.counts()) bins.push_back(fmt::format("[{}, {}]", value, count));
        out += fmt::format("      \"error_histogram\": [{}],\n", fmt::join(bins, ", "));
        out += fmt::format(
            "      \"counters\": {{\"enqueues\": {}, \"same_expiry_shortcuts\": {}, \"same_bucket_shortcuts\": {}, "
            "\"cancels\": {}, \"expired\": {}, \"cascade_moves\": {}, \"cascades\": {}, \"buckets_scanned\": {}, "
            "\"jiffies_walked\": {}, \"softirq_runs\": {}, \"empty_runs\": {}, \"next_expiry_searches\": {}, "
            "\"peak_pending\": {}}},\n",
            c.enqueues, c.same_expiry_shortcuts, c.same_bucket_shortcuts, c.cancels, c.expired, c.cascade_moves,
            c.cascades, c.buckets_scanned, c.jiffies_walked, c.softirq_runs, c.empty_runs, c.next_expiry_searches,
            c.peak_pending);
        out += fmt::format("      \"max_expired_per_tick\": {}, \"max_cascade_moves_per_tick\": {}\n",
                           d.max_expired_per_tick, d.max_cascade_moves_per_tick);
        out += i + 1 < r.designs.size() ? "    },\n" : "    }\n";
    }
    out += "  ]\n}\n";
    return out;
}

std::string format_comparison_csv(const ComparisonResult& r) {
    std::string out = "design,metric,value\n";
    for (const auto& d : r.designs) {
        const auto name = to_string(d.design);
        auto row = [&](std::string_view metric, auto value) { out += fmt::format("{},{},{}\n", name, metric, value); };
        row("arms", d.arms);
        row("fired", d.error_jiffies.total());
        row("pending_at_end", d.pending_at_end);
        row("error_mean_jiffies", fmt::format("{:.6f}", d.error_jiffies.mean()));
        for (double p : kPercentiles) row("error_" + percentile_name(p) + "_jiffies", d.error_jiffies.percentile(p));
        row("early", d.error_jiffies.count_below(0));
        row("cascade_moves", d.counters.cascade_moves);
        row("max_cascade_moves_per_tick", d.max_cascade_moves_per_tick);
        row("softirq_runs", d.ticks_with_softirq);
        row("empty_runs", d.counters.empty_runs);
        row("max_expired_per_tick", d.max_expired_per_tick);
        row("buckets_scanned", d.counters.buckets_scanned);
        row("peak_pending", d.counters.peak_pending);
        row("bytes_per_timer", d.bytes_per_timer);
    }
    return out;
}

} // namespace timersim
