#include "sim/report/json.hpp"
#include "sim/cli/workload_options.hpp"

#include "sim/cli/machine_options.hpp"

#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/trace_filter_options.hpp"
#include "workloads/generators/generator_catalog.hpp"
#include "workloads/traces/trace_error.hpp"
#include "workloads/traces/trace_replay.hpp"
#include "sim/cli/trace_cost_choice.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

// A generator parameter: its option, the generators it applies to (for the
// JSON report), its range, and where it lives in GeneratorParams.
struct Parameter {
    const char* name;
    const char* generators; // comma-separated, as in --workload
    const char* help;
    double min;
    double max;
    double (*get)(const GeneratorParams&);
    void (*set)(GeneratorParams&, double);
    bool integer = false;
};

constexpr double kMaxMs = 1e9;        // 11.6 days
constexpr double kMaxS = 1e6;
constexpr double kMaxRtoMs = 3.6e6;   // an hour: RTOs are kept in 32-bit jiffies
constexpr double kMaxConnections = 50'000'000;
constexpr std::uint64_t kMaxTimers = 100'000'000;

// Grouped by generator, in help order; the first group applies to all.
struct Group {
    const char* caption;
    std::vector<Parameter> parameters;
};

const std::vector<Group>& parameter_groups() {
    using P = GeneratorParams;
    static const std::vector<Group> groups{
        {"Workload (all generators)",
         {
             {"connections", "", "connections per generator (uniform: timers); mixed: see --workload", 1, kMaxConnections,
              [](const P& p) { return double(p.connections); },
              [](P& p, double v) { p.connections = static_cast<std::uint32_t>(v); }, true},
         }},
        {"tcp-retransmit: flights of segments and their RTO (TCP_TIMEOUT_INIT, TCP_RTO_MIN/MAX)",
         {
             {"send-interval-ms", "tcp-retransmit", "mean idle gap (exponential) between a flight's last ACK and the next send", 0.1, kMaxMs,
              [](const P& p) { return p.tcp_retransmit.send_interval_ms; },
              [](P& p, double v) { p.tcp_retransmit.send_interval_ms = v; }},
             {"segments-per-send", "tcp-retransmit", "segments per flight (the receiver ACKs every second one)", 1, 1000,
              [](const P& p) { return double(p.tcp_retransmit.segments_per_send); },
              [](P& p, double v) { p.tcp_retransmit.segments_per_send = static_cast<std::uint32_t>(v); }, true},
             {"rtt-ms", "tcp-retransmit,delayed-ack", "median round-trip time of a connection (also delayed-ack)", 0.001, 10000,
              [](const P& p) { return p.tcp_retransmit.rtt_ms; },
              [](P& p, double v) { p.tcp_retransmit.rtt_ms = p.delayed_ack.rtt_ms = v; }},
             {"rtt-spread", "tcp-retransmit,delayed-ack", "connections' RTTs are log-uniform in [rtt/spread, rtt*spread] (also delayed-ack)", 1, 100,
              [](const P& p) { return p.tcp_retransmit.rtt_spread; },
              [](P& p, double v) { p.tcp_retransmit.rtt_spread = p.delayed_ack.rtt_spread = v; }},
             {"loss", "tcp-retransmit", "probability that a segment or a retransmission is lost (0..1)", 0, 1,
              [](const P& p) { return p.tcp_retransmit.loss; },
              [](P& p, double v) { p.tcp_retransmit.loss = v; }},
             {"initial-rto-ms", "tcp-retransmit", "RTO before the first RTT sample (TCP_TIMEOUT_INIT)", 1, kMaxRtoMs,
              [](const P& p) { return p.tcp_retransmit.initial_rto_ms; },
              [](P& p, double v) { p.tcp_retransmit.initial_rto_ms = v; }},
             {"rto-min-ms", "tcp-retransmit,delayed-ack", "floor of the RTO's variance term (TCP_RTO_MIN; also caps delayed-ack's ato)", 1, kMaxRtoMs,
              [](const P& p) { return p.tcp_retransmit.rto_min_ms; },
              [](P& p, double v) { p.tcp_retransmit.rto_min_ms = p.delayed_ack.rto_min_ms = v; }},
             {"rto-max-ms", "tcp-retransmit", "cap of the RTO and its backoff (TCP_RTO_MAX)", 1, kMaxRtoMs,
              [](const P& p) { return p.tcp_retransmit.rto_max_ms; },
              [](P& p, double v) { p.tcp_retransmit.rto_max_ms = v; }},
             {"max-retransmits", "tcp-retransmit", "timeouts in a row before the connection is reset (tcp_retries2)", 0, 100,
              [](const P& p) { return double(p.tcp_retransmit.max_retransmits); },
              [](P& p, double v) { p.tcp_retransmit.max_retransmits = static_cast<std::uint32_t>(v); }, true},
         }},
        {"socket-timeouts: idle timeouts pushed back by every message, SO_RCVTIMEO",
         {
             {"message-interval-ms", "socket-timeouts", "mean gap between two messages of a connection, times its activity", 0.1, kMaxMs,
              [](const P& p) { return p.socket_timeouts.message_interval_ms; },
              [](P& p, double v) { p.socket_timeouts.message_interval_ms = v; }},
             {"activity-spread", "socket-timeouts", "connections' activity factors are log-uniform in [1/spread, spread]", 1, 10000,
              [](const P& p) { return p.socket_timeouts.activity_spread; },
              [](P& p, double v) { p.socket_timeouts.activity_spread = v; }},
             {"idle-timeout-s", "socket-timeouts", "idle timeout, re-armed by every message", 0.001, kMaxS,
              [](const P& p) { return p.socket_timeouts.idle_timeout_s; },
              [](P& p, double v) { p.socket_timeouts.idle_timeout_s = v; }},
             {"receive-timeout-ms", "socket-timeouts", "SO_RCVTIMEO of a blocked reader", 1, kMaxMs,
              [](const P& p) { return p.socket_timeouts.receive_timeout_ms; },
              [](P& p, double v) { p.socket_timeouts.receive_timeout_ms = v; }},
             {"reader-fraction", "socket-timeouts", "fraction of connections with a reader blocked in recv() (0..1)", 0, 1,
              [](const P& p) { return p.socket_timeouts.reader_fraction; },
              [](P& p, double v) { p.socket_timeouts.reader_fraction = v; }},
         }},
        {"delayed-ack: the receiver's delayed-ACK timer (TCP_DELACK_MIN/MAX)",
         {
             {"segment-interval-ms", "delayed-ack", "mean gap between received segments (interactive: between requests)", 0.1, kMaxMs,
              [](const P& p) { return p.delayed_ack.segment_interval_ms; },
              [](P& p, double v) { p.delayed_ack.segment_interval_ms = v; }},
             {"interactive-fraction", "delayed-ack", "fraction of request/response (pingpong) connections (0..1)", 0, 1,
              [](const P& p) { return p.delayed_ack.interactive_fraction; },
              [](P& p, double v) { p.delayed_ack.interactive_fraction = v; }},
             {"reply-delay-ms", "delayed-ack", "mean time an interactive application takes to reply", 0, kMaxMs,
              [](const P& p) { return p.delayed_ack.reply_delay_ms; },
              [](P& p, double v) { p.delayed_ack.reply_delay_ms = v; }},
             {"delack-min-ms", "delayed-ack", "TCP_DELACK_MIN (= TCP_ATO_MIN)", 1, kMaxRtoMs,
              [](const P& p) { return p.delayed_ack.delack_min_ms; },
              [](P& p, double v) { p.delayed_ack.delack_min_ms = v; }},
             {"delack-max-ms", "delayed-ack", "TCP_DELACK_MAX", 1, kMaxRtoMs,
              [](const P& p) { return p.delayed_ack.delack_max_ms; },
              [](P& p, double v) { p.delayed_ack.delack_max_ms = v; }},
         }},
        {"keepalive: SO_KEEPALIVE (TCP_KEEPALIVE_TIME/INTVL/PROBES)",
         {
             {"keepalive-time-s", "keepalive", "idle time before the first probe (tcp_keepalive_time; the kernel allows 1..32767)", 1, 32767,
              [](const P& p) { return p.keepalive.keepalive_time_s; },
              [](P& p, double v) { p.keepalive.keepalive_time_s = v; }},
             {"keepalive-interval-s", "keepalive", "time between probes (tcp_keepalive_intvl, 1..32767)", 1, 32767,
              [](const P& p) { return p.keepalive.keepalive_interval_s; },
              [](P& p, double v) { p.keepalive.keepalive_interval_s = v; }},
             {"keepalive-probes", "keepalive", "unanswered probes before the reset (tcp_keepalive_probes, 1..127)", 1, 127,
              [](const P& p) { return double(p.keepalive.probes); },
              [](P& p, double v) { p.keepalive.probes = static_cast<std::uint32_t>(v); }, true},
             {"keepalive-traffic-interval-s", "keepalive", "mean gap between received segments (0: no traffic)", 0, kMaxS,
              [](const P& p) { return p.keepalive.traffic_interval_s; },
              [](P& p, double v) { p.keepalive.traffic_interval_s = v; }},
             {"dead-peer-fraction", "keepalive", "fraction of connections whose peer never answers (0..1)", 0, 1,
              [](const P& p) { return p.keepalive.dead_peer_fraction; },
              [](P& p, double v) { p.keepalive.dead_peer_fraction = v; }},
             {"keepalive-lifetime-s", "keepalive", "mean lifetime of a connection before it closes normally (0: forever)", 0, kMaxS,
              [](const P& p) { return p.keepalive.lifetime_s; },
              [](P& p, double v) { p.keepalive.lifetime_s = v; }},
         }},
        {"time-wait: TIME_WAIT sockets (TCP_TIMEWAIT_LEN, pinned, no classic slack)",
         {
             {"connection-lifetime-ms", "time-wait", "mean lifetime of a connection before it closes into TIME_WAIT", 0.1, kMaxMs,
              [](const P& p) { return p.time_wait.lifetime_ms; },
              [](P& p, double v) { p.time_wait.lifetime_ms = v; }},
             {"time-wait-s", "time-wait", "TIME_WAIT length (TCP_TIMEWAIT_LEN)", 0.001, kMaxS,
              [](const P& p) { return p.time_wait.time_wait_s; },
              [](P& p, double v) { p.time_wait.time_wait_s = v; }},
             {"port-reuse-fraction", "time-wait", "fraction of TIME_WAIT sockets killed early by a SYN reusing the port (0..1)", 0, 1,
              [](const P& p) { return p.time_wait.port_reuse_fraction; },
              [](P& p, double v) { p.time_wait.port_reuse_fraction = v; }},
         }},
        {"burst: N timers on one deadline",
         {
             {"burst-size", "burst", "timers armed together on one jiffy", 1, kMaxConnections,
              [](const P& p) { return double(p.burst.size); },
              [](P& p, double v) { p.burst.size = static_cast<std::uint32_t>(v); }, true},
             {"burst-timeout-ms", "burst", "from arming to the common deadline", 1, kMaxMs,
              [](const P& p) { return p.burst.timeout_ms; },
              [](P& p, double v) { p.burst.timeout_ms = v; }},
             {"burst-interval-ms", "burst", "time between bursts (0: one burst)", 0, kMaxMs,
              [](const P& p) { return p.burst.interval_ms; },
              [](P& p, double v) { p.burst.interval_ms = v; }},
             {"burst-start-ms", "burst", "when the first burst is armed", 0, kMaxMs,
              [](const P& p) { return p.burst.start_ms; },
              [](P& p, double v) { p.burst.start_ms = v; }},
         }},
        {"uniform: a random arm/modify/cancel mix",
         {
             {"op-interval-ms", "uniform", "mean gap between two operations on one timer", 0.1, kMaxMs,
              [](const P& p) { return p.uniform.op_interval_ms; },
              [](P& p, double v) { p.uniform.op_interval_ms = v; }},
             {"timeout-min-ms", "uniform", "shortest timeout of an arm", 1, kMaxMs,
              [](const P& p) { return p.uniform.timeout_min_ms; },
              [](P& p, double v) { p.uniform.timeout_min_ms = v; }},
             {"timeout-max-ms", "uniform", "longest timeout of an arm", 1, kMaxMs,
              [](const P& p) { return p.uniform.timeout_max_ms; },
              [](P& p, double v) { p.uniform.timeout_max_ms = v; }},
             {"cancel-fraction", "uniform", "fraction of operations that cancel (0..1)", 0, 1,
              [](const P& p) { return p.uniform.cancel_fraction; },
              [](P& p, double v) { p.uniform.cancel_fraction = v; }},
         }},
        {"connection-churn: one timer per connection, re-armed by every message",
         {
             {"churn-message-interval-ms", "connection-churn", "mean gap between two messages of a connection", 1, kMaxMs,
              [](const P& p) { return p.churn_message_interval_ms; },
              [](P& p, double v) { p.churn_message_interval_ms = v; }},
         }},
    };
    return groups;
}

bool applies_to(const Parameter& p, std::string_view generator) {
    std::string_view list = p.generators;
    while (!list.empty()) {
        const std::size_t comma = std::min(list.find(','), list.size());
        if (list.substr(0, comma) == generator) return true;
        list.remove_prefix(std::min(comma + 1, list.size()));
    }
    return false;
}


// The parameters as the JSON report shows them: per generator, the options
// that apply to it (names with underscores).
std::string params_json(const std::vector<std::pair<std::string, std::uint32_t>>& parts, const GeneratorParams& params,
                        std::string_view list) {
    std::string out = fmt::format("{{\"workload\": {}, \"connections\": {}, \"seed\": {}", json_string(list),
                                  params.connections, params.seed);
    for (const auto& [name, count] : parts) {
        std::vector<std::string> fields;
        if (name != "burst") fields.push_back(fmt::format("\"connections\": {}", count));
        for (const Group& g : parameter_groups())
            for (const Parameter& p : g.parameters)
                if (applies_to(p, name)) {
                    std::string key = p.name;
                    for (char& ch : key)
                        if (ch == '-') ch = '_';
                    fields.push_back(fmt::format("\"{}\": {}", key, p.get(params)));
                }
        out += fmt::format(", {}: {{{}}}", json_string(name), fmt::join(fields, ", "));
    }
    return out + "}";
}

// A bound or value as the user would type it: 50000000, not 5e+07.
std::string number(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<std::int64_t>(v));
    return fmt::format("{:g}", v);
}

std::string percent(double f) { return fmt::format("{:g} %", f * 100); }

// One phrase per generator for the description line.
std::string describe(std::string_view name, std::uint32_t n, const GeneratorParams& p) {
    if (name == "tcp-retransmit")
        return fmt::format("tcp-retransmit ({} connections, {} segments every {:g} ms, RTT {:g} ms, loss {})", n,
                           p.tcp_retransmit.segments_per_send, p.tcp_retransmit.send_interval_ms,
                           p.tcp_retransmit.rtt_ms, percent(p.tcp_retransmit.loss));
    if (name == "socket-timeouts")
        return fmt::format("socket-timeouts ({} connections, a message every {:g} ms, idle {:g} s, SO_RCVTIMEO {:g} ms)", n,
                           p.socket_timeouts.message_interval_ms, p.socket_timeouts.idle_timeout_s,
                           p.socket_timeouts.receive_timeout_ms);
    if (name == "delayed-ack")
        return fmt::format("delayed-ack ({} connections, a segment every {:g} ms, {} interactive)", n,
                           p.delayed_ack.segment_interval_ms, percent(p.delayed_ack.interactive_fraction));
    if (name == "keepalive")
        return fmt::format("keepalive ({} connections, {:g} s + {} x {:g} s)", n, p.keepalive.keepalive_time_s,
                           p.keepalive.probes, p.keepalive.keepalive_interval_s);
    if (name == "time-wait")
        return fmt::format("time-wait ({} slots, connections live {:g} ms, TIME_WAIT {:g} s)", n,
                           p.time_wait.lifetime_ms, p.time_wait.time_wait_s);
    if (name == "burst")
        return fmt::format("burst ({} timers on one deadline {:g} ms ahead{})", p.burst.size, p.burst.timeout_ms,
                           p.burst.interval_ms > 0 ? fmt::format(", every {:g} ms", p.burst.interval_ms) : "");
    if (name == "uniform")
        return fmt::format("uniform ({} timers, an operation every {:g} ms, timeouts {:g}..{:g} ms, {} cancels)", n,
                           p.uniform.op_interval_ms, p.uniform.timeout_min_ms, p.uniform.timeout_max_ms,
                           percent(p.uniform.cancel_fraction));
    return fmt::format("connection churn ({} connections, a message every {:g} ms)", n, p.churn_message_interval_ms);
}

std::uint64_t timers_needed(const std::vector<std::pair<std::string, std::uint32_t>>& parts,
                            const GeneratorParams& params) {
    std::uint64_t total = 0;
    for (const auto& [name, n] : parts)
        total += name == "burst" ? params.burst.size : name == "socket-timeouts" ? 2ull * n : n;
    return total;
}

WorkloadChoice trace_choice(const po::variables_map& vm, unsigned hz) {
    const bool ftrace = vm.count("ftrace") > 0;
    const std::string option = ftrace ? "--ftrace" : "--trace";
    if (vm.count("trace") && vm.count("ftrace")) throw UsageError("--trace and --ftrace: give one or the other");
    if (!vm["workload"].defaulted())
        throw UsageError(fmt::format("--workload and {}: give one or the other", option));
    for (const Group& g : parameter_groups())
        for (const Parameter& p : g.parameters)
            if (!vm[p.name].defaulted())
                throw UsageError(fmt::format("--{}: a generator parameter, not used with {}", p.name, option));
    if (!vm["seed"].defaulted()) throw UsageError(fmt::format("--seed: not used with {}", option));
    const std::string path = vm[ftrace ? "ftrace" : "trace"].as<std::string>();
    const TraceKind kind = ftrace ? TraceKind::ftrace : TraceKind::timersim;
    // A bad trace throws TraceError (FILE:LINE: what (field)); the CLI
    // prints that one line and exits 2.
    // Read once, whatever the input is (a pipe, "-", compressed): every
    // design of a compare replays the same events from memory.
    // A kernel trace's HZ: --hz if given (checked against the trace's
    // jiffies unless --force-hz), else its '# hz=' line, else its jiffies;
    // never the machine's default.
    const bool hz_given = vm.count("hz") && !vm["hz"].defaulted();
    const bool force = vm.count("force-hz") && vm["force-hz"].as<bool>();
    if (force && !ftrace) throw UsageError("--force-hz: only with --ftrace (a timersim trace's header fixes its HZ)");
    if (force && !hz_given) throw UsageError("--force-hz: give the HZ to force with --hz");
    const bool costs = vm["costs-from-trace"].as<bool>();
    if (costs && !ftrace)
        throw UsageError("--costs-from-trace: only with --ftrace (a timersim trace has no softirq or callback times)");
    TraceLoadOptions load;
    load.filter = trace_filter_option(vm, ftrace);
    load.costs_from_trace = costs;
    InputFile in(path);
    const auto trace = load_trace(in, kind, HzChoice{.option = hz_given ? std::optional<unsigned>(hz) : std::nullopt,
                                                     .force = force}, load);
    const TraceSummary& summary = trace->summary();
    const std::string& name = trace->file(); // "<stdin>" for "-"
    WorkloadChoice choice;
    choice.spec.name = ftrace ? "ftrace" : "trace";
    choice.spec.description = fmt::format("{} {} ({} events, HZ={}{}, {} CPU{})", ftrace ? "kernel ftrace" : "trace", name,
                                          summary.events, summary.header.hz,
                                          summary.hz_source.empty() ? "" : " from " + summary.hz_source,
                                          summary.cpus, summary.cpus == 1 ? "" : "s");
    std::string extra_json;
    if (trace->filter().active()) {
        choice.spec.description += fmt::format("\nfilter {}: {}", describe_filter(trace->filter()),
                                               describe_filter_counts(trace->filter_counts(), ftrace ? "timer events" : "events"));
        extra_json += fmt::format(", \"filter\": {}", filter_json(trace->filter(), trace->filter_counts()));
    }
    bool callback_costs = false;
    if (const TraceCosts* c = trace->costs()) {
        const TraceCostChoice chosen = trace_cost_choice(*c, vm);
        choice.costs = chosen.fields;
        callback_costs = chosen.by_function;
        choice.spec.description += "\n" + chosen.text;
        extra_json += ", \"costs_from_trace\": " + chosen.json;
    }
    choice.spec.json = fmt::format("{{\"{}\": {}, \"events\": {}, \"hz\": {}, {}\"start_jiffies\": {}, \"cpus\": {}{}}}",
                                   ftrace ? "ftrace" : "trace", json_string(name), summary.events, summary.header.hz,
                                   summary.hz_source.empty() ? "" : fmt::format("\"hz_source\": {}, ", json_string(summary.hz_source)),
                                   summary.header.start_jiffies, summary.cpus, extra_json);
    choice.spec.factory = trace_replay(trace, nullptr, callback_costs);
    choice.clock = summary.header;
    choice.cpus = summary.cpus;
    // Time after the last event for the timers it armed to fire: TCP_RTO_MAX
    // (120 s), enough for retransmit and TIME_WAIT timers.
    choice.natural_ticks = ticks_at(summary.header.hz, summary.last_event_ns) + 120ull * summary.header.hz;
    // Without --duration/--ticks the run goes that far: a last event past
    // what the machine can simulate is the trace's fault, at its line.
    constexpr std::uint64_t kMaxRunTicks = 10'000'000'000ull; // run_machine()'s bound
    if (*choice.natural_ticks > kMaxRunTicks && !vm.count("duration") && !vm.count("ticks"))
        throw TraceError(name, summary.last_event_line, "time",
                         fmt::format("time {} ns is past the longest run the machine simulates (1e10 ticks at "
                                     "HZ={}, with 120 s for the last timers); give --duration or --ticks",
                                     summary.last_event_ns, summary.header.hz));
    return choice;
}

} // namespace

void add_workload_options(po::options_description& options, const char* default_workload) {
    const GeneratorParams defaults;
    const std::string names = fmt::format("{}", fmt::join(generator_names(), ", "));
    bool first = true;
    for (const Group& g : parameter_groups()) {
        po::options_description group(g.caption);
        if (first) {
            group.add_options()
                ("workload", po::value<std::string>()->default_value(default_workload),
                 fmt::format("generators to run together, comma-separated: {}. mixed is a busy web server: "
                             "tcp-retransmit, delayed-ack and socket-timeouts on every connection, keepalive "
                             "and time-wait on a tenth", names).c_str())
                ("seed", po::value<std::uint64_t>()->default_value(defaults.seed),
                 "workload seed; the same seed gives byte-identical output");
        }
        for (const Parameter& p : g.parameters) {
            if (p.integer)
                group.add_options()(p.name, po::value<std::uint64_t>()->default_value(static_cast<std::uint64_t>(p.get(defaults))), p.help);
            else
                group.add_options()(p.name, double_value(p.get(defaults)), p.help);
        }
        if (first) {
            group.add_options()
                ("costs-from-trace", po::bool_switch(),
                 "with --ftrace: measure the cost model from the trace's irq:softirq_entry/exit (vec=1) and "
                 "timer_expire_entry/exit times: each callback costs the p50 of its function's callbacks, "
                 "softirq entry the p50 of a run's time outside callbacks, expiry the p50 gap between two "
                 "callbacks (explicit --cost-*-ns win; docs/machine.md)")
                ("trace", po::value<std::string>(), "replay a timersim trace FILE instead of generators (its header fixes HZ); "
                 "- is standard input, xz, gzip and zstd are read as they are")
                ("ftrace", po::value<std::string>(), "replay kernel ftrace text or trace.dat FILE (timer events) instead of generators; "
                 "its HZ is --hz, else its '# hz=' line, else what its jiffies show (never assumed); "
                 "- is standard input, xz, gzip and zstd are read as they are")
                ("force-hz", po::bool_switch(), "with --ftrace and --hz: replay at --hz even where the trace's jiffies show another HZ");
        }
        options.add(group);
        first = false;
    }
    add_trace_filter_options(options);
}

WorkloadChoice workload_choice(const po::variables_map& vm, unsigned hz, std::uint64_t ticks) {
    if (vm.count("trace") || vm.count("ftrace")) return trace_choice(vm, hz);
    for (const char* name : {"cpu", "function", "from", "to"})
        if (vm.count(name)) throw UsageError(fmt::format("--{}: a trace filter, only with --trace or --ftrace", name));
    if (vm["costs-from-trace"].as<bool>()) throw UsageError("--costs-from-trace: only with --ftrace");

    GeneratorParams params;
    params.seed = vm["seed"].as<std::uint64_t>();
    for (const Group& g : parameter_groups()) {
        for (const Parameter& p : g.parameters) {
            const double v = p.integer ? static_cast<double>(vm[p.name].as<std::uint64_t>()) : vm[p.name].as<double>();
            if (!(v >= p.min && v <= p.max))
                throw UsageError(fmt::format("--{}: must be {}..{}, got {}", p.name, number(p.min), number(p.max),
                                             p.integer ? fmt::format("{}", vm[p.name].as<std::uint64_t>())
                                                       : fmt::format("{:g}", v)));
            p.set(params, v);
        }
    }
    const auto& t = params.tcp_retransmit;
    if (t.rto_min_ms > t.rto_max_ms)
        throw UsageError(fmt::format("--rto-min-ms: must not exceed --rto-max-ms ({:g}), got {:g}", t.rto_max_ms, t.rto_min_ms));
    if (t.initial_rto_ms > t.rto_max_ms)
        throw UsageError(fmt::format("--initial-rto-ms: must not exceed --rto-max-ms ({:g}), got {:g}", t.rto_max_ms, t.initial_rto_ms));
    if (params.delayed_ack.delack_min_ms > params.delayed_ack.delack_max_ms)
        throw UsageError(fmt::format("--delack-min-ms: must not exceed --delack-max-ms ({:g}), got {:g}",
                                     params.delayed_ack.delack_max_ms, params.delayed_ack.delack_min_ms));
    if (params.uniform.timeout_min_ms > params.uniform.timeout_max_ms)
        throw UsageError(fmt::format("--timeout-min-ms: must not exceed --timeout-max-ms ({:g}), got {:g}",
                                     params.uniform.timeout_max_ms, params.uniform.timeout_min_ms));

    const std::string list = vm["workload"].as<std::string>();
    std::vector<std::pair<std::string, std::uint32_t>> parts;
    try {
        parts = expand_workload_list(list, params.connections);
    } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("--workload: {}", e.what()));
    }
    const std::uint64_t timers = timers_needed(parts, params);
    if (timers > kMaxTimers)
        throw UsageError(fmt::format("--connections: '{}' with {} connections needs {} timers, at most {}", list,
                                     params.connections, timers, kMaxTimers));

    const std::uint64_t after_tick_ns = vm.count("tick-jitter-ns") ? vm["tick-jitter-ns"].as<std::uint64_t>() : 0;
    std::vector<std::string> phrases;
    for (const auto& [name, n] : parts) phrases.push_back(describe(name, n, params));
    WorkloadChoice choice;
    choice.spec.name = list;
    choice.spec.description = fmt::format("{}, seed {}", fmt::join(phrases, " + "), params.seed);
    choice.spec.json = params_json(parts, params, list);
    choice.spec.factory = workload_list_factory(list, params, ticks, hz, after_tick_ns);
    bool only_bursts = true;
    for (const auto& [name, n] : parts) {
        const bool burst = name == "burst";
        only_bursts = only_bursts && burst;
        choice.memory.bytes_per_design += bytes_per_connection(name) * (burst ? params.burst.size : n);
    }
    choice.memory.option = only_bursts ? "--burst-size" : "--connections";
    choice.memory.what = only_bursts ? fmt::format("a burst of {} timers", params.burst.size)
                                     : fmt::format("'{}' with {} connections", list, params.connections);
    return choice;
}

void fit_machine_to_workload(MachineConfig& machine, const WorkloadChoice& choice, const po::variables_map& vm,
                             double default_duration_s) {
    if (choice.clock) {
        machine.hz = choice.clock->hz;
        machine.start_jiffies = choice.clock->start_jiffies;
    }
    // A trace recorded on N CPUs replays on N unless the user says otherwise.
    if (choice.cpus > machine.cpus && vm["cpus"].defaulted()) {
        if (choice.cpus > kMaxMachineCpus)
            throw UsageError(fmt::format("--cpus: the trace uses {} CPUs, more than the {} the machine can have",
                                         choice.cpus, kMaxMachineCpus));
        machine.cpus = choice.cpus;
    }
    for (const auto& [field, ns] : choice.costs) machine.costs.*field = ns;
    machine.ticks = run_length_option(vm, machine.hz)
                        .value_or(choice.natural_ticks.value_or(
                            static_cast<std::uint64_t>(default_duration_s * machine.hz)));
}

} // namespace timersim::cli
