#include "sim/cli/trace_filter_options.hpp"

#include "sim/cli/cli.hpp"
#include "workloads/traces/input/input_file.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace timersim::cli {

namespace po = boost::program_options;

void add_trace_filter_options(po::options_description& options, FilterOptionNames names) {
    po::options_description group("Trace filters (applied before anything is replayed; the report counts what they kept and dropped)");
    group.add_options()
        ("cpu", po::value<std::string>(), "keep only events that happened on these CPUs, e.g. 0,2-3 (kernel text: the [CPU] "
         "column; a timersim trace: cpu=, none is CPU 0)")
        ("function", po::value<std::string>(), "keep only events of timers whose callback matches this glob, as "
         "set_ftrace_filter: tcp_*, *_timer, [a-c]*; a cancel takes the function of its timer's last timer_start "
         "or expiry")
        (names.from, po::value<std::string>(), "keep only events at or after TIME: a time from the trace's first event "
         "(kernel text) or its time 0 (a timersim trace) with a unit, 1.5s, 200ms, 750us; or @SECONDS, a kernel "
         "trace's own timestamp. Timers armed before it are unknown to the replay, as if the capture began there")
        (names.to, po::value<std::string>(), "keep only events before TIME (as the start); timers armed before it "
         "still fire after it in a replay");
    options.add(group);
}

TraceFilter trace_filter_option(const po::variables_map& vm, bool kernel_trace, FilterOptionNames names) {
    TraceFilter f;
    const auto value = [&](const char* name, auto&& parse) {
        try {
            return parse(vm[name].as<std::string>());
        } catch (const std::invalid_argument& e) {
            throw UsageError(fmt::format("--{}: {}", name, e.what()));
        }
    };
    if (vm.count("cpu")) f.cpus = value("cpu", [](const std::string& s) { return parse_cpu_list(s); });
    if (vm.count("function"))
        f.function = value("function", [](const std::string& s) {
            check_glob(s);
            return s;
        });
    for (const char* name : {names.from, names.to}) {
        if (!vm.count(name)) continue;
        const TraceTime t = value(name, [](const std::string& s) { return parse_trace_time(s); });
        if (t.absolute && !kernel_trace)
            throw UsageError(fmt::format("--{}: @SECONDS is a kernel trace's timestamp; a timersim trace takes a "
                                         "time from its start, e.g. 1.5s",
                                         name));
        (name == names.from ? f.from : f.to) = t;
    }
    if (f.from && f.to && f.from->absolute == f.to->absolute && f.to->ns <= f.from->ns)
        throw UsageError(fmt::format("--{}: the window ends ({}) at or before it starts (--{} {}): nothing would be kept",
                                     names.to, vm[names.to].as<std::string>(), names.from,
                                     vm[names.from].as<std::string>()));
    return f;
}

void require_kept(const TraceFilter& filter, const TraceFilterCounts& counts, const std::string& file,
                  std::string_view what) {
    if (!filter.active() || counts.kept > 0) return;
    // "kept 0 of N timer events; dropped N by --cpu": the second half says why.
    const std::string why = describe_filter_counts(counts, what);
    const std::size_t semicolon = why.find("; ");
    throw InputError(fmt::format("{}: {} keeps none of its {} {}{}", file, describe_filter(filter), counts.dropped(), what,
                                 semicolon == std::string::npos ? "" : " (" + why.substr(semicolon + 2) + ")"));
}

} // namespace timersim::cli
