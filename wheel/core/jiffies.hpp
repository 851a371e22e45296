// Jiffies: the kernel's tick counter and its wraparound-safe comparisons.
//
// timersim models a 64-bit kernel: `jiffies` is an unsigned 64-bit counter and
// every comparison between two points in time goes through the signed
// difference, exactly like include/linux/jiffies.h (time_after & co.). That is
// what keeps the wheels correct across 2^32 (which 64-bit kernels cross five
// minutes after boot) and across 2^64 (which they never reach, but our tests do).
#pragma once

#include <cstdint>

namespace timersim {

using Jiffies = std::uint64_t;

// include/linux/jiffies.h: time_after(a, b) is true when a is after b.
constexpr bool time_after(Jiffies a, Jiffies b) noexcept {
    return static_cast<std::int64_t>(b - a) < 0;
}
constexpr bool time_before(Jiffies a, Jiffies b) noexcept { return time_after(b, a); }
constexpr bool time_after_eq(Jiffies a, Jiffies b) noexcept {
    return static_cast<std::int64_t>(a - b) >= 0;
}
constexpr bool time_before_eq(Jiffies a, Jiffies b) noexcept { return time_after_eq(b, a); }

// Signed distance from b to a (a - b read as a signed long).
constexpr std::int64_t jiffies_diff(Jiffies a, Jiffies b) noexcept {
    return static_cast<std::int64_t>(a - b);
}

// include/linux/jiffies.h INITIAL_JIFFIES: (unsigned long)(unsigned int)(-300*HZ).
// On a 64-bit kernel jiffies starts 300 s below 2^32 so that code which
// truncates to 32 bits breaks within five minutes of boot.
constexpr Jiffies initial_jiffies(unsigned hz) noexcept {
    return static_cast<Jiffies>(static_cast<std::uint32_t>(-300 * static_cast<std::int64_t>(hz)));
}

// The tick grid of a simulated machine: tick n (n ticks after time 0) at
// floor(n * 1e9 / hz) ns, computed without overflow and without
// accumulating rounding, so HZ=300 does not drift.
constexpr std::uint64_t tick_time_ns(std::uint64_t n, unsigned hz) noexcept {
    return n / hz * 1'000'000'000ull + n % hz * 1'000'000'000ull / hz;
}

// The tick-grid index of time t: the largest n with tick_time_ns(n, hz) <= t.
constexpr std::uint64_t tick_index_at(std::uint64_t t, unsigned hz) noexcept {
    const std::uint64_t r = t % 1'000'000'000ull;
    return t / 1'000'000'000ull * hz + ((r + 1) * hz - 1) / 1'000'000'000ull;
}

// msecs_to_jiffies() rounds up; jiffies_to_msecs() truncates.
constexpr Jiffies msecs_to_jiffies(std::uint64_t ms, unsigned hz) noexcept {
    return (ms * hz + 999) / 1000;
}
constexpr std::uint64_t jiffies_to_msecs(Jiffies j, unsigned hz) noexcept {
    return j * 1000 / hz;
}

} // namespace timersim
