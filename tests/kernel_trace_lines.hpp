// Hand-made traces in the kernel's format (6.1 /sys/kernel/tracing/trace,
// no_hash_pointers), one line each, for the suites that replay or import a
// small kernel trace. Times are in microseconds, printed as the kernel's
// seconds.microseconds; a timer is named by the last digits of its address
// ("aa" is timer=00000000000000aa).
#pragma once

#include "wheel/core/jiffies.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace timersim::test {

// The header line that gives the trace's HZ.
inline const std::string kHz250 = "# hz=250\n";

inline std::string ev(unsigned cpu, std::uint64_t us, const std::string& what) {
    return fmt::format("          <idle>-0       [00{}] d.s1.     {}.{:06}: {}\n", cpu, us / 1'000'000, us % 1'000'000,
                       what);
}

inline std::string address(std::string_view timer) {
    return std::string(16 - timer.size(), '0') + std::string(timer);
}

// A timer_start on `cpu` for that CPU's wheel.
inline std::string start(unsigned cpu, std::uint64_t us, std::string_view timer, std::string_view function,
                         Jiffies expires, Jiffies timeout, unsigned idx, std::string_view flags = "") {
    return ev(cpu, us,
              fmt::format("timer_start: timer={} function={} expires={} [timeout={}] cpu={} idx={} flags={}",
                          address(timer), function, expires, timeout, cpu, idx, flags));
}

inline std::string cancel(unsigned cpu, std::uint64_t us, std::string_view timer) {
    return ev(cpu, us, "timer_cancel: timer=" + address(timer));
}

inline std::string init(unsigned cpu, std::uint64_t us, std::string_view timer) {
    return ev(cpu, us, "timer_init: timer=" + address(timer));
}

inline std::string expire_entry(unsigned cpu, std::uint64_t us, std::string_view timer, std::string_view function,
                                Jiffies now, Jiffies baseclk) {
    return ev(cpu, us,
              fmt::format("timer_expire_entry: timer={} function={} now={} baseclk={}", address(timer), function, now,
                          baseclk));
}

inline std::string expire_exit(unsigned cpu, std::uint64_t us, std::string_view timer) {
    return ev(cpu, us, "timer_expire_exit: timer=" + address(timer));
}

// A timer's expiry as 6.1 expire_timers() prints it: the detach
// (timer_cancel), then the callback from timer_expire_entry, 1 us later, to
// timer_expire_exit, `callback_us` after that.
inline std::string expiry(unsigned cpu, std::uint64_t us, std::string_view timer, std::string_view function,
                          Jiffies now, Jiffies baseclk, std::uint64_t callback_us = 1) {
    return cancel(cpu, us, timer) + expire_entry(cpu, us + 1, timer, function, now, baseclk) +
           expire_exit(cpu, us + 1 + callback_us, timer);
}

} // namespace timersim::test
