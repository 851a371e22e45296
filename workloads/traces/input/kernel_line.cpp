#include "workloads/traces/input/kernel_line.hpp"

#include <fmt/format.h>

#include <iterator>
#include <utility>

namespace timersim {

void append_line_start(std::string& out, std::string_view comm, std::int64_t pid, unsigned cpu, std::uint64_t ns,
                       std::string_view event) {
    // Rounded to the µs without adding to ns first: a clock near its end
    // (a damaged CTF stream) would wrap to 0, and the text go back in time.
    const std::uint64_t us = ns / 1000 + (ns % 1000 >= 500 ? 1 : 0);
    fmt::format_to(std::back_inserter(out), "{:>16}-{:<7} [{:03}] {}.{:06}: {}:", comm, pid, cpu, us / 1000000,
                   us % 1000000, event);
}

// include/linux/timer.h (6.1): TIMER_CPUMASK, the four flag bits, TIMER_ARRAYSHIFT.
namespace {
constexpr std::uint64_t kCpuMask = 0x0003FFFF;
constexpr unsigned kArrayShift = 22;
} // namespace

void append_timer_flags(std::string& out, std::uint64_t flags, TimerFlagsText text) {
    if (text == TimerFlagsText::word) {
        fmt::format_to(std::back_inserter(out), " flags=0x{:08x}", flags & 0xFFFFFFFF);
        return;
    }
    fmt::format_to(std::back_inserter(out), " cpu={}", flags & kCpuMask);
    if (text == TimerFlagsText::cpu_idx)
        fmt::format_to(std::back_inserter(out), " idx={}", (flags >> kArrayShift) & 0x3FF);
    out += " flags=";
    const char* sep = "";
    static constexpr std::pair<std::uint64_t, const char*> kBits[] = {
        {0x00040000, "M"}, {0x00080000, "D"}, {0x00100000, "P"}, {0x00200000, "I"}};
    for (const auto& [bit, letter] : kBits) {
        if (flags & bit) {
            out += sep;
            out += letter;
            sep = "|";
        }
    }
}

void append_softirq_fields(std::string& out, std::uint64_t vec) {
    static constexpr const char* kSoftirqNames[] = {"HI",      "TIMER", "NET_TX",  "NET_RX",  "BLOCK",
                                                    "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"};
    fmt::format_to(std::back_inserter(out), "vec={} [action={}]", vec,
                   vec < std::size(kSoftirqNames) ? kSoftirqNames[vec] : "UNKNOWN");
}

} // namespace timersim
