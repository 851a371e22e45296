// timersim import: converts a kernel timer trace (ftrace text, as read from
// /sys/kernel/tracing/trace or printed by `trace-cmd report`) into a timersim
// trace v1 (docs/trace-format.md).
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/output_paths.hpp"
#include "sim/cli/trace_filter_options.hpp"
#include "sim/report/atomic_file.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"
#include "workloads/traces/replay/trace_source.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

std::string format_summary(const std::string& input, const std::string& output, const TraceHeader& header,
                           std::uint64_t written, const FtraceReader& reader, const FtraceImporter& importer,
                           const TraceFilter& filter) {
    const FtraceImportStats& s = importer.stats();
    const FtraceReaderStats& r = reader.stats();
    std::string out = fmt::format(
        "{}: {} events for {} timers (hz={} start_jiffies={}) from {} timer lines of {}\n"
        "  arm {}, modify {} ({} cancel+start pairs), cancel {}; {} expiries",
        output, written, s.timers, header.hz, header.start_jiffies, r.timer_events, input, s.arms, s.modifies,
        s.requeues, s.cancels, s.expiries);
    if (s.dropped_cancels) out += fmt::format("; {} cancels of timers armed before the trace dropped", s.dropped_cancels);
    if (s.pre_trace_arms)
        out += fmt::format("; {} timers armed before the trace, first seen expiring, armed at its start", s.pre_trace_arms);
    if (s.inferred_deferrable_arms)
        out += fmt::format("; {} arms of timers that fired late taken as deferrable (a kernel before 4.2 prints no "
                           "flags)",
                           s.inferred_deferrable_arms);
    if (s.anomalies) out += fmt::format("; {} starts or expiries without their cancel (lost events?)", s.anomalies);
    out += fmt::format("; {} inside callbacks (cb=)", s.callback_events);
    if (s.unconfirmed_callbacks)
        out += fmt::format(" ({} callbacks without timer_expire_exit: their events have no cb=)",
                           s.unconfirmed_callbacks);
    out += '\n';
    if (filter.active())
        out += fmt::format("  filter {}: {}\n", describe_filter(filter),
                           describe_filter_counts(reader.filter_counts(), "timer events"));
    if (r.lost_event_markers)
        out += fmt::format("  warning: the trace lost events ({} markers, {} events)\n", r.lost_event_markers,
                           r.lost_events);
    if (r.starts_with_flags >= 2 && r.starts_with_dpi == r.starts_with_flags)
        out += fmt::format("  warning: every timer_start ({}) has flags D|P|I, as libtraceevent 1.7 (trace-cmd report, "
                           "perf script) misprints 6.1's: if so, their flags are wrong; import the trace.dat or "
                           "/sys/kernel/tracing/trace text instead\n",
                           r.starts_with_flags);
    if (r.other_events) {
        out += fmt::format("  skipped {} other events:", r.other_events);
        for (const auto& [name, count] : r.other_by_name) out += fmt::format(" {} {},", name, count);
        out.back() = '\n';
    }
    return out;
}

} // namespace

int run_import(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("input", po::value<std::string>()->required(),
         "kernel trace to convert: ftrace text or a trace.dat (the positional FILE; - for standard input; xz, gzip or zstd compressed or not)")
        ("output,o", po::value<std::string>()->required(), "write the trace v1 to FILE (atomically; a device or FIFO is written into; -: stdout, and the summary goes to stderr)");
    add_kernel_hz_options(options);
    add_kernel_version_option(options);
    add_trace_filter_options(options);
    po::positional_options_description positional;
    positional.add("input", 1);
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim import FILE -o OUT [--hz H]",
            .description =
                "Convert a kernel timer trace into a timersim trace (format v1, docs/trace-format.md).\n"
                "FILE is ftrace text: /sys/kernel/tracing/trace, the output of `trace-cmd report`\n"
                "(with or without -l) or of `perf script`, or trace-cmd's trace.dat itself (known by\n"
                "its magic), with the timer:timer_* events. Other events are skipped and\n"
                "counted. An expiry's timer_cancel + timer_expire_entry gives no event; mod_timer()'s\n"
                "timer_cancel + timer_start gives one modify. Times become ns from the first event;\n"
                "start_jiffies comes from the first event that shows jiffies. The filters keep only\n"
                "the timer events they name, as if the capture had held only those (HZ is still\n"
                "decided from the whole trace); the summary counts what each dropped.",
            .examples = "timersim import trace.txt -o run.trace --hz 250\n"
                        "trace-cmd record -e 'timer:*' sleep 10 && timersim import trace.dat -o run.trace\n"
                        "trace-cmd report > report.txt && timersim import report.txt -o run.trace --hz 1000\n"
                        "timersim import trace.txt -o tcp.trace --cpu 0-1 --function 'tcp_*' --from 2s --to 10s",
        },
        positional);
    if (!vm) return kExitOk;
    refuse_output_onto_input(*vm, {"output"}, {"input"});

    const std::string input = (*vm)["input"].as<std::string>();
    const std::string output = (*vm)["output"].as<std::string>();
    const HzChoice hz = kernel_hz_choice(*vm);
    const TraceFilter filter = trace_filter_option(*vm, true);

    // FILE or "-" (standard input), compressed or not; the output is
    // created before anything is read, so a bad -o fails first.
    InputFile in(input, InputFile::Directories::opened); // a directory: an LTTng trace
    AtomicOutputFile file(output);

    try {
        // Read twice: a first pass decides HZ (never assumed), the second
        // imports; the header is known once the first event is (it reads
        // one ahead), so a trace whose first event is bad writes nothing.
        const std::unique_ptr<TraceSource> source = open_trace_source(in, TraceKind::ftrace, hz, filter);
        // The recording kernel's rules, as run and step read the trace: before
        // 4.2 the timers that fired late are written deferrable.
        source->use_kernel(resolve_kernel_version(*source->kernel_evidence(), kernel_version_option(*vm), in.name()).range);
        TraceWriter writer(file.get(), source->header(), fmt::format("imported from {} by timersim import", in.name()));
        // The writer's own errors do not know the file's name.
        const auto naming_output = [&](auto&& write) {
            try {
                write();
            } catch (const std::runtime_error& e) {
                throw std::runtime_error(fmt::format("{}: {} ({})", output, e.what(), std::strerror(errno)));
            }
        };
        TraceEvent event;
        while (source->next(event)) naming_output([&] { writer.write(event); });
        naming_output([&] { writer.flush(); });
        require_kept(filter, source->filter_counts(), in.name(), "timer events");
        file.commit();
        fmt::print(output == "-" ? stderr : stdout, "{}",
                   format_summary(in.name(), output, source->header(), writer.events(), *source->kernel_reader(),
                                  *source->kernel_importer(), filter));
    } catch (const TraceError& e) {
        // Bad input: exactly one line, no hint (the file is at fault, not the command line).
        fmt::print(stderr, "timersim: {}\n", e.what());
        return kExitUsage;
    }
    return kExitOk;
}

} // namespace timersim::cli
