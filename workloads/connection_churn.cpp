#include "workloads/connection_churn.hpp"

#include <cmath>
#include <stdexcept>

namespace timersim {

std::string_view to_string(ChurnTimer kind) {
    switch (kind) {
    case ChurnTimer::retransmit: return "retransmit";
    case ChurnTimer::delayed_ack: return "delayed_ack";
    case ChurnTimer::idle: return "idle";
    }
    return "?";
}

ConnectionChurn::ConnectionChurn(const ConnectionChurnConfig& config, Jiffies start)
    : hz_(config.hz), mean_gap_jiffies_(config.message_interval_ms * config.hz / 1000.0),
      rng_(config.seed) {
    if (config.hz == 0) throw std::invalid_argument("hz must be positive");
    if (!(config.message_interval_ms > 0)) throw std::invalid_argument("message interval must be positive");
    kinds_.reserve(config.connections);
    std::vector<Message> first;
    first.reserve(config.connections);
    for (std::uint32_t conn = 0; conn < config.connections; ++conn) {
        const std::uint64_t pick = rng_() % 10;
        kinds_.push_back(pick < 4 ? ChurnTimer::retransmit
                         : pick < 7 ? ChurnTimer::delayed_ack
                                    : ChurnTimer::idle);
        first.emplace_back(start + draw_gap(), conn);
    }
    messages_ = decltype(messages_)(std::greater<>{}, std::move(first));
}

// Exponential gaps, rounded to whole jiffies and at least one.
Jiffies ConnectionChurn::draw_gap() {
    // Our own mapping from the 64-bit stream (not std::*_distribution, whose
    // algorithms differ between standard libraries), so a seed means the same
    // workload everywhere.
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    const double gap = -std::log1p(-u) * mean_gap_jiffies_;
    return gap < 1 ? 1 : static_cast<Jiffies>(std::llround(gap));
}

std::optional<std::uint32_t> ConnectionChurn::pop_message(Jiffies now) {
    if (messages_.empty() || time_after(messages_.top().first, now)) return std::nullopt;
    const auto [at, conn] = messages_.top();
    messages_.pop();
    messages_.emplace(at + draw_gap(), conn);
    return conn;
}

Jiffies ConnectionChurn::draw_timeout(std::uint32_t conn) {
    switch (kinds_[conn]) {
    case ChurnTimer::retransmit: // include/net/tcp.h: TCP_RTO_MIN = HZ/5, TCP_TIMEOUT_INIT = HZ
        return hz_ / 5 + rng_() % (hz_ - hz_ / 5 + 1);
    case ChurnTimer::delayed_ack: // TCP_DELACK_MIN = HZ/25 (4 below HZ=100)
        return hz_ < 100 ? 4 : hz_ / 25;
    case ChurnTimer::idle:
        return Jiffies{60} * hz_;
    }
    return hz_;
}

} // namespace timersim
