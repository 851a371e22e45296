#include "workloads/generators/generator_catalog.hpp"

#include "workloads/generators/churn_workload.hpp"
#include "workloads/generators/composite_workload.hpp"
#include "workloads/generators/mixed_server.hpp"
#include "workloads/generators/seeded_random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace timersim {

namespace {

constexpr std::array<std::string_view, 9> kNames{
    "tcp-retransmit", "socket-timeouts", "delayed-ack", "keepalive", "time-wait",
    "burst",          "uniform",         "mixed",       "connection-churn",
};

} // namespace

std::span<const std::string_view> generator_names() { return kNames; }

WorkloadFactory generator_factory(std::string_view name, const GeneratorParams& params, std::uint32_t connections,
                                  std::uint64_t ticks, unsigned hz, std::uint64_t after_tick_ns) {
    const std::string key(name);
    const std::uint64_t seed = part_seed(params.seed, key.c_str());
    if (name == "tcp-retransmit") {
        TcpRetransmitConfig c = params.tcp_retransmit;
        c.connections = connections;
        c.seed = seed;
        return tcp_retransmit_workload(c, ticks);
    }
    if (name == "socket-timeouts") {
        SocketTimeoutsConfig c = params.socket_timeouts;
        c.connections = connections;
        c.seed = seed;
        return socket_timeouts_workload(c, ticks);
    }
    if (name == "delayed-ack") {
        DelayedAckConfig c = params.delayed_ack;
        c.connections = connections;
        c.seed = seed;
        return delayed_ack_workload(c, ticks);
    }
    if (name == "keepalive") {
        KeepaliveConfig c = params.keepalive;
        c.connections = connections;
        c.seed = seed;
        return keepalive_workload(c, ticks);
    }
    if (name == "time-wait") {
        TimeWaitConfig c = params.time_wait;
        c.connections = connections;
        c.seed = seed;
        return time_wait_workload(c, ticks);
    }
    if (name == "burst") return burst_workload(params.burst, ticks);
    if (name == "uniform") {
        UniformConfig c = params.uniform;
        c.timers = connections;
        c.seed = seed;
        return uniform_workload(c, ticks);
    }
    if (name == "connection-churn") {
        // As `timersim run` has always run it: the plain seed, one timer per connection.
        const ConnectionChurnConfig c{.hz = hz,
                                      .connections = connections,
                                      .message_interval_ms = params.churn_message_interval_ms,
                                      .seed = params.seed};
        return churn_workload(c, ticks, after_tick_ns);
    }
    throw std::invalid_argument(fmt::format("unknown generator '{}'", name));
}

std::vector<std::pair<std::string, std::uint32_t>> expand_workload_list(std::string_view list,
                                                                        std::uint32_t connections) {
    std::vector<std::pair<std::string, std::uint32_t>> out;
    const auto add = [&](std::string_view name, std::uint32_t n) {
        for (const auto& [seen, count] : out)
            if (seen == name) throw std::invalid_argument(fmt::format("'{}' is listed twice (mixed includes tcp-retransmit, delayed-ack, socket-timeouts, keepalive and time-wait)", name));
        out.emplace_back(std::string(name), n);
    };
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = std::min(list.find(',', begin), list.size());
        const std::string_view name = list.substr(begin, comma - begin);
        if (name.empty()) throw std::invalid_argument("empty generator name in the list");
        if (std::find(kNames.begin(), kNames.end(), name) == kNames.end())
            throw std::invalid_argument(
                fmt::format("unknown generator '{}' (expected {})", name, fmt::join(generator_names(), ", ")));
        if (name == "mixed") {
            for (const auto& [part, n] : mixed_server_parts(connections)) add(part, n);
        } else {
            add(name, connections);
        }
        if (comma == list.size()) break;
        begin = comma + 1;
    }
    if (out.size() > kMaxWorkloadParts) throw std::invalid_argument("too many generators");
    return out;
}

WorkloadFactory workload_list_factory(std::string_view list, const GeneratorParams& params, std::uint64_t ticks,
                                      unsigned hz, std::uint64_t after_tick_ns) {
    const auto parts = expand_workload_list(list, params.connections);
    std::vector<WorkloadFactory> factories;
    for (const auto& [name, n] : parts) factories.push_back(generator_factory(name, params, n, ticks, hz, after_tick_ns));
    if (factories.size() == 1) return factories.front();
    return composite_workload(std::move(factories));
}

} // namespace timersim
