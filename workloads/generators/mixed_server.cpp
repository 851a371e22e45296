#include "workloads/generators/mixed_server.hpp"

#include <algorithm>

namespace timersim {

std::vector<std::pair<std::string_view, std::uint32_t>> mixed_server_parts(std::uint32_t connections) {
    const std::uint32_t tenth = std::max<std::uint32_t>(1, connections / 10);
    return {
        {"tcp-retransmit", connections},
        {"delayed-ack", connections},
        {"socket-timeouts", connections},
        {"keepalive", tenth},
        {"time-wait", tenth},
    };
}

} // namespace timersim
