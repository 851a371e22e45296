// The kernel's TCP timer constants (include/net/tcp.h, Linux 6.1; see the
// reference's section 6.1), in the units the generators' options use. The
// generators turn them into jiffies with msecs_to_jiffies() rounding (up),
// which gives exactly the kernel's HZ/5, HZ/25, ... for HZ >= 100.
#pragma once

#include <cstdint>

namespace timersim::tcp {

inline constexpr double kTimeoutInitMs = 1000;      // TCP_TIMEOUT_INIT = 1*HZ (RFC 6298 initial RTO)
inline constexpr double kRtoMinMs = 200;            // TCP_RTO_MIN = HZ/5
inline constexpr double kRtoMaxMs = 120000;         // TCP_RTO_MAX = 120*HZ
inline constexpr double kDelackMinMs = 40;          // TCP_DELACK_MIN = TCP_ATO_MIN = HZ/25
inline constexpr double kDelackMaxMs = 200;         // TCP_DELACK_MAX = HZ/5
inline constexpr double kMaxAtoMs = 500;            // tcp_send_delayed_ack(): max_ato = HZ/2
inline constexpr double kKeepaliveTimeS = 7200;     // TCP_KEEPALIVE_TIME = 120*60*HZ
inline constexpr double kKeepaliveIntervalS = 75;   // TCP_KEEPALIVE_INTVL = 75*HZ
inline constexpr std::uint32_t kKeepaliveProbes = 9; // TCP_KEEPALIVE_PROBES
inline constexpr double kTimewaitLenS = 60;         // TCP_TIMEWAIT_LEN = 60*HZ
inline constexpr std::uint32_t kRetries2 = 15;      // TCP_RETR2 (net.ipv4.tcp_retries2)

} // namespace timersim::tcp
