#include "workloads/traces/input/trace_dat.hpp"

#include "workloads/traces/input/forked_text.hpp"
#include "workloads/traces/input/kernel_line.hpp"

#include <fmt/format.h>

// libtracecmd's header includes tracefs.h, whose inline functions are not
// valid C++ (an int passed as an enum); trace-cmd.h itself uses nothing from
// it, so its include guard keeps it out.
#define _TRACE_FS_H
#include <trace-cmd.h> // libtracecmd (includes libtraceevent's event-parse.h)
#undef _TRACE_FS_H

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace timersim {

bool is_trace_dat(std::string_view head) noexcept { return head.starts_with(kTraceDatMagic); }

namespace {

constexpr ForkedReader kReader{.what = "a trace.dat (trace-cmd)", .library = "libtracecmd", .reader = "trace.dat"};

[[noreturn]] void unreadable(const std::string& name, std::string_view why) { throw_unreadable(name, kReader, why); }

struct HandleCloser {
    void operator()(tracecmd_input* h) const noexcept { tracecmd_close(h); }
};
using Handle = std::unique_ptr<tracecmd_input, HandleCloser>;

struct RecordFree {
    void operator()(tep_record* r) const noexcept { tracecmd_free_record(r); }
};
using Record = std::unique_ptr<tep_record, RecordFree>;

// A numeric field of a record, if the event has it and the record holds it
// whole (tep_read_number_field() itself does not check the record's size).
std::optional<std::uint64_t> field(tep_event* event, const tep_record& r, const char* name) {
    tep_format_field* f = tep_find_field(event, name);
    if (!f || f->offset < 0 || f->size <= 0 || f->size > 8 || f->offset + f->size > r.size) return std::nullopt;
    unsigned long long value = 0;
    if (tep_read_number_field(f, r.data, &value) != 0) return std::nullopt;
    return value;
}

bool prints(tep_event* event, const char* key) {
    return event->print_fmt.format && std::strstr(event->print_fmt.format, key);
}

void append_function(std::string& out, tep_handle* tep, std::uint64_t addr) {
    if (const char* name = tep_find_function(tep, addr))
        fmt::format_to(std::back_inserter(out), " function={}", name);
    else
        fmt::format_to(std::back_inserter(out), " function=0x{:x}", addr);
}

// The FIELDS of a timer event, as its kernel print fmt shows them (see the
// header for why the flags are not libtraceevent's rendering). False if the
// record lacks a field the text always has: the record is corrupt.
bool timer_fields(std::string& out, tep_handle* tep, tep_event* event, const tep_record& r) {
    const auto timer = field(event, r, "timer");
    if (!timer) return false;
    fmt::format_to(std::back_inserter(out), "timer=0x{:x}", *timer);
    const std::string_view name = event->name;
    if (name == "timer_start") {
        const auto function = field(event, r, "function");
        const auto expires = field(event, r, "expires");
        const auto now = field(event, r, "now");
        const auto flags = field(event, r, "flags");
        if (!function || !expires || !now) return false;
        append_function(out, tep, *function);
        fmt::format_to(std::back_inserter(out), " expires={} [timeout={}]", *expires,
                       static_cast<std::int64_t>(*expires - *now));
        if (const auto bucket = field(event, r, "bucket_expiry"))
            fmt::format_to(std::back_inserter(out), " bucket_expiry={}", *bucket);
        // Before 4.2: no flags field, nothing printed.
        if (flags)
            append_timer_flags(out, *flags,
                               !prints(event, "cpu=")  ? TimerFlagsText::word
                               : prints(event, "idx=") ? TimerFlagsText::cpu_idx
                                                       : TimerFlagsText::cpu);
    } else if (name == "timer_expire_entry") {
        const auto now = field(event, r, "now");
        if (!now) return false;
        if (const auto function = field(event, r, "function")) append_function(out, tep, *function);
        fmt::format_to(std::back_inserter(out), " now={}", *now);
        if (const auto baseclk = field(event, r, "baseclk"))
            fmt::format_to(std::back_inserter(out), " baseclk={}", *baseclk);
    }
    return true;
}

bool is_timer_event(tep_event* event) {
    if (!event->system || std::strcmp(event->system, "timer") != 0) return false;
    const std::string_view n = event->name;
    return n == "timer_init" || n == "timer_start" || n == "timer_cancel" || n == "timer_expire_entry" ||
           n == "timer_expire_exit";
}

// irq:softirq_entry/softirq_exit, as the kernel's print fmt shows them
// (6.1 include/trace/events/irq.h, softirq_name[] of
// kernel/softirq.c): "vec=N [action=NAME]". The cost measurement
// (trace_costs.hpp) reads them as it reads the text's.
bool is_softirq_event(tep_event* event) {
    if (!event->system || std::strcmp(event->system, "irq") != 0) return false;
    const std::string_view n = event->name;
    return n == "softirq_entry" || n == "softirq_exit" || n == "softirq_raise";
}

bool softirq_fields(std::string& out, tep_event* event, const tep_record& r) {
    const auto vec = field(event, r, "vec");
    if (!vec) return false;
    append_softirq_fields(out, *vec);
    return true;
}

// A trace_marker write, as the text shows it ("timersim: workload start"
// marks the workload for validate): the buf field up to its NUL, one line.
void append_marker_text(std::string& out, tep_event* event, const tep_record& r) {
    tep_format_field* f = tep_find_field(event, "buf");
    if (!f || f->offset < 0 || f->offset >= r.size) return;
    std::string_view text(static_cast<const char*>(r.data) + f->offset, static_cast<std::size_t>(r.size - f->offset));
    text = text.substr(0, text.find('\0'));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    out += ' ';
    for (const char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
}

void render_record(std::string& out, tep_handle* tep, const tep_record& r, const std::string& name,
                   std::uint64_t ordinal) {
    if (r.missed_events > 0)
        fmt::format_to(std::back_inserter(out), "CPU:{} [LOST {} EVENTS]\n", r.cpu, r.missed_events);
    else if (r.missed_events < 0)
        fmt::format_to(std::back_inserter(out), "CPU:{} [LOST EVENTS]\n", r.cpu);
    if (r.size < 2) unreadable(name, fmt::format("record {} is too short", ordinal));
    tep_event* event = tep_find_event_by_record(tep, const_cast<tep_record*>(&r));
    if (!event || !event->name)
        unreadable(name, fmt::format("record {} has an event id the file does not describe", ordinal));
    const int pid = tep_data_pid(tep, const_cast<tep_record*>(&r));
    const char* comm = tep_data_comm_from_pid(tep, pid);
    // ftrace's print event (trace_marker) is "tracing_mark_write" in the text.
    const bool marker =
        event->system && std::strcmp(event->system, "ftrace") == 0 && std::strcmp(event->name, "print") == 0;
    append_line_start(out, comm ? comm : "<...>", pid, static_cast<unsigned>(r.cpu), r.ts,
                      marker ? "tracing_mark_write" : event->name);
    if (is_timer_event(event)) {
        out += ' ';
        if (!timer_fields(out, tep, event, r))
            unreadable(name, fmt::format("record {} ({}) lacks its fields", ordinal, event->name));
    } else if (is_softirq_event(event)) {
        out += ' ';
        if (!softirq_fields(out, event, r))
            unreadable(name, fmt::format("record {} ({}) lacks its fields", ordinal, event->name));
    } else if (marker) {
        append_marker_text(out, event, r);
    }
    out += '\n';
}

} // namespace

namespace {

// The rendering itself, from the copy (fd) on, written into `text_fd` a
// megabyte at a time. Throws InputError.
void render_trace_dat(int fd, const std::string& name, int text_fd) {
    // tracecmd_open_fd() takes the fd (tracecmd_close() closes it).
    Handle handle(tracecmd_open_fd(fd, TRACECMD_FL_LOAD_NO_PLUGINS));
    if (!handle) unreadable(name, "libtracecmd cannot open it (truncated, corrupt or an unknown version)");
    tep_handle* tep = tracecmd_get_tep(handle.get());
    const int cpus = tep ? tep_get_cpus(tep) : 0;
    if (!tep || cpus <= 0 || cpus > 65536) unreadable(name, "its header gives no CPUs");

    constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
    std::string out = fmt::format("cpus={}\n", cpus);
    out.reserve(kFlushBytes + 4096);
    const auto flush = [&] {
        if (!write_all(text_fd, out)) throw_temporary_file_error(name, "cannot write its text", errno);
        out.clear();
    };
    // Merge the CPUs by timestamp; on a tie the lowest CPU first, as the
    // kernel's trace iterator (peek_next_entry) and trace-cmd do.
    std::vector<Record> next(static_cast<std::size_t>(cpus));
    for (int cpu = 0; cpu < cpus; ++cpu) next[cpu].reset(tracecmd_read_data(handle.get(), cpu));
    std::uint64_t ordinal = 0;
    while (true) {
        int best = -1;
        for (int cpu = 0; cpu < cpus; ++cpu)
            if (next[cpu] && (best < 0 || next[cpu]->ts < next[best]->ts)) best = cpu;
        if (best < 0) break;
        ++ordinal;
        render_record(out, tep, *next[best], name, ordinal);
        if (out.size() >= kFlushBytes) flush();
        next[best].reset(tracecmd_read_data(handle.get(), best));
    }
    flush();
}

// The copy of a trace.dat (dat_fd, any offset) rendered into a new
// temporary file: its descriptor. libtracecmd runs in a child process: on
// a damaged file its error paths can crash (libtracecmd 1.3.1 dies in
// tracecmd_close() inside tracecmd_open_fd() when a version 6 file ends
// inside its CPU data), and the child's death is then this file's error,
// not timersim's. Throws InputError.
int render_to_temporary(int dat_fd, const std::string& name) {
    return render_in_child(name, kReader, [&](int text_fd) {
        // libtracecmd and libtraceevent print their warnings on stderr:
        // keep the error to our one line.
        tracecmd_set_loglevel(TEP_LOG_NONE);
        tep_set_loglevel(TEP_LOG_NONE);
        const int fd = ::dup(dat_fd);
        if (fd < 0 || ::lseek(fd, 0, SEEK_SET) != 0)
            unreadable(name, fmt::format("cannot reopen its temporary copy ({})", std::strerror(errno)));
        render_trace_dat(fd, name, text_fd);
    });
}

Fd temporary_copy_file(const std::string& name) {
    Fd copy{open_temporary_file()};
    if (copy.fd < 0) throw_temporary_file_error(name, "no temporary file to read it from", errno);
    return copy;
}

} // namespace

std::unique_ptr<InputFile> trace_dat_text(InputFile& in) {
    const Fd copy = temporary_copy_file(in.name());
    std::string chunk(std::size_t{1} << 16, '\0');
    while (true) {
        const std::size_t got = in.read(chunk.data(), chunk.size());
        if (!write_all(copy.fd, std::string_view(chunk).substr(0, got)))
            throw_temporary_file_error(in.name(), "cannot write its temporary copy", errno);
        if (got < chunk.size()) break;
    }
    if (in.failed()) throw InputError(in.name() + ": " + in.error());
    return InputFile::from_temporary(render_to_temporary(copy.fd, in.name()), in.name());
}

} // namespace timersim
