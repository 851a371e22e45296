#include "sim/report/validate_report.hpp"

#include "sim/report/json.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

namespace timersim {

std::string agreement_line(const ReplayResult& r) {
    std::string line = fmt::format("agreement: idx {}/{}, expiry {}/{}", r.idx.agree, r.idx.agree + r.idx.disagree,
                                   r.expiry.agree, r.expiry.agree + r.expiry.disagree);
    // The checks of resynchronised stretches, by class: they count in the
    // verdict too.
    const auto resynced = [](const ReplayCheckCounts& c) { return c.resynced_agree + c.resynced_disagree; };
    if (resynced(r.idx) + resynced(r.expiry) > 0)
        line += fmt::format("; resynchronised: idx {}/{}, expiry {}/{}", r.idx.resynced_agree, resynced(r.idx),
                            r.expiry.resynced_agree, resynced(r.expiry));
    return line;
}

namespace {

std::string percent(const ReplayCheckCounts& c) {
    return fmt::format("{:.3f}%", 100.0 * c.agreement());
}

} // namespace

std::string format_validate_text(const ReplayResult& r, std::size_t max_listed) {
    std::string out = fmt::format("{}: {} timer events, {} timers, {} CPUs, hz={}", r.file, r.timer_events, r.timers,
                                  r.cpus, r.hz);
    // Said when the user did not give it or overrode the trace: HZ decides
    // every check, and the trace's own line needs no comment.
    if (r.hz_source == "the trace's jiffies" || r.hz_source == "--hz (forced)")
        out += fmt::format(" (from {})", r.hz_source);
    // The kernel decides which wheel is checked: said where it came from
    // unless the trace's header names it.
    out += fmt::format(", kernel {}", r.kernel.range.describe());
    if (!r.kernel.source.starts_with("the trace's")) out += fmt::format(" (from {})", r.kernel.source);
    if (r.workload_start_line)
        out += fmt::format("; workload starts at line {} (before it: boot, possibly incomplete)\n",
                           *r.workload_start_line);
    else
        out += "; no workload start marker\n";
    if (r.filter.active())
        out += fmt::format("filter {}: {}\n", describe_filter(r.filter), describe_filter_counts(r.filter_counts, "timer events"));
    if (r.timer_events == 0) out += "no timer_* events: nothing to validate\n";
    if (r.flags_garbled)
        out += "warning: every timer_start has flags D|P|I, as libtraceevent 1.7 (trace-cmd report, perf script) "
               "misprints 6.1's: which timers are deferrable is unknown, and expiries of the two bases disagree; "
               "validate the trace.dat or /sys/kernel/tracing/trace text instead\n";
    if (r.kernel_6_9)
        out += "a 6.9 or later kernel: replayed with three bases per CPU (local, global, deferrable) and the remote "
               "expiry of idle CPUs' global timers\n";
    if (r.kernel_classic)
        out += fmt::format("a kernel before 4.8: replayed on the classic wheel (tv1..tv5, cascades; slots run {} first), "
                           "expires as printed (its slack applied); its timer_start shows no idx: expiries checked, "
                           "timer_starts counted; {} agreeing expiries came down from tv2..tv5 by cascades\n",
                           r.classic_oldest_first ? "oldest" : "newest", r.cascaded_agree);
    if (r.remote_inferred)
        out += fmt::format("remote expiries inferred: the trace has no timer_migration events; {} expiries of another "
                           "CPU's global timers taken as {} remote runs\n",
                           r.remote_inferred->expiries, r.remote_inferred->runs);
    out += fmt::format("replay: {} softirq runs of our model (+{} empty catch-up runs), {} requeues (cancel+start), "
                       "{} deletes, {} migrations\n",
                       r.model_softirq_runs, r.empty_softirq_runs, r.kernel_requeues, r.kernel_deletes, r.migrations);
    const auto check_line = [&](std::string_view name, const ReplayCheckCounts& c) {
        out += fmt::format("{:<30} {:>5} events: {:>5} agree, {} disagree, {} unknown history ({}", name, c.events,
                           c.agree, c.disagree, c.unknown, percent(c));
        if (r.workload_start_line) out += fmt::format("; in boot {}/{} agree", c.boot_agree, c.boot_events);
        out += ")\n";
    };
    if (r.kernel_classic)
        out += fmt::format("{:<30} {:>5} events: not checked (no idx= before 4.11)\n", "idx (timer_start):",
                           r.idx.events);
    else
        check_line("idx (timer_start):", r.idx);
    check_line("expiry (timer_expire_entry):", r.expiry);
    // Printed only when the trace lost history, so a whole capture's report
    // reads as it always did.
    if (r.idx.lost + r.expiry.lost > 0 || !r.lost_by_reason.empty()) {
        out += fmt::format("lost history (excluded): idx {}, expiry {}; {} CPU{} resynchronised\n", r.idx.lost,
                           r.expiry.lost, r.resyncs, r.resyncs == 1 ? "" : "s");
        for (const auto& [reason, n] : r.lost_by_reason) out += fmt::format("  {:>5}  {}\n", n, reason);
        std::size_t shown = 0;
        for (const ReplayLost& l : r.lost) {
            if (shown++ == max_listed) break;
            out += fmt::format("  line {}: timer={:016x} {} {} on CPU {}: lost since {}\n", l.line, l.timer,
                               l.function.empty() ? "(function unknown)" : l.function, to_string(l.check), l.cpu,
                               l.since);
        }
        const auto resynced = [](const ReplayCheckCounts& c) {
            return fmt::format("{}/{}", c.resynced_agree, c.resynced_agree + c.resynced_disagree);
        };
        if (r.resyncs > 0)
            out += fmt::format("resynchronised stretches (apart from the agreement): idx {}, expiry {} agree\n",
                               resynced(r.idx), resynced(r.expiry));
    }
    if (!r.unknown_by_reason.empty()) {
        out += "unknown history (excluded):\n";
        for (const auto& [reason, n] : r.unknown_by_reason) out += fmt::format("  {:>5}  {}\n", n, reason);
    }
    out += fmt::format("disagreements: {}\n", r.disagreements.size());
    for (const auto& [cause, n] : r.disagreements_by_cause) out += fmt::format("  {:>5}  {}\n", n, cause);
    std::size_t listed = 0;
    for (const ReplayDisagreement& d : r.disagreements) {
        if (listed++ == max_listed) {
            out += fmt::format("  ... {} more (--max-listed)\n", r.disagreements.size() - max_listed);
            break;
        }
        out += fmt::format("  line {}: timer={:016x} {} {}: ours {}; kernel {} [{}]{}\n", d.line, d.timer,
                           d.function.empty() ? "(function unknown)" : d.function,
                           to_string(d.check), d.ours, d.kernel, to_string(d.cause), d.boot ? " (boot)" : "");
    }
    if (!r.notes_by_class.empty()) {
        out += "notes (not checks):\n";
        for (const auto& [cls, n] : r.notes_by_class) out += fmt::format("  {:>5}  {}\n", n, cls);
        listed = 0;
        for (const ReplayNote& note : r.notes) {
            if (listed++ == max_listed) break;
            out += fmt::format("  line {}: timer={:016x} {}: {}{}\n", note.line, note.timer,
                               note.function.empty() ? "(function unknown)" : note.function, note.what,
                               note.boot ? " (boot)" : "");
        }
    }
    out += agreement_line(r) + '\n';
    return out;
}

namespace {

// The members one per line; the listed checks one per line (in the report
// since the first validate, so kept); agreement as a fraction with 6 decimals.
const JsonLayout kValidateLayout{
    .expanded = {"", "/disagreements", "/lost_history/checks"},
    .fixed_decimals = {{"/idx/agreement", 6}, {"/expiry/agreement", 6}},
};

ordered_json check_counts(const ReplayCheckCounts& c) {
    ordered_json o = ordered_json::object();
    o["events"] = c.events;
    o["agree"] = c.agree;
    o["disagree"] = c.disagree;
    o["unknown_history"] = c.unknown;
    o["agreement"] = c.agreement();
    o["boot_events"] = c.boot_events;
    o["boot_agree"] = c.boot_agree;
    o["lost_history"] = c.lost;
    o["resynced_agree"] = c.resynced_agree;
    o["resynced_disagree"] = c.resynced_disagree;
    return o;
}

// A count per reason, cause or class, in the map's (alphabetical) order.
ordered_json counts_by_name(const std::map<std::string, std::uint64_t, std::less<>>& m) {
    ordered_json o = ordered_json::object();
    for (const auto& [name, n] : m) o[name] = n;
    return o;
}

std::string timer_address(std::uint64_t timer) { return fmt::format("{:016x}", timer); }

ordered_json disagreement(const ReplayDisagreement& d) {
    ordered_json o = ordered_json::object();
    o["line"] = d.line;
    o["timer"] = timer_address(d.timer);
    o["function"] = d.function;
    o["check"] = to_string(d.check);
    o["ours"] = d.ours;
    o["kernel"] = d.kernel;
    o["cause"] = to_string(d.cause);
    o["boot"] = d.boot;
    o["resynced"] = d.resynced;
    return o;
}

ordered_json lost_check(const ReplayLost& l) {
    ordered_json o = ordered_json::object();
    o["line"] = l.line;
    o["timer"] = timer_address(l.timer);
    o["function"] = l.function;
    o["check"] = to_string(l.check);
    o["cpu"] = l.cpu;
    o["since"] = l.since;
    return o;
}

// The first `max_listed` of `all`, each as `item` makes it.
template <class T, class F>
ordered_json first_listed(const std::vector<T>& all, std::size_t max_listed, F item) {
    ordered_json out = ordered_json::array();
    for (std::size_t i = 0; i < all.size() && i < max_listed; ++i) out.push_back(item(all[i]));
    return out;
}

} // namespace

ordered_json validate_document(const ReplayResult& r, std::size_t max_listed, double min_percent, bool passed) {
    ordered_json doc = ordered_json::object();
    doc["file"] = r.file;
    doc["hz"] = r.hz;
    doc["hz_source"] = r.hz_source;
    doc["cpus"] = r.cpus;
    doc["timer_events"] = r.timer_events;
    doc["timers"] = r.timers;
    if (r.filter.active()) doc["filter"] = filter_json(r.filter, r.filter_counts);
    doc["workload_start_line"] = r.workload_start_line ? ordered_json(*r.workload_start_line) : ordered_json(nullptr);
    doc["kernel"] = r.kernel.range.describe();
    doc["kernel_source"] = r.kernel.source;
    doc["kernel_6_9"] = r.kernel_6_9;
    // Only where inferred: other traces' documents stay as they were.
    if (r.remote_inferred)
        doc["remote_expiries_inferred"] = {{"expiries", r.remote_inferred->expiries},
                                           {"runs", r.remote_inferred->runs}};
    doc["flags_garbled"] = r.flags_garbled;
    // Only in a classic-era report: a 4.8+ one reads as it always did.
    if (r.kernel_classic) {
        doc["kernel_classic"] = true;
        doc["classic_slot_order"] = r.classic_oldest_first ? "oldest first" : "newest first";
        doc["classic_cascaded_agree"] = r.cascaded_agree;
    }
    doc["idx"] = check_counts(r.idx);
    doc["expiry"] = check_counts(r.expiry);
    doc["unknown_history"] = counts_by_name(r.unknown_by_reason);
    doc["disagreements_by_cause"] = counts_by_name(r.disagreements_by_cause);
    doc["disagreements"] = first_listed(r.disagreements, max_listed, disagreement);
    doc["notes_by_class"] = counts_by_name(r.notes_by_class);
    ordered_json lost = ordered_json::object();
    lost["by_reason"] = counts_by_name(r.lost_by_reason);
    lost["resyncs"] = r.resyncs;
    lost["checks"] = first_listed(r.lost, max_listed, lost_check);
    doc["lost_history"] = std::move(lost);
    doc["min_percent"] = min_percent;
    doc["passed"] = passed;
    doc["agreement"] = agreement_line(r);
    return doc;
}

std::string format_validate_json(const ReplayResult& r, std::size_t max_listed, double min_percent, bool passed) {
    return write_json(validate_document(r, max_listed, min_percent, passed), kValidateLayout) + "\n";
}

} // namespace timersim
