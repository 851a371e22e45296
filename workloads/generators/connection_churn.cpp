#include "workloads/generators/connection_churn.hpp"

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
      rng_(config.seed), calendar_(kHorizon), cursor_(start) {
    if (config.hz == 0) throw std::invalid_argument("hz must be positive");
    if (!(config.message_interval_ms > 0)) throw std::invalid_argument("message interval must be positive");
    kinds_.reserve(config.connections);
    activity_.reserve(config.connections);
    for (std::uint32_t conn = 0; conn < config.connections; ++conn) {
        const std::uint64_t pick = rng_() % 10;
        kinds_.push_back(pick < 4 ? ChurnTimer::retransmit
                         : pick < 7 ? ChurnTimer::delayed_ack
                                    : ChurnTimer::idle);
        activity_.push_back(static_cast<float>(std::pow(10.0, 3.0 * uniform01() - 1.0)));
        schedule(start + draw_gap(conn), conn);
    }
}

// Our own mapping from the 64-bit stream (not std::*_distribution, whose
// algorithms differ between standard libraries), so a seed means the same
// workload everywhere.
double ConnectionChurn::uniform01() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

// Exponential gaps, rounded to whole jiffies and at least one.
Jiffies ConnectionChurn::draw_gap(std::uint32_t conn) {
    const double gap = -std::log1p(-uniform01()) * mean_gap_jiffies_ * activity_[conn];
    return gap < 1 ? 1 : static_cast<Jiffies>(std::llround(gap));
}

void ConnectionChurn::schedule(Jiffies at, std::uint32_t conn) {
    if (at - cursor_ < kHorizon)
        calendar_[at & (kHorizon - 1)].push_back(conn);
    else
        far_.emplace(at, conn);
}

std::optional<std::uint32_t> ConnectionChurn::pop_message(Jiffies now) {
    while (time_before_eq(cursor_, now)) {
        auto& list = calendar_[cursor_ & (kHorizon - 1)];
        if (drained_ < list.size()) {
            const std::uint32_t conn = list[drained_++];
            // Gaps are at least one jiffy, so this never lands in `list`.
            schedule(cursor_ + draw_gap(conn), conn);
            return conn;
        }
        list.clear();
        drained_ = 0;
        ++cursor_;
        // The horizon moved: far messages that are now within it join the calendar.
        while (!far_.empty() && far_.top().first - cursor_ < kHorizon) {
            calendar_[far_.top().first & (kHorizon - 1)].push_back(far_.top().second);
            far_.pop();
        }
    }
    return std::nullopt;
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
