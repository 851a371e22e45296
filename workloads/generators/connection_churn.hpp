// ConnectionChurn: many connections, each with one timer that every message
// pushes back, the pattern behind most kernel timers (TCP retransmit and
// delayed-ACK timers, socket idle timeouts): armed, re-armed again and again,
// and only rarely allowed to expire.
//
// Each connection gets one timer kind for its lifetime:
//   retransmit   40 %  RTO drawn per message from [TCP_RTO_MIN, TCP_TIMEOUT_INIT] = 200 ms .. 1 s
//   delayed_ack  30 %  TCP_DELACK_MIN = HZ/25 (40 ms)
//   idle         30 %  a 60 s idle timeout (TCP_TIMEWAIT_LEN-sized)
// Messages on a connection arrive as a Poisson process whose mean gap is the
// configured interval times a per-connection activity factor, log-uniform in
// [1/10, 100]: busy connections keep their timers from ever firing, quiet ones
// let retransmit and idle timers expire, as on a real server. The schedule
// does not depend on which timers fire, so every queue sees the same operations.
#pragma once

#include "wheel/core/jiffies.hpp"

#include <cstdint>
#include <optional>
#include <queue>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

struct ConnectionChurnConfig {
    unsigned hz = 0; // the run's clock: always given (0 is no HZ; none is assumed)
    std::uint32_t connections = 100000;
    double message_interval_ms = 1000; // mean gap between two messages of one connection
    std::uint64_t seed = 1;
};

enum class ChurnTimer : std::uint8_t { retransmit, delayed_ack, idle };
std::string_view to_string(ChurnTimer kind);

class ConnectionChurn {
public:
    ConnectionChurn(const ConnectionChurnConfig& config, Jiffies start);

    std::uint32_t connections() const noexcept { return static_cast<std::uint32_t>(kinds_.size()); }
    ChurnTimer kind(std::uint32_t conn) const noexcept { return kinds_[conn]; }

    // The next connection with a message at or before `now`, earliest jiffy
    // first; schedules that connection's following message.
    std::optional<std::uint32_t> pop_message(Jiffies now);

    // The timeout (in jiffies) the connection arms on this message.
    Jiffies draw_timeout(std::uint32_t conn);

private:
    Jiffies draw_gap(std::uint32_t conn);
    double uniform01();

    void schedule(Jiffies at, std::uint32_t conn);

    unsigned hz_;
    double mean_gap_jiffies_;
    std::mt19937_64 rng_;
    std::vector<ChurnTimer> kinds_;
    std::vector<float> activity_; // per-connection multiplier of the mean gap
    // Messages within kHorizon jiffies sit in a calendar, one list per jiffy
    // (O(1) per message; a heap of 100k connections cost ~10x more); the rare
    // farther ones wait in a heap until they come within the horizon.
    static constexpr Jiffies kHorizon = Jiffies{1} << 16;
    std::vector<std::vector<std::uint32_t>> calendar_;
    Jiffies cursor_;       // the jiffy whose list is being drained
    std::size_t drained_ = 0; // entries of that list already handed out
    using Message = std::pair<Jiffies, std::uint32_t>;
    std::priority_queue<Message, std::vector<Message>, std::greater<>> far_;
};

} // namespace timersim
