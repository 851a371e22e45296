// LTTng: a kernel trace that lttng-modules recorded, in the Common Trace
// Format (CTF 1.8: a directory holding a `metadata` file and a stream file
// per CPU and channel), read with libbabeltrace2 (Debian libbabeltrace2-dev)
// and turned into ftrace text, so every command that reads a kernel trace
// (import, run/compare/step --ftrace, validate) takes its directory as it
// takes a trace.dat:
//
//   InputFile in(path, InputFile::Directories::opened);  // a file, "-" or a directory
//   KernelText text(in);                                  // kernel_text.hpp: LTTng, trace.dat or text
//   FtraceReader reader(text.pass(), ...);
//
// A directory is an LTTng trace by its content, never its name: a file
// `metadata` in it that starts with CTF's metadata magic (0x75D11D57, either
// byte order: packetized, as LTTng writes it) or with "/* CTF" (plain
// text). A directory without one is searched below (an LTTng session's
// output holds kernel/ and ust/uid/N/64-bit/ traces) for every directory
// that has one. In each trace, the files that start with CTF's packet magic
// (0xC1FC1FC1) are its streams; other files (a README beside the trace, an
// index/ directory) are left out: libbabeltrace2's source.ctf.fs takes
// every file of a directory for a stream, so it is given a directory of
// links to the metadata and the streams (under $TMPDIR or /tmp, removed
// after).
//
// Traces whose environment says domain "kernel" are read (one
// source.ctf.fs component each, a simple sink per stream); the events of
// others (userspace, UST) are skipped and counted in the header. The text:
//
//   # tracer: TRACER_NAME MAJOR.MINOR.PATCHLEVEL (LTTng kernel trace, CTF, read with libbabeltrace2)
//   # kernel: KERNEL_RELEASE        (the environment's kernel_release)
//   # hostname: HOSTNAME
//   # lttng: ...                    (events shown at an earlier event's time, events skipped)
//   COMM-TID [CPU] SECONDS.MICROSECONDS: EVENT: FIELDS
//   CPU:N [LOST n EVENTS]           before an event the tracer discarded events before
//
// CPU is the packet context's cpu_id (else the event context's). The time
// is the clock's own value in ns (the monotonic clock LTTng records, since
// boot as the kernel's text shows it; the clock's offset, which places it at
// wall-clock time, is not added), rounded to the µs as the kernel's text
// rounds it. COMM-TID is the event context's procname and tid where the
// session added them, else the task the CPU's last sched_switch switched
// to, else "<...>-0". Streams are merged by time (on a tie the lowest CPU
// first), each stream connected to a sink of its own: no filter.utils.muxer,
// which stops at a message earlier than the one before it (babeltrace2's
// command line stops 2.4 s into the committed 3.6 trace, after 11,679 of
// its 85,729 events). Should a stream hold an event earlier than the one
// before it, that event is shown at the earlier one's time, so the text
// stays in time order, and counted in the header.
//
// Timer events get the fields of their kernel's print fmt, from the event's
// fields: timer_init, timer_cancel, timer_expire_exit "timer=%p";
// timer_start "timer=%p function=%pf expires=%lu [timeout=%ld]" (timeout =
// expires - now), then bucket_expiry= where the event has it (6.8+), and the
// flags as kernel_line.hpp prints them where the event has a flags field
// (4.2+: the whole word before 4.11, cpu= idx= flags= after, by the
// environment's kernel_release); timer_expire_entry "timer=%p function=%pf
// now=%lu", then baseclk= where the event has it (5.2+). The function is its
// address in hex (an LTTng trace has no symbols). softirq_entry/exit/raise
// give "vec=N [action=NAME]"; lttng_logger (a write to /proc/lttng-logger,
// LTTng's trace_marker) "tracing_mark_write: MSG" as ftrace shows a
// trace_marker write, on one line; other events "EVENT:" with no fields (the
// reader skips and counts them by name). Newer lttng-modules' names
// irq_softirq_* and timer_hrtimer_*, timer_itimer_* are shown as the
// kernel's (softirq_*, hrtimer_*, itimer_*).
//
// Errors: InputError "NAME: WHAT" (the CLI prints it after "timersim: "
// and exits 2): "a directory, not an LTTng trace (no CTF metadata in it or
// below it)"; "an LTTng userspace (UST) trace: ..." when no trace is a
// kernel one; and "an LTTng trace (CTF) that cannot be read: why" for
// metadata libbabeltrace2 cannot parse, a stream cut short or corrupt, a
// timer event that lacks its fields. libbabeltrace2 runs in a forked child
// (forked_text.hpp): its crash is the trace's error, never timersim's. A
// trace without timer events is the reader's error, as for text.
#pragma once

#include "workloads/traces/input/input_file.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// Whether `head`, the first bytes of a file named `metadata`, is CTF
// metadata (see the top).
bool is_ctf_metadata(std::string_view head) noexcept;

// The CTF trace directories of `dir`: itself if it has CTF metadata, else
// those below it (at most 5 levels down, not through links, among its first
// 10,000 directories), sorted. Throws InputError if `dir` cannot be listed.
std::vector<std::string> find_ctf_traces(const std::string& dir);

// `dir`, an input opened as a directory (InputFile::Directories::opened),
// rendered as above into a temporary file: that text as an input named as
// `dir`. Throws InputError.
std::unique_ptr<InputFile> lttng_ctf_text(const InputFile& dir);

} // namespace timersim
