#include "workloads/traces/input/trace_dat.hpp"

#include <fmt/format.h>

// libtracecmd's header includes tracefs.h, whose inline functions are not
// valid C++ (an int passed as an enum); trace-cmd.h itself uses nothing from
// it, so its include guard keeps it out.
#define _TRACE_FS_H
#include <trace-cmd.h> // libtracecmd (includes libtraceevent's event-parse.h)
#undef _TRACE_FS_H

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace timersim {

bool is_trace_dat(std::string_view head) noexcept { return head.starts_with(kTraceDatMagic); }

namespace {

[[noreturn]] void unreadable(const std::string& name, std::string_view why) {
    throw InputError(fmt::format("{}: a trace.dat (trace-cmd) that cannot be read: {}", name, why));
}

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

// include/linux/timer.h (6.1): TIMER_CPUMASK, the four flag bits, TIMER_ARRAYSHIFT.
constexpr std::uint64_t kCpuMask = 0x0003FFFF;
constexpr unsigned kArrayShift = 22;

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
        if (!flags) {
            // before 4.2: no flags field, nothing printed
        } else if (prints(event, "cpu=")) {
            fmt::format_to(std::back_inserter(out), " cpu={}", *flags & kCpuMask);
            if (prints(event, "idx="))
                fmt::format_to(std::back_inserter(out), " idx={}", (*flags >> kArrayShift) & 0x3FF);
            out += " flags=";
            const char* sep = "";
            static constexpr std::pair<std::uint64_t, const char*> kBits[] = {
                {0x00040000, "M"}, {0x00080000, "D"}, {0x00100000, "P"}, {0x00200000, "I"}};
            for (const auto& [bit, letter] : kBits) {
                if (*flags & bit) {
                    out += sep;
                    out += letter;
                    sep = "|";
                }
            }
        } else {
            // 4.2-4.10 print the whole flags word, its low bits the CPU.
            fmt::format_to(std::back_inserter(out), " flags=0x{:08x}", *flags & 0xFFFFFFFF);
        }
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
    static constexpr const char* kSoftirqNames[] = {"HI",      "TIMER", "NET_TX",  "NET_RX",  "BLOCK",
                                                    "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"};
    const auto vec = field(event, r, "vec");
    if (!vec) return false;
    fmt::format_to(std::back_inserter(out), "vec={} [action={}]", *vec,
                   *vec < std::size(kSoftirqNames) ? kSoftirqNames[*vec] : "UNKNOWN");
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
    // The kernel's /sys/kernel/tracing/trace: ns2usecs() rounds to the µs.
    const std::uint64_t us = (r.ts + 500) / 1000;
    // ftrace's print event (trace_marker) is "tracing_mark_write" in the text.
    const bool marker =
        event->system && std::strcmp(event->system, "ftrace") == 0 && std::strcmp(event->name, "print") == 0;
    fmt::format_to(std::back_inserter(out), "{:>16}-{:<7} [{:03}] {}.{:06}: {}:", comm ? comm : "<...>", pid, r.cpu,
                   us / 1000000, us % 1000000, marker ? "tracing_mark_write" : event->name);
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

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ENOSPC; // write() says nothing else when it writes nothing
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::string read_to_end(int fd) {
    std::string out;
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

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
    Fd text{open_temporary_file()};
    if (text.fd < 0) throw_temporary_file_error(name, "no temporary file for its text", errno);
    int error_pipe[2];
    if (::pipe(error_pipe) != 0) unreadable(name, fmt::format("no pipe ({})", std::strerror(errno)));
    Fd error_read{error_pipe[0]}, error_write{error_pipe[1]};
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0) unreadable(name, fmt::format("cannot fork to read it ({})", std::strerror(errno)));
    if (child == 0) {
        ::close(error_read.release());
        // A crash must kill the child, whatever handlers the parent set (a
        // test framework's, a sanitizer's); and libtracecmd also prints
        // some complaints with plain fprintf(stderr): off to /dev/null.
        for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
        if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
            ::dup2(null, STDOUT_FILENO);
            ::dup2(null, STDERR_FILENO);
            ::close(null);
        }
        int status = 0;
        try {
            // libtracecmd and libtraceevent print their warnings on stderr:
            // keep the error to our one line.
            tracecmd_set_loglevel(TEP_LOG_NONE);
            tep_set_loglevel(TEP_LOG_NONE);
            const int fd = ::dup(dat_fd);
            if (fd < 0 || ::lseek(fd, 0, SEEK_SET) != 0)
                unreadable(name, fmt::format("cannot reopen its temporary copy ({})", std::strerror(errno)));
            render_trace_dat(fd, name, text.fd);
        } catch (const std::exception& e) {
            write_all(error_write.fd, e.what());
            status = 1;
        }
        ::_exit(status); // no destructors, atexit handlers or leak checks of the parent's state
    }
    ::close(error_write.release());
    const std::string error = read_to_end(error_read.fd);
    int status = 0;
    pid_t waited = 0;
    do waited = ::waitpid(child, &status, 0);
    while (waited < 0 && errno == EINTR);
    // Without its status (ECHILD: SIGCHLD ignored, the child reaped by
    // the kernel), the text may be cut short: not a success.
    if (waited < 0)
        throw InputError(
            fmt::format("{}: cannot learn how its trace.dat reader ended ({})", name, std::strerror(errno)));
    if (WIFSIGNALED(status))
        unreadable(name,
                   fmt::format("libtracecmd failed on it ({}): truncated or corrupt", ::strsignal(WTERMSIG(status))));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (!error.empty()) throw InputError(error);
        unreadable(name, "its reader stopped early");
    }
    return text.release();
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
