// The pieces of a kernel text line that the binary readers (trace.dat,
// trace_dat.hpp; LTTng's CTF, lttng_ctf.hpp) print alike, as the kernel's
// /sys/kernel/tracing/trace prints them:
//
//   std::string out;
//   append_line_start(out, "sshd", 812, 0, 10509628979865, "timer_start");
//   out += " timer=0xffff88003a0c8000 ...";   // "  sshd-812  [000] 10509.628980: timer_start:"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace timersim {

// "COMM-PID [CPU] SECONDS.MICROSECONDS: EVENT:", the time rounded to the
// microsecond as the kernel's text rounds it (ns2usecs(): + 500 ns, then
// / 1000).
void append_line_start(std::string& out, std::string_view comm, std::int64_t pid, unsigned cpu, std::uint64_t ns,
                       std::string_view event);

// How a kernel's timer_start prints its flags word: 4.2-4.10 the whole word
// ("flags=0x%08x", its low bits the CPU); 4.11+ "cpu=N [idx=N] flags=M|D|P|I"
// (include/linux/timer.h's TIMER_* bits).
enum class TimerFlagsText : std::uint8_t { word, cpu, cpu_idx };
void append_timer_flags(std::string& out, std::uint64_t flags, TimerFlagsText text);

// irq:softirq_entry/exit/raise's fields: "vec=N [action=NAME]"
// (softirq_name[] of kernel/softirq.c).
void append_softirq_fields(std::string& out, std::uint64_t vec);

} // namespace timersim
