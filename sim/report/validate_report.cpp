#include "sim/report/validate_report.hpp"

#include "sim/report/json.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

namespace timersim {

std::string agreement_line(const ReplayResult& r) {
    return fmt::format("agreement: idx {}/{}, expiry {}/{}", r.idx.agree, r.idx.agree + r.idx.disagree,
                       r.expiry.agree, r.expiry.agree + r.expiry.disagree);
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
    if (r.workload_start_line)
        out += fmt::format("; workload starts at line {} (before it: boot, possibly incomplete)\n",
                           *r.workload_start_line);
    else
        out += "; no workload start marker\n";
    if (r.filter.active())
        out += fmt::format("filter {}: {}\n", describe_filter(r.filter), describe_filter_counts(r.filter_counts, "timer events"));
    if (r.timer_events == 0) out += "no timer_* events: nothing to validate\n";
    out += fmt::format("replay: {} softirq runs of our model (+{} empty catch-up runs), {} requeues (cancel+start), "
                       "{} deletes, {} migrations\n",
                       r.model_softirq_runs, r.empty_softirq_runs, r.kernel_requeues, r.kernel_deletes, r.migrations);
    const auto check_line = [&](std::string_view name, const ReplayCheckCounts& c) {
        out += fmt::format("{:<30} {:>5} events: {:>5} agree, {} disagree, {} unknown history ({}", name, c.events,
                           c.agree, c.disagree, c.unknown, percent(c));
        if (r.workload_start_line) out += fmt::format("; in boot {}/{} agree", c.boot_agree, c.boot_events);
        out += ")\n";
    };
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

std::string format_validate_json(const ReplayResult& r, std::size_t max_listed, double min_percent, bool passed) {
    const auto counts = [](const ReplayCheckCounts& c) {
        return fmt::format(
            "{{\"events\": {}, \"agree\": {}, \"disagree\": {}, \"unknown_history\": {}, \"agreement\": {:.6f}, "
            "\"boot_events\": {}, \"boot_agree\": {}, \"lost_history\": {}, \"resynced_agree\": {}, "
            "\"resynced_disagree\": {}}}",
            c.events, c.agree, c.disagree, c.unknown, c.agreement(), c.boot_events, c.boot_agree, c.lost,
            c.resynced_agree, c.resynced_disagree);
    };
    const auto map = [](const auto& m) {
        std::string s = "{";
        bool first = true;
        for (const auto& [k, v] : m) {
            s += fmt::format("{}{}: {}", first ? "" : ", ", json_string(k), v);
            first = false;
        }
        return s + "}";
    };
    std::string out = "{\n";
    out += fmt::format("  \"file\": {},\n  \"hz\": {},\n  \"hz_source\": {},\n  \"cpus\": {},\n  \"timer_events\": {},\n"
                       "  \"timers\": {},\n",
                       json_string(r.file), r.hz, json_string(r.hz_source), r.cpus, r.timer_events, r.timers);
    if (r.filter.active()) out += fmt::format("  \"filter\": {},\n", filter_json(r.filter, r.filter_counts));
    out += fmt::format("  \"workload_start_line\": {},\n",
                       r.workload_start_line ? fmt::format("{}", *r.workload_start_line) : std::string("null"));
    out += fmt::format("  \"idx\": {},\n  \"expiry\": {},\n", counts(r.idx), counts(r.expiry));
    out += fmt::format("  \"unknown_history\": {},\n", map(r.unknown_by_reason));
    out += fmt::format("  \"disagreements_by_cause\": {},\n", map(r.disagreements_by_cause));
    out += "  \"disagreements\": [";
    std::size_t listed = 0;
    for (const ReplayDisagreement& d : r.disagreements) {
        if (listed == max_listed) break;
        out += fmt::format(
            "{}\n    {{\"line\": {}, \"timer\": \"{:016x}\", \"function\": {}, \"check\": \"{}\", \"ours\": {}, "
            "\"kernel\": {}, \"cause\": {}, \"boot\": {}, \"resynced\": {}}}",
            listed++ ? "," : "", d.line, d.timer, json_string(d.function), to_string(d.check), json_string(d.ours),
            json_string(d.kernel), json_string(to_string(d.cause)), d.boot, d.resynced);
    }
    out += listed ? "\n  ],\n" : "],\n";
    out += fmt::format("  \"notes_by_class\": {},\n", map(r.notes_by_class));
    out += fmt::format("  \"lost_history\": {{\"by_reason\": {}, \"resyncs\": {}, \"checks\": [", map(r.lost_by_reason),
                       r.resyncs);
    listed = 0;
    for (const ReplayLost& l : r.lost) {
        if (listed == max_listed) break;
        out += fmt::format("{}\n    {{\"line\": {}, \"timer\": \"{:016x}\", \"function\": {}, \"check\": \"{}\", "
                           "\"cpu\": {}, \"since\": {}}}",
                           listed++ ? "," : "", l.line, l.timer, json_string(l.function), to_string(l.check), l.cpu,
                           json_string(l.since));
    }
    out += listed ? "\n  ]},\n" : "]},\n";
    out += fmt::format("  \"min_percent\": {},\n  \"passed\": {},\n", min_percent, passed);
    out += fmt::format("  \"agreement\": {}\n}}\n", json_string(agreement_line(r)));
    return out;
}

} // namespace timersim
