// mixed: a busy web server, the generators combined in one machine. For
// `connections` = N client connections:
//
//   tcp-retransmit   N   every connection sends responses (RTO per connection)
//   delayed-ack      N   and receives requests (delayed-ACK timer)
//   socket-timeouts  N   with an idle timeout, and a blocked reader on some
//   keepalive        N/10 backend connections (database, upstreams) with SO_KEEPALIVE
//   time-wait        N/10 slots turning connections over into TIME_WAIT
//                        (the server closes first, as HTTP servers do)
//
// Each part runs with its own parameters from GeneratorParams, so
// --send-interval-ms and the like still apply. The proportions are a guess
// at a typical front end (every client socket carries the first three
// timers; keepalive and TIME_WAIT are a minority), not a measurement.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/generator_params.hpp"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

// The parts of `mixed` with their connection counts, in order.
std::vector<std::pair<std::string_view, std::uint32_t>> mixed_server_parts(std::uint32_t connections);

} // namespace timersim
