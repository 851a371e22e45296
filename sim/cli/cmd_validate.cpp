// timersim validate: replays a real Linux 6.1 timer trace through our model of
// the 6.1 wheel (ModernWheel, one per CPU) and checks it event by event
// (sim/validate/kernel_replay.hpp, docs/validation.md).
#include "sim/report/json.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/validate/kernel_replay.hpp"
#include "workloads/traces/trace_error.hpp"

#include <fmt/format.h>

#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string shell_quote(std::string_view s) {
    std::string out = "'";
    for (const char ch : s) {
        if (ch == '\'')
            out += "'\\''";
        else
            out += ch;
    }
    out += '\'';
    return out;
}

void read_all(std::FILE* f, std::string& out) {
    char buffer[1 << 16];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) out.append(buffer, n);
}

// The whole input; a name ending in .xz is read through `xz -dc`.
std::string read_input(const std::string& path) {
    std::string text;
    std::FILE* probe = std::fopen(path.c_str(), "rb");
    if (!probe) throw UsageError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
    if (!ends_with(path, ".xz")) {
        read_all(probe, text);
        const bool failed = std::ferror(probe) != 0;
        std::fclose(probe);
        if (failed) throw std::runtime_error(fmt::format("{}: read error", path));
        return text;
    }
    std::fclose(probe);
    std::FILE* pipe = ::popen(fmt::format("xz -dc -- {} 2>/dev/null", shell_quote(path)).c_str(), "r");
    if (!pipe) throw std::runtime_error(fmt::format("{}: cannot run xz ({})", path, std::strerror(errno)));
    read_all(pipe, text);
    const int status = ::pclose(pipe);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw UsageError(fmt::format("{}: xz -dc failed (not xz data, or xz is not installed)", path));
    return text;
}


std::string agreement_line(const ReplayResult& r) {
    return fmt::format("agreement: idx {}/{}, expiry {}/{}", r.idx.agree, r.idx.agree + r.idx.disagree,
                       r.expiry.agree, r.expiry.agree + r.expiry.disagree);
}

std::string percent(const ReplayCheckCounts& c) {
    return fmt::format("{:.3f}%", 100.0 * c.agreement());
}

std::string format_text(const ReplayResult& r, std::size_t max_listed) {
    std::string out = fmt::format("{}: {} timer events, {} timers, {} CPUs, hz={}", r.file, r.timer_events, r.timers,
                                  r.cpus, r.hz);
    if (r.workload_start_line)
        out += fmt::format("; workload starts at line {} (before it: boot, possibly incomplete)\n",
                           *r.workload_start_line);
    else
        out += "; no workload start marker\n";
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

std::string format_json(const ReplayResult& r, std::size_t max_listed, double min_percent, bool passed) {
    const auto counts = [](const ReplayCheckCounts& c) {
        return fmt::format(
            "{{\"events\": {}, \"agree\": {}, \"disagree\": {}, \"unknown_history\": {}, \"agreement\": {:.6f}, "
            "\"boot_events\": {}, \"boot_agree\": {}}}",
            c.events, c.agree, c.disagree, c.unknown, c.agreement(), c.boot_events, c.boot_agree);
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
    out += fmt::format("  \"file\": {},\n  \"hz\": {},\n  \"cpus\": {},\n  \"timer_events\": {},\n  \"timers\": {},\n",
                       json_string(r.file), r.hz, r.cpus, r.timer_events, r.timers);
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
            "\"kernel\": {}, \"cause\": {}, \"boot\": {}}}",
            listed++ ? "," : "", d.line, d.timer, json_string(d.function), to_string(d.check), json_string(d.ours),
            json_string(d.kernel), json_string(to_string(d.cause)), d.boot);
    }
    out += listed ? "\n  ],\n" : "],\n";
    out += fmt::format("  \"notes_by_class\": {},\n", map(r.notes_by_class));
    out += fmt::format("  \"min_percent\": {},\n  \"passed\": {},\n", min_percent, passed);
    out += fmt::format("  \"agreement\": {}\n}}\n", json_string(agreement_line(r)));
    return out;
}

} // namespace

int run_validate(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("input", po::value<std::string>()->required(),
         "the kernel trace (the positional FILE); a name ending in .xz is read through `xz -dc`")
        ("hz", po::value<unsigned>(),
         "the traced kernel's CONFIG_HZ (1..10000); needed unless FILE has a line '# hz=N' before its first event")
        ("min", double_value(100.0),
         "fail (exit 1) when either check agrees on fewer than PERCENT of the events it could check")
        ("max-listed", po::value<std::size_t>()->default_value(50), "list at most N disagreements (and N notes)")
        ("format", po::value<std::string>()->default_value("text"), "output: text or json");
    po::positional_options_description positional;
    positional.add("input", 1);
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim validate FILE [--hz H] [--min PERCENT] [--max-listed N] [--format text|json]",
            .description =
                "Replay a real Linux 6.1 timer trace (ftrace text with the timer:timer_* events, as\n"
                "tests/data/kernel/) through our model of the 6.1 wheel, one wheel per CPU, and check\n"
                "every timer_start (our idx = the kernel's idx=) and every timer_expire_entry (our\n"
                "softirq fires that timer from a bucket whose clock is the kernel's baseclk=, not\n"
                "after now=). Events that depend on history the trace does not hold are counted as\n"
                "unknown history and excluded. Ends with 'agreement: idx A/B, expiry C/D'; exit 1 when\n"
                "either check agrees on less than --min percent. See docs/validation.md.",
            .examples = "timersim validate tests/data/kernel/capture-6.1-hz250.trace.xz\n"
                        "timersim validate trace.txt --hz 1000 --min 99.5 --format json",
        },
        positional);
    if (!vm) return kExitOk;

    const std::string input = (*vm)["input"].as<std::string>();
    std::optional<unsigned> hz;
    if (vm->count("hz")) hz = hz_option(*vm);
    const double min_percent = (*vm)["min"].as<double>();
    if (!(min_percent >= 0.0 && min_percent <= 100.0))
        throw UsageError(fmt::format("--min: must be 0..100, got {}", min_percent));
    const std::size_t max_listed = (*vm)["max-listed"].as<std::size_t>();
    const std::string format = choice_option(*vm, "format", {"text", "json"});

    const std::string text = read_input(input);
    ReplayResult result;
    try {
        result = replay_kernel_trace(text, input, ReplayOptions{.hz = hz, .max_notes_per_class = max_listed});
    } catch (const TraceError& e) {
        fmt::print(stderr, "timersim: {}\n", e.what());
        return kExitUsage;
    }
    const auto below = [&](const ReplayCheckCounts& c) {
        const std::uint64_t checked = c.agree + c.disagree;
        return checked > 0 && static_cast<double>(c.agree) * 100.0 < min_percent * static_cast<double>(checked);
    };
    // A trace without timer events validates nothing: that is a failure too.
    const bool passed = result.timer_events > 0 && !below(result.idx) && !below(result.expiry);
    if (format == "json")
        fmt::print("{}", format_json(result, max_listed, min_percent, passed));
    else
        fmt::print("{}", format_text(result, max_listed));
    return passed ? kExitOk : kExitFailed;
}

} // namespace timersim::cli
