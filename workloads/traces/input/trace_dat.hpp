// trace.dat: the binary file `trace-cmd record` (or `trace-cmd extract`)
// writes, read with libtracecmd/libtraceevent (Debian libtracecmd-dev,
// libtraceevent-dev) and turned into ftrace text, so every command that
// reads a kernel trace (import, run/compare --ftrace, validate) takes it as
// it takes /sys/kernel/tracing/trace or `trace-cmd report` text:
//
//   InputFile in(path);                            // any file or "-", xz/gz/zst or not
//   KernelText text(in);                           // kernel_text.hpp: trace.dat or not
//   FtraceReader reader(text.pass(), ...);
//
// A trace.dat is recognised by its magic (0x17 0x08 0x44 "tracing"), never
// by its name. libtracecmd reads a file it can seek in, so the (decompressed)
// bytes are first copied into an unlinked temporary file (O_TMPFILE, under
// $TMPDIR or /tmp): a pipe, "-" or a compressed trace.dat works like a plain
// one. The text is rendered into another such file, which the passes over
// the trace read: memory stays constant, disk holds the copy and the text.
//
// The rendering, one line per record of the top-level buffer, in time order
// across CPUs (libtracecmd's merge by timestamp):
//
//   COMM-PID [CPU] SECONDS.MICROSECONDS: EVENT: FIELDS
//   CPU:N [LOST n EVENTS]          before a record the ring buffer lost events before
//
// Timer events get the fields their 6.1 print fmt prints (timer=, function=,
// expires=, [timeout=], cpu=, idx=, flags=, now=, baseclk=, bucket_expiry=),
// computed from the raw record fields, not from libtraceevent's rendering of
// the print fmt: libtraceevent 1.7.1 (Debian 12) evaluates 6.1's
// `__print_flags(REC->flags & (M | D | P | I), ...)` as if the mask were
// `(flags & M) | D | P | I`, so `trace-cmd report` and `perf script` print
// flags=D|P|I on every 6.1 timer_start. cpu= and idx= appear only when the
// event's own print fmt has them (4.11+), bucket_expiry= when the record has
// that field (6.9+). The timestamp is rounded to the microsecond as the
// kernel's /sys/kernel/tracing/trace text rounds it (ns2usecs(): + 500 ns,
// then / 1000), so a trace.dat and the text of the same ring buffer import
// to the same bytes. Other events give "EVENT:" with no fields (they are
// skipped and counted by name). The function name comes from the trace.dat's
// saved kallsyms; without them it is the address in hex.
//
// Errors: a file with the magic that libtracecmd cannot open, or whose
// records cannot be read (truncated, corrupt), throws InputError "NAME: a
// trace.dat (trace-cmd) that cannot be read: why" (the CLI prints it after
// "timersim: " and exits 2). libtracecmd runs in a forked child that writes
// the text into the temporary file, and its error into a pipe: on a damaged
// file its error paths can crash (libtracecmd 1.3.1 dies in tracecmd_close()
// called from tracecmd_open_fd() when a version 6 file ends inside its CPU
// data), and the child's death is then the file's error, never timersim's
// crash; a child whose end cannot be learnt (waitpid() fails: SIGCHLD
// ignored) is an error too, never taken for success. The child's stderr
// goes to /dev/null (libtracecmd prints some complaints with plain
// fprintf). A cut in the payload of the file's last option (its final few
// dozen bytes) goes unnoticed by libtracecmd; every event is still read
// then.
//
// A temporary file that cannot be made or written (no such $TMPDIR, a full
// disk) is not the file's fault: InputError "NAME: what in DIR (why)"
// (throw_temporary_file_error()).
//
// Cost (the committed 969 KB capture, 9,423 records): about 0.2 s of CPU,
// as `trace-cmd report` takes on it (libtracecmd loading 3.6 MB of kallsyms).
#pragma once

#include "workloads/traces/input/input_file.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace timersim {

// The first bytes of every trace.dat (trace-cmd's file magic).
inline constexpr std::string_view kTraceDatMagic{"\x17\x08\x44tracing", 10};

bool is_trace_dat(std::string_view head) noexcept;

// The rest of `in`, a trace.dat, rendered as above into a temporary file:
// that text as an input named as `in` (which may be read again). Throws
// InputError.
std::unique_ptr<InputFile> trace_dat_text(InputFile& in);

} // namespace timersim
