#include "workloads/generators/generator_parameters.hpp"

#include "workloads/generators/generator_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace timersim {

namespace {

constexpr double kMaxMs = 1e9;        // 11.6 days
constexpr double kMaxS = 1e6;
constexpr double kMaxRtoMs = 3.6e6;   // an hour: RTOs are kept in 32-bit jiffies
constexpr double kMaxConnections = 50'000'000;
constexpr std::uint64_t kMaxTimers = 100'000'000;


} // namespace

const std::vector<GeneratorParameterGroup>& generator_parameter_groups() {
    using P = GeneratorParams;
    static const std::vector<GeneratorParameterGroup> groups{
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

namespace {

bool applies_to(const GeneratorParameter& p, std::string_view generator) {
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
// Values as the options hold them: counts as integers, every other
// parameter a double (20, not 20.0, once written).
nlohmann::ordered_json params_json(const std::vector<std::pair<std::string, std::uint32_t>>& parts,
                                   const GeneratorParams& params, std::string_view list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["workload"] = list;
    out["connections"] = params.connections;
    out["seed"] = params.seed;
    for (const auto& [name, count] : parts) {
        nlohmann::ordered_json fields = nlohmann::ordered_json::object();
        if (name != "burst") fields["connections"] = count;
        for (const GeneratorParameterGroup& g : generator_parameter_groups())
            for (const GeneratorParameter& p : g.parameters)
                if (applies_to(p, name)) {
                    std::string key = p.name;
                    for (char& ch : key)
                        if (ch == '-') ch = '_';
                    fields[key] = p.get(params);
                }
        out[name] = std::move(fields);
    }
    return out;
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

} // namespace

void set_generator_parameter(GeneratorParams& params, const GeneratorParameter& p, double value) {
    if (!(value >= p.min && value <= p.max))
        throw std::invalid_argument(
            fmt::format("--{}: must be {}..{}, got {:g}", p.name, number(p.min), number(p.max), value));
    p.set(params, value);
}

void set_generator_parameter(GeneratorParams& params, const GeneratorParameter& p, std::uint64_t value) {
    const double v = static_cast<double>(value);
    if (!(v >= p.min && v <= p.max))
        throw std::invalid_argument(
            fmt::format("--{}: must be {}..{}, got {}", p.name, number(p.min), number(p.max), value));
    p.set(params, v);
}

GeneratorWorkload generator_workload(std::string_view list, const GeneratorParams& params) {
    const auto& t = params.tcp_retransmit;
    if (t.rto_min_ms > t.rto_max_ms)
        throw std::invalid_argument(
            fmt::format("--rto-min-ms: must not exceed --rto-max-ms ({:g}), got {:g}", t.rto_max_ms, t.rto_min_ms));
    if (t.initial_rto_ms > t.rto_max_ms)
        throw std::invalid_argument(fmt::format("--initial-rto-ms: must not exceed --rto-max-ms ({:g}), got {:g}",
                                                t.rto_max_ms, t.initial_rto_ms));
    if (params.delayed_ack.delack_min_ms > params.delayed_ack.delack_max_ms)
        throw std::invalid_argument(fmt::format("--delack-min-ms: must not exceed --delack-max-ms ({:g}), got {:g}",
                                                params.delayed_ack.delack_max_ms, params.delayed_ack.delack_min_ms));
    if (params.uniform.timeout_min_ms > params.uniform.timeout_max_ms)
        throw std::invalid_argument(fmt::format("--timeout-min-ms: must not exceed --timeout-max-ms ({:g}), got {:g}",
                                                params.uniform.timeout_max_ms, params.uniform.timeout_min_ms));

    GeneratorWorkload out;
    try {
        out.parts = expand_workload_list(list, params.connections);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("--workload: {}", e.what()));
    }
    const std::uint64_t timers = timers_needed(out.parts, params);
    if (timers > kMaxTimers)
        throw std::invalid_argument(fmt::format("--connections: '{}' with {} connections needs {} timers, at most {}",
                                                list, params.connections, timers, kMaxTimers));
    std::vector<std::string> phrases;
    for (const auto& [name, n] : out.parts) phrases.push_back(describe(name, n, params));
    out.description = fmt::format("{}, seed {}", fmt::join(phrases, " + "), params.seed);
    out.params = params_json(out.parts, params, list);
    return out;
}

} // namespace timersim
