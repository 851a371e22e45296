#include "sim/report/comparison_report.hpp"

#include "sim/report/comparison_summary.hpp"
#include "sim/report/format_time.hpp"
#include "sim/report/group_report.hpp"
#include "sim/report/json.hpp"
#include "sim/report/kernel_fires_report.hpp"
#include "sim/report/percentiles.hpp"
#include "sim/report/relative_summary.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

namespace {

// The numbers every format renders (comparison_summary.hpp).
using comparison_summary::error_groups;
using comparison_summary::find;
using comparison_summary::Group;
using comparison_summary::group_of;
using comparison_summary::is_base_small;
using comparison_summary::summarize;
using comparison_summary::Summary;

// ---------------------------------------------------------------------------
// Number formatting for people.

// 1234567 -> "1,234,567"
std::string grouped(std::uint64_t v) {
    std::string digits = fmt::format("{}", v);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// 1234567 -> "1.23M"; below 10,000 the plain number.
std::string short_count(std::uint64_t v) {
    if (v < 10000) return grouped(v);
    constexpr std::array<std::pair<double, const char*>, 3> units{{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
    for (const auto& [scale, suffix] : units)
        if (static_cast<double>(v) >= scale) return fmt::format("{:.3g}{}", static_cast<double>(v) / scale, suffix);
    return grouped(v);
}

// 4831838 -> "4.61 MiB"
std::string human_bytes(std::uint64_t bytes) {
    constexpr std::array<const char*, 4> units{"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) return fmt::format("{} B", bytes);
    double v = static_cast<double>(bytes) / 1024.0;
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < units.size()) {
        v /= 1024.0;
        ++u;
    }
    return fmt::format("{:.3g} {}", v, units[u]);
}

std::string ns_time(double ns) {
    if (ns == 0) return "0";
    const std::string t = format_seconds(static_cast<long double>(std::fabs(ns)) / 1e9L);
    return ns < 0 ? "-" + t : t;
}

std::string jiffies_time(std::int64_t j, unsigned hz) {
    if (j == 0) return "0 ms";
    const std::string t = format_jiffies_as_time(static_cast<Jiffies>(j < 0 ? -j : j), hz);
    return j < 0 ? "-" + t : t;
}

// "8-12 ms", "4.1-8.2 s": both ends in the unit of the upper one.
std::string time_range(std::int64_t lo, std::int64_t hi, unsigned hz) {
    const double hi_s = static_cast<double>(hi) / hz;
    const auto [scale, unit] = hi_s < 1 ? std::pair{1e3, "ms"} : hi_s < 60 ? std::pair{1.0, "s"} : std::pair{1.0 / 60, "m"};
    return fmt::format("{:.3g}-{:.3g} {}", static_cast<double>(lo) / hz * scale, hi_s * scale, unit);
}

// "+7 j  28 ms", "0 j"
std::string error_cell(std::int64_t j, unsigned hz) {
    if (j == 0) return "0 j";
    return fmt::format("{:+} j {:>7}", j, jiffies_time(j, hz));
}

std::string slack_description(const MachineConfig& c) {
    if (!c.classic_slack) return "off";
    if (*c.classic_slack < 0) return "kernel default (delay/256)";
    return fmt::format("fixed {}", jiffies_word(static_cast<Jiffies>(*c.classic_slack)));
}

std::string geometry_description(const classic::Geometry& g) {
    return fmt::format("{}tv1 of {} slots, tv2..tv5 of {}", is_base_small(g) ? "CONFIG_BASE_SMALL: " : "",
                       g.tvr_size(), g.tvn_size());
}

// Whether `word` is a unit that must stay on the line of its number ("4 ms").
bool is_unit(std::string_view word) {
    while (!word.empty() && (word.back() == ',' || word.back() == ')' || word.back() == '.' || word.back() == ';'))
        word.remove_suffix(1);
    for (std::string_view unit : {"ns", "us", "ms", "s", "m", "h", "d", "B", "KiB", "MiB", "GiB", "jiffies", "jiffy", "%"})
        if (word == unit) return true;
    return false;
}

// Wraps a paragraph at `width` columns: the first line starts with `prefix`,
// the others with `indent`. A number and its unit stay together.
std::string wrap(std::string_view text, std::size_t width, std::string_view prefix, std::string_view indent) {
    std::string out(prefix);
    std::size_t line = prefix.size();
    bool first_word = true;
    while (!text.empty()) {
        auto space = text.find(' ');
        if (space != std::string_view::npos) {
            const auto next_end = text.find(' ', space + 1);
            const std::string_view next = text.substr(space + 1, next_end == std::string_view::npos ? text.npos : next_end - space - 1);
            if (std::isdigit(static_cast<unsigned char>(text[space - 1])) && is_unit(next)) space = next_end;
        }
        const std::string_view word = text.substr(0, space);
        text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
        if (!first_word && line + 1 + word.size() > width) {
            out += '\n';
            out += indent;
            line = indent.size();
        } else if (!first_word) {
            out += ' ';
            ++line;
        }
        out += word;
        line += word.size();
        first_word = false;
    }
    return out + "\n";
}

// ---------------------------------------------------------------------------
// Text

constexpr std::size_t kWidth = 80; // the text report's columns
constexpr int kLabelWidth = 28;
constexpr int kColumnWidth = 17;
constexpr int kCompactColumnWidth = 13; // with the kernel's column: three designs and it in 80

// The kernel's own column (a replay of a kernel trace): its fires and
// their error, as recorded.
struct KernelColumn {
    std::uint64_t fires = 0;
    ErrorHistogram error;
    std::uint64_t remote_expiries = 0;
};

struct Row {
    std::string label;                          // "" for a section heading
    std::function<std::string(const Summary&)> cell;
    std::function<std::string(const KernelColumn&)> kernel = nullptr; // null: "-" in the kernel's column
};

// The seeds' designs' rows (Varghese-Lauck counts, held garbage), only
// when one of the designs compared counts them; "-" for the others.
void add_seed_rows(std::vector<Row>& rows, const std::vector<Summary>& summaries) {
    const auto any = [&](bool DesignInfo::*what) {
        return std::any_of(summaries.begin(), summaries.end(),
                           [&](const Summary& s) { return design_info(s.design).*what; });
    };
    const auto cell = [](bool DesignInfo::*what, std::uint64_t (*f)(const Summary&)) {
        return [what, f](const Summary& s) { return design_info(s.design).*what ? grouped(f(s)) : std::string("-"); };
    };
    if (any(&DesignInfo::paper_costs)) {
        rows.push_back({"Varghese-Lauck costs", nullptr});
        rows.push_back({"  START_TIMER", cell(&DesignInfo::paper_costs, [](const Summary& s) { return s.m->counters.paper.start; })});
        rows.push_back({"  STOP_TIMER", cell(&DesignInfo::paper_costs, [](const Summary& s) { return s.m->counters.paper.stop; })});
        rows.push_back({"  PER_TICK_BOOKKEEPING", cell(&DesignInfo::paper_costs, [](const Summary& s) { return s.m->counters.paper.per_tick; })});
        rows.push_back({"  EXPIRY_PROCESSING", cell(&DesignInfo::paper_costs, [](const Summary& s) { return s.m->counters.paper.expiry; })});
    }
    if (any(&DesignInfo::holds_garbage)) {
        rows.push_back({"Cancelled entries held", nullptr});
        rows.push_back({"  peak", cell(&DesignInfo::holds_garbage, [](const Summary& s) { return s.m->counters.peak_garbage; })});
        rows.push_back({"  at end", cell(&DesignInfo::holds_garbage, [](const Summary& s) { return s.m->counters.garbage; })});
    }
}

// 6.9's pull model (modern-6.9 among the designs): the timers a migrator
// expired for idle CPUs, and the wakeups of idle CPUs by their own timers,
// of every design, so that push (modern) and pull read side by side.
void add_remote_rows(std::vector<Row>& rows, const std::vector<Summary>& summaries) {
    if (std::none_of(summaries.begin(), summaries.end(), [](const Summary& s) { return reports_remote_expiry(*s.run); }))
        return;
    rows.push_back({"Remote expiry (6.9+ pull)", nullptr});
    rows.push_back({"  remote expiries", [](const Summary& s) { return grouped(s.m->remote_expiries); },
                    [](const KernelColumn& k) { return grouped(k.remote_expiries); }});
    rows.push_back({"  idle wakeups by a timer", [](const Summary& s) { return grouped(s.m->wakeups_by_timer); }});
}

// `compact`: the error cells in jiffies only (the heading gives a jiffy's
// time), to leave room for the kernel's column in 80 columns.
std::vector<Row> table_rows(unsigned hz, const std::vector<Summary>& summaries, bool compact) {
    const auto error_text = [hz, compact](std::int64_t j) {
        return compact ? (j == 0 ? std::string("0 j") : fmt::format("{:+} j", j)) : error_cell(j, hz);
    };
    std::vector<Row> rows;
    auto heading = [&](std::string title) { rows.push_back({std::move(title), nullptr}); };
    auto count = [&](std::string label, std::uint64_t (*f)(const Summary&)) {
        rows.push_back({std::move(label), [f](const Summary& s) { return grouped(f(s)); }});
    };
    heading("Timers");
    count("  armed", [](const Summary& s) { return s.m->arms; });
    // mod_timer()'s shortcuts: 4.x returns early on an unchanged (slacked)
    // expiry, 6.1 also when the new expiry maps to the same bucket.
    count("    same-expiry shortcuts", [](const Summary& s) { return s.m->counters.same_expiry_shortcuts; });
    count("    same-bucket shortcuts", [](const Summary& s) { return s.m->counters.same_bucket_shortcuts; });
    count("    enqueues", [](const Summary& s) { return s.m->counters.enqueues; });
    count("  fired", [](const Summary& s) { return s.m->fired; });
    rows.back().kernel = [](const KernelColumn& k) { return grouped(k.fires); };
    count("  cancelled", [](const Summary& s) { return s.m->cancelled; });
    count("  pending at end", [](const Summary& s) { return s.m->pending; });
    heading(fmt::format("Precision error (1 j = {})", jiffies_time(1, hz)));
    rows.push_back({"  mean",
                    [](const Summary& s) {
                        return s.fired() ? fmt::format("{:+.3f} j", s.m->error_jiffies.mean()) : std::string("n/a");
                    },
                    [](const KernelColumn& k) {
                        return k.error.empty() ? std::string("n/a") : fmt::format("{:+.3f} j", k.error.mean());
                    }});
    for (double p : kPercentiles)
        rows.push_back({"  " + percentile_name(p),
                        [p, error_text](const Summary& s) {
                            return s.fired() ? error_text(s.error(p)) : std::string("n/a");
                        },
                        [p, error_text](const KernelColumn& k) {
                            return k.error.empty() ? std::string("n/a") : error_text(k.error.percentile(p));
                        }});
    count("  fired early", [](const Summary& s) { return s.m->early; });
    rows.back().kernel = [](const KernelColumn& k) { return grouped(k.error.count_below(0)); };
    rows.push_back({"  max, in time incl. delays", [](const Summary& s) {
                        return s.fired() ? ns_time(static_cast<double>(s.m->error_ns.max())) : std::string("n/a");
                    }});
    heading("Cascades");
    count("  timers moved", [](const Summary& s) { return s.m->counters.cascade_moves; });
    count("  most in one softirq", [](const Summary& s) { return s.m->max_cascade_moves_per_softirq; });
    heading("Softirq cost per tick");
    rows.push_back({"  mean", [](const Summary& s) { return ns_time(s.softirq_mean_per_tick_ns); }});
    rows.push_back({"  p99", [](const Summary& s) { return ns_time(static_cast<double>(s.softirq_p99_per_tick_ns)); }});
    rows.push_back({"  max stall (longest run)", [](const Summary& s) {
                        return s.softirq_runs ? ns_time(static_cast<double>(s.max_stall_ns)) : std::string("n/a");
                    }});
    count("  runs", [](const Summary& s) { return s.softirq_runs; });
    count("  most expiries in one run", [](const Summary& s) { return s.m->max_expired_per_softirq; });
    heading("Timer CPU time");
    rows.push_back({"  total", [](const Summary& s) { return ns_time(static_cast<double>(s.m->timer_work_ns())); }});
    rows.push_back({"  in the softirq", [](const Summary& s) { return ns_time(static_cast<double>(s.m->softirq_work_ns)); }});
    rows.push_back({"  of which cascades", [](const Summary& s) { return ns_time(static_cast<double>(s.cascade_ns)); }});
    rows.push_back({"  share of the CPU", [](const Summary& s) { return fmt::format("{:.3f} %", s.cpu_share); }});
    heading("Memory");
    count("  bytes per timer", [](const Summary& s) { return static_cast<std::uint64_t>(s.run->bytes_per_timer); });
    count("  peak pending timers", [](const Summary& s) { return s.peak_pending; });
    rows.push_back({"  at the peak", [](const Summary& s) { return human_bytes(s.peak_bytes); }});
    add_remote_rows(rows, summaries);
    add_seed_rows(rows, summaries);
    return rows;
}

// The header's lines: workload, machine, costs, and the classic wheel's slack
// and geometry when the classic wheel is among the designs (`with_classic`).
std::string header_text(const RunResult& r, bool with_classic) {
    const MachineConfig& c = r.config;
    const CostModel& k = c.costs;
    std::string out = fmt::format("timersim compare: {}, {:g} s at HZ={} on {} CPU{}\n", r.workload_name,
                                  static_cast<double>(c.ticks) / c.hz, c.hz, c.cpus, c.cpus == 1 ? "" : "s");
    constexpr std::string_view indent = "            ";
    {
        // A trace's filter and costs come as further lines (indented ones
        // belong to the line before): each its own paragraph.
        std::string_view desc = r.workload_description;
        std::size_t nl = desc.find('\n');
        out += wrap(desc.substr(0, nl), kWidth, "  workload  ", indent);
        while (nl != std::string_view::npos) {
            desc.remove_prefix(nl + 1);
            nl = desc.find('\n');
            std::string_view line = desc.substr(0, nl);
            const bool sub = line.starts_with(' ');
            while (line.starts_with(' ')) line.remove_prefix(1);
            const std::string deeper = std::string(indent) + (sub ? "  " : "");
            out += wrap(line, kWidth, deeper, deeper + "  ");
        }
    }
    out += wrap(fmt::format("{} ticks, {}{}, ksoftirqd delay {}, tick jitter {}, {}", grouped(c.ticks),
                       c.numa_nodes > 1 ? fmt::format("{} NUMA nodes, ", c.numa_nodes) : std::string(),
                       c.recorded ? "timer softirq as recorded" : c.nohz_idle ? "NOHZ idle" : "tick always on",
                       ns_time(static_cast<double>(c.ksoftirqd_delay_ns)),
                       c.tick_jitter_ns ? ns_time(static_cast<double>(c.tick_jitter_ns)) : "none",
                       c.max_expiries_per_softirq
                           ? fmt::format("at most {} expiries per softirq run", c.max_expiries_per_softirq)
                           : "no bound on expiries per softirq run"),
                kWidth, "  machine   ", indent);
    if (k == CostModel::zero()) {
        out += "  costs     none (--zero-cost): timer work takes no simulated time\n";
    } else {
        out += wrap(fmt::format("ns: enqueue {}, dequeue {}, cascade move {}, bucket scan {}, expiry {}, "
                                "callback {}, next-expiry step {}, softirq entry {}",
                                k.enqueue_ns, k.dequeue_ns, k.cascade_move_ns, k.bucket_scan_ns, k.expiry_ns,
                                k.callback_ns, k.next_expiry_step_ns, k.softirq_entry_ns),
                    kWidth, "  costs     ", indent);
    }
    if (with_classic)
        out += wrap(fmt::format("slack {}, {}", slack_description(c), geometry_description(c.classic_geometry)),
                    kWidth, "  classic   ", indent);
    return out;
}

std::string histogram_text(const std::vector<Summary>& summaries, unsigned hz) {
    std::int64_t max_error = 0;
    for (const Summary& s : summaries) max_error = std::max(max_error, s.m->error_jiffies.max());
    const auto groups = error_groups(max_error);
    std::vector<std::vector<std::uint64_t>> counts;
    std::size_t first = groups.size();
    std::size_t last = 0;
    for (const Summary& s : summaries) {
        std::vector<std::uint64_t> c(groups.size(), 0);
        for (const auto& [value, n] : s.m->error_jiffies.counts()) c[group_of(value)] += n;
        for (std::size_t g = 0; g < c.size(); ++g)
            if (c[g]) {
                first = std::min(first, g);
                last = std::max(last, g);
            }
        counts.push_back(std::move(c));
    }
    std::string out = "\nPrecision error histogram (share of each design's fired timers)\n";
    if (first > last) return out + "  (no timer fired)\n";
    first = std::min<std::size_t>(first, 1); // always show the exact bin
    constexpr int kBar = 30;
    for (std::size_t i = 0; i < summaries.size(); ++i) {
        const Summary& s = summaries[i];
        out += fmt::format("\n{} ({} fired)\n", s.name, grouped(s.m->fired));
        for (std::size_t g = first; g <= last; ++g) {
            const Group& gr = groups[g];
            std::string jl;
            std::string ml;
            if (gr.lo == INT64_MIN) {
                jl = "early";
                ml = "";
            } else if (gr.lo == gr.hi) {
                jl = fmt::format("{} j", gr.lo);
                ml = jiffies_time(gr.lo, hz);
            } else {
                jl = fmt::format("{}-{} j", gr.lo, gr.hi);
                ml = time_range(gr.lo, gr.hi, hz);
            }
            const std::uint64_t n = counts[i][g];
            const double share = s.m->fired ? static_cast<double>(n) / static_cast<double>(s.m->fired) : 0;
            // Round up so that a non-empty bin always shows.
            const auto bar = static_cast<std::size_t>(n ? std::max(1.0, std::round(share * kBar)) : 0);
            out += fmt::format("  {:>11} {:>15} |{:<{}}| {:6.2f}% {:>9}\n", jl, ml, std::string(bar, '#'), kBar,
                               share * 100, grouped(n));
        }
    }
    return out;
}

} // namespace

std::string comparison_verdict(const Comparison& comparison) {
    const auto summaries = summarize(comparison);
    if (summaries.empty()) return "";
    const unsigned hz = summaries.front().hz;
    std::vector<std::string> parts;
    for (const Summary& s : summaries) {
        const std::int64_t p99 = s.error(99);
        if (!s.fired()) {
            parts.push_back(fmt::format("{}: no timer fired, {} cascade moves, longest softirq {}, timer CPU time {}",
                                        s.name, short_count(s.m->counters.cascade_moves),
                                        s.softirq_runs ? ns_time(static_cast<double>(s.max_stall_ns)) : "n/a",
                                        ns_time(static_cast<double>(s.m->timer_work_ns()))));
            continue;
        }
        parts.push_back(fmt::format("{}: {} cascade moves, p99 error {:+} jiffies ({}), max {:+} ({}), "
                                    "longest softirq {}, timer CPU time {}",
                                    s.name, short_count(s.m->counters.cascade_moves), p99,
                                    jiffies_time(p99, hz), s.error(100), jiffies_time(s.error(100), hz),
                                    ns_time(static_cast<double>(s.max_stall_ns)),
                                    ns_time(static_cast<double>(s.m->timer_work_ns()))));
    }
    std::string out = fmt::format("{}.", fmt::join(parts, "; "));
    const Summary* classic = find(summaries, Design::classic);
    const Summary* modern = find(summaries, Design::modern);
    const Summary* heap = find(summaries, Design::heap);
    if (classic && modern) {
        const std::int64_t diff = modern->error(99) - classic->error(99);
        const std::string precision =
            !modern->fired() || !classic->fired() ? "cannot be compared on p99 error (no timer fired)"
            : diff == 0 ? "has the same p99 error"
                      : fmt::format("fires p99 {} jiffies ({}) {}", diff < 0 ? -diff : diff,
                                    jiffies_time(diff < 0 ? -diff : diff, hz), diff > 0 ? "later" : "earlier");
        const std::uint64_t moves = classic->m->counters.cascade_moves;
        if (moves > 0) {
            out += fmt::format(
                " Trade-off: the classic wheel moved {} timers in cascades ({:.3g} per fired timer, {} of CPU time, "
                "up to {} in one softirq); the modern wheel moved {} and {}.",
                short_count(moves), static_cast<double>(moves) / static_cast<double>(std::max<std::uint64_t>(1, classic->m->fired)),
                ns_time(static_cast<double>(classic->cascade_ns)), grouped(classic->m->max_cascade_moves_per_softirq),
                modern->m->counters.cascade_moves == 0 ? std::string("none")
                                                       : short_count(modern->m->counters.cascade_moves),
                precision);
        } else if (!classic->fired() && !modern->fired()) {
            out += " Trade-off: nothing fired and nothing was cascaded, so this run shows none.";
        } else {
            out += fmt::format(
                " Trade-off: no timer of this run stayed long enough in the classic wheel's outer arrays to be "
                "cascaded, so the classic wheel paid nothing for its precision here; the modern wheel {}.",
                precision);
        }
    }
    if (heap && (classic || modern)) {
        const Summary* wheel = modern ? modern : classic;
        const std::string error =
            !heap->fired() ? std::string("fired no timer")
            : heap->m->error_jiffies.min() == 0 && heap->error(100) == 0
                ? std::string("fired every timer on the jiffy it asked for")
            : heap->m->error_jiffies.min() == heap->error(100)
                ? fmt::format("fired every timer {:+} jiffies from its request", heap->error(100))
                : fmt::format("fired its timers {:+}..{:+} jiffies from their requests", heap->m->error_jiffies.min(),
                              heap->error(100));
        out += fmt::format(" The heap {} at {} bytes per timer ({} for the {} wheel) and {} of timer CPU time "
                           "(the {} wheel: {}).",
                           error, heap->run->bytes_per_timer, wheel->run->bytes_per_timer, wheel->name,
                           ns_time(static_cast<double>(heap->m->timer_work_ns())), wheel->name,
                           ns_time(static_cast<double>(wheel->m->timer_work_ns())));
    }
    return out;
}

// A trace longer than the run: what was left out, said once (per design
// when callback events make the designs differ).
std::string past_end_text(const Comparison& comparison) {
    const auto& runs = comparison.runs;
    const auto past = [](const RunResult& r) { return r.operations_past_end; };
    if (std::all_of(runs.begin(), runs.end(), [&](const RunResult& r) { return past(r) == 0; })) return "";
    if (std::all_of(runs.begin(), runs.end(), [&](const RunResult& r) { return past(r) == past(runs.front()); }))
        return wrap(fmt::format("{} operations past the end of the run were not simulated", grouped(past(runs.front()))),
                    kWidth, "  note      ", "            ");
    std::vector<std::string> parts;
    for (const RunResult& r : runs) parts.push_back(fmt::format("{} {}", design_name(r), grouped(past(r))));
    return wrap(fmt::format("operations past the end of the run, not simulated: {}", fmt::join(parts, ", ")), kWidth,
                "  note      ", "            ");
}

// A replay of a kernel trace: how far each design's replay gives back the
// fires the kernel recorded (the recording kernel's own design should give
// them all back; the others differ by themselves).
std::string kernel_fires_notes(const Comparison& comparison) {
    std::vector<std::string> parts;
    const FireAgreement* any = nullptr;
    for (const RunResult& r : comparison.runs) {
        if (!r.kernel_fires) continue;
        const FireAgreement& a = *r.kernel_fires;
        any = &a;
        parts.push_back(fmt::format("{} {} of its {} ({:.1f}% of the kernel's, {:.1f}% of its own)", design_name(r),
                                    grouped(a.same_jiffy_cpu), grouped(a.replay_fires), a.recall() * 100.0,
                                    a.precision() * 100.0));
    }
    if (!any) return "";
    std::string text = fmt::format("the kernel recorded {} fires{}; each replay's fires on the same jiffy and CPU: {}",
                                   grouped(any->kernel_fires),
                                   any->kernel_fires_unreplayable
                                       ? fmt::format(" (and {} of timers no replayed event arms)",
                                                     grouped(any->kernel_fires_unreplayable))
                                       : std::string(),
                                   fmt::join(parts, ", "));
    std::string out = wrap(text, kWidth, "  kernel    ", "            ");
    if (!any->unmodelled_kernel.empty()) out += wrap(any->unmodelled_kernel, kWidth, "            ", "            ");
    if (!any->remote_inference.empty()) out += wrap(any->remote_inference, kWidth, "            ", "            ");
    if (!any->lost_history_unclassed.empty())
        out += wrap(any->lost_history_unclassed, kWidth, "            ", "            ");
    if (any->lost_history.any()) {
        std::vector<std::string> per_replay;
        for (const RunResult& r : comparison.runs)
            if (r.kernel_fires)
                per_replay.push_back(fmt::format("{} {}", design_name(r), grouped(r.kernel_fires->lost_history.replay_fires)));
        out += wrap(lost_history_text(*any, fmt::format("of each replay's: {}", fmt::join(per_replay, ", "))), kWidth,
                    "            ", "            ");
    }
    return out + wrap(kernel_as_recorded_text(*any), kWidth, "            ", "            ");
}

std::string format_comparison_text(const Comparison& comparison, std::size_t group_rows) {
    if (comparison.runs.empty()) return "";
    const auto summaries = summarize(comparison);
    const RunResult& first = comparison.runs.front();
    const unsigned hz = first.config.hz;
    const bool with_classic = std::any_of(comparison.runs.begin(), comparison.runs.end(),
                                          [](const RunResult& r) { return r.design == Design::classic; });
    std::string out = header_text(first, with_classic) + past_end_text(comparison) + kernel_fires_notes(comparison) + "\n";
    // A design's column fits its name (a wheel's spec may be longer). A
    // kernel trace's replay adds the kernel's own, as recorded, last.
    std::optional<KernelColumn> kernel;
    if (first.kernel_fires)
        kernel = KernelColumn{first.kernel_fires->kernel_fires_total, kernel_error_histogram(*first.kernel_fires),
                              first.kernel_fires->kernel_remote_expiries};
    const int width = kernel ? kCompactColumnWidth : kColumnWidth;
    std::vector<std::size_t> column;
    for (const Summary& s : summaries) column.push_back(std::max<std::size_t>(width, s.name.size() + 1));
    out += fmt::format("{:<{}}", "", kLabelWidth);
    for (std::size_t i = 0; i < summaries.size(); ++i) out += fmt::format("{:>{}}", summaries[i].name, column[i]);
    if (kernel) out += fmt::format("{:>{}}", "kernel", width);
    out += '\n';
    for (const Row& row : table_rows(hz, summaries, kernel.has_value())) {
        if (!row.cell) {
            out += row.label + '\n';
            continue;
        }
        out += fmt::format("{:<{}}", row.label, kLabelWidth);
        for (std::size_t i = 0; i < summaries.size(); ++i)
            out += fmt::format("{:>{}}", row.cell(summaries[i]), column[i]);
        if (kernel) out += fmt::format("{:>{}}", row.kernel ? row.kernel(*kernel) : std::string("-"), width);
        out += '\n';
    }
    if (kernel)
        out += "(kernel: its timer_expire_entry lines as recorded; error over the fires whose\n"
               " timer_start the trace shows)\n";
    out += "(per tick: every tick of every CPU, 0 when no timer softirq ran; max in time:\n"
           " fire time minus the requested jiffy's tick, with softirq and ksoftirqd delays)\n";
    if (std::any_of(summaries.begin(), summaries.end(), [](const Summary& s) { return s.work_beyond_span; }))
        out += wrap("share of the CPU: the timer work needed more CPU time than the run spans, as arm/cancel "
                    "work is accounted but takes no simulated time; such a CPU counts as busy with timers for "
                    "all of its work, so the share is at most 100 %)",
                    kWidth, "(", " ");
    out += histogram_text(summaries, hz);
    for (const RunResult& r : comparison.runs)
        out += "\n" + group_table_text(r.groups, group_rows, fmt::format(", {}", design_name(r)));
    out += relative_summary_text(comparison);
    out += "\n" + wrap(comparison_verdict(comparison), kWidth, "Verdict: ", "");
    return out;
}

std::string format_comparison_csv(const Comparison& comparison) {
    std::string out = "design,metric,value\n";
    const bool remote = std::any_of(comparison.runs.begin(), comparison.runs.end(), reports_remote_expiry);
    for (const Summary& s : summarize(comparison)) {
        const CpuMetrics& m = *s.m;
        const std::string& name = s.name;
        auto row = [&](std::string_view metric, auto value) { out += fmt::format("{},{},{}\n", name, metric, value); };
        // A statistic of no samples: an empty value (n/a), not 0.
        const bool f = m.fired > 0;
        auto stat = [&](std::string_view metric, auto value) {
            out += f ? fmt::format("{},{},{}\n", name, metric, value) : fmt::format("{},{},\n", name, metric);
        };
        row("arms", m.arms);
        row("same_expiry_shortcuts", m.counters.same_expiry_shortcuts);
        row("same_bucket_shortcuts", m.counters.same_bucket_shortcuts);
        row("enqueues", m.counters.enqueues);
        row("fired", m.fired);
        row("cancelled", m.cancelled);
        row("pending_at_end", m.pending);
        row("early", m.early);
        stat("error_mean_jiffies", json_number(m.error_jiffies.mean()));
        stat("error_min_jiffies", m.error_jiffies.min());
        for (double p : kPercentiles) stat("error_" + percentile_name(p) + "_jiffies", s.error(p));
        for (double p : kPercentiles)
            stat("error_" + percentile_name(p) + "_ms", json_number(static_cast<double>(s.error(p)) * 1000.0 / s.hz));
        stat("error_max_ns", m.error_ns.max());
        row("cascade_moves", m.counters.cascade_moves);
        row("max_cascade_moves_per_softirq", m.max_cascade_moves_per_softirq);
        row("softirq_runs", s.softirq_runs);
        row("softirq_per_tick_mean_ns", json_number(s.softirq_mean_per_tick_ns));
        row("softirq_per_tick_p99_ns", s.softirq_p99_per_tick_ns);
        if (s.softirq_runs)
            row("softirq_max_stall_ns", s.max_stall_ns);
        else
            row("softirq_max_stall_ns", "");
        row("max_expired_per_softirq", m.max_expired_per_softirq);
        row("timer_work_ns", m.timer_work_ns());
        row("softirq_work_ns", m.softirq_work_ns);
        row("task_work_ns", m.task_work_ns);
        row("cascade_work_ns", s.cascade_ns);
        row("cpu_share_percent", json_number(s.cpu_share));
        row("bytes_per_timer", s.run->bytes_per_timer);
        row("peak_pending", s.peak_pending);
        row("peak_bytes", s.peak_bytes);
        if (remote) {
            row("remote_expiries", m.remote_expiries);
            row("wakeups_by_timer", m.wakeups_by_timer);
        }
        const DesignInfo& info = design_info(s.design);
        if (info.paper_costs) {
            row("paper_start", m.counters.paper.start);
            row("paper_stop", m.counters.paper.stop);
            row("paper_per_tick", m.counters.paper.per_tick);
            row("paper_expiry", m.counters.paper.expiry);
            row("list_steps", m.counters.list_steps);
        }
        if (info.holds_garbage) {
            row("garbage_peak", m.counters.peak_garbage);
            row("garbage_at_end", m.counters.garbage);
        }
        out += kernel_fires_csv_rows(name, *s.run);
    }
    if (const auto& k = comparison.runs.empty() ? std::nullopt : comparison.runs.front().kernel_fires)
        out += kernel_column_csv_rows(*k);
    return out;
}

} // namespace timersim
