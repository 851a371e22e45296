#include "workloads/traces/input/lttng_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace timersim {

namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
// A line of a stream's file: its time and CPU, then the line. Fixed width,
// so that the merge compares keys as text.
constexpr std::size_t kKeyBytes = 20 + 1 + 10 + 1;

[[noreturn]] void unreadable(const std::string& name, std::string_view why) {
    throw_unreadable(name, {.what = "an LTTng trace (CTF)", .library = "libbabeltrace2", .reader = "LTTng trace"},
                     why);
}

const bt_field* member(const bt_field* structure, const char* name) {
    if (!structure || bt_field_get_class_type(structure) != BT_FIELD_CLASS_TYPE_STRUCTURE) return nullptr;
    return bt_field_structure_borrow_member_field_by_name_const(structure, name);
}

std::optional<std::uint64_t> integer(const bt_field* structure, const char* name) {
    const bt_field* f = member(structure, name);
    if (!f) return std::nullopt;
    const bt_field_class_type type = bt_field_get_class_type(f);
    if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return bt_field_integer_unsigned_get_value(f);
    if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return static_cast<std::uint64_t>(bt_field_integer_signed_get_value(f));
    return std::nullopt;
}

std::optional<std::string_view> text(const bt_field* structure, const char* name) {
    const bt_field* f = member(structure, name);
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING) return std::nullopt;
    return std::string_view(bt_field_string_get_value(f));
}

// A header or comm value on one line, without blanks a reader would split it at.
std::string one_word(std::string_view s) {
    std::string out;
    for (const char c : s) out += static_cast<unsigned char>(c) <= 0x20 || c == 0x7f ? '_' : c;
    return out.empty() ? "<...>" : out;
}

// A message on one line: without the newline it ends with, other control
// bytes as blanks.
std::string one_line(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    std::string out(s);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return out;
}

std::string environment(const bt_trace* trace, const char* key) {
    const bt_value* v = bt_trace_borrow_environment_entry_value_by_name_const(trace, key);
    if (!v) return {};
    switch (bt_value_get_type(v)) {
    case BT_VALUE_TYPE_STRING: return bt_value_string_get(v);
    case BT_VALUE_TYPE_SIGNED_INTEGER: return std::to_string(bt_value_integer_signed_get(v));
    case BT_VALUE_TYPE_UNSIGNED_INTEGER: return std::to_string(bt_value_integer_unsigned_get(v));
    default: return {};
    }
}

// 4.11 made timer_start print cpu= idx= flags= (a release "4.11.0-..." or later).
TimerFlagsText flags_text(std::string_view release) {
    unsigned major = 0, minor = 0;
    const char* p = release.data();
    const char* end = p + release.size();
    auto r = std::from_chars(p, end, major);
    if (r.ec == std::errc() && r.ptr < end && *r.ptr == '.') std::from_chars(r.ptr + 1, end, minor);
    return major > 4 || (major == 4 && minor >= 11) ? TimerFlagsText::cpu_idx : TimerFlagsText::word;
}

bool is_timer_event(std::string_view n) {
    return n == "timer_init" || n == "timer_start" || n == "timer_cancel" || n == "timer_expire_entry" ||
           n == "timer_expire_exit";
}

} // namespace

LttngStreamText::LttngStreamText(LttngText& text, unsigned index)
    : text_(text), index_(index), file_(open_temporary_file()) {
    if (file_.fd < 0) throw_temporary_file_error(text.name_, "no temporary file for its text", errno);
}

bool LttngStreamText::message(const bt_message* m) noexcept {
    try {
        switch (bt_message_get_type(m)) {
        case BT_MESSAGE_TYPE_STREAM_BEGINNING: stream_beginning(m); break;
        case BT_MESSAGE_TYPE_EVENT: event(m); break;
        case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
            std::uint64_t count = 0;
            const bool known =
                bt_message_discarded_events_get_count(m, &count) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
            lost(count, known);
            break;
        }
        case BT_MESSAGE_TYPE_DISCARDED_PACKETS: lost(0, false); break;
        default: break;
        }
        return true;
    } catch (const std::exception& e) {
        text_.keep_error(e.what());
    } catch (...) {
        text_.keep_error("unknown error");
    }
    return false;
}

bool LttngStreamText::finish() noexcept {
    try {
        show_lost(last_ns_); // discarded at the stream's end: at its last event's time
        flush();
        return true;
    } catch (const std::exception& e) {
        text_.keep_error(e.what());
    }
    return false;
}

void LttngStreamText::flush() {
    if (!write_all(file_.fd, out_)) throw_temporary_file_error(text_.name_, "cannot write its text", errno);
    out_.clear();
}

void LttngStreamText::show_lost(std::uint64_t ns) {
    if (lost_ == 0 && !lost_unknown_) return;
    fmt::format_to(std::back_inserter(out_), "{:020} {:010} ", ns, cpu_);
    if (lost_unknown_) fmt::format_to(std::back_inserter(out_), "CPU:{} [LOST EVENTS]\n", cpu_);
    else fmt::format_to(std::back_inserter(out_), "CPU:{} [LOST {} EVENTS]\n", cpu_, lost_);
    lost_ = 0;
    lost_unknown_ = false;
}

void LttngStreamText::lost(std::uint64_t count, bool known) {
    if (known) lost_ += count;
    else lost_unknown_ = true;
}

void LttngStreamText::stream_beginning(const bt_message* m) {
    const bt_trace* trace = bt_stream_borrow_trace_const(bt_message_stream_beginning_borrow_stream_const(m));
    std::string domain = environment(trace, "domain");
    const std::string tracer = environment(trace, "tracer_name");
    kernel_ = domain == "kernel" || (domain.empty() && tracer == "lttng-modules");
    if (!kernel_) return;
    const std::string release = environment(trace, "kernel_release");
    flags_text_ = flags_text(release);
    if (text_.kernel_seen_) return;
    text_.kernel_seen_ = true;
    text_.kernel_release_ = one_word(release);
    text_.hostname_ = one_word(environment(trace, "hostname"));
    text_.tracer_ = fmt::format("{} {}.{}.{}", one_word(tracer), environment(trace, "tracer_major"),
                                environment(trace, "tracer_minor"), environment(trace, "tracer_patchlevel"));
}

void LttngStreamText::event(const bt_message* m) {
    const bt_event* e = bt_message_event_borrow_event_const(m);
    const char* class_name = bt_event_class_get_name(bt_event_borrow_class_const(e));
    if (!kernel_) {
        const bt_trace* trace = bt_stream_borrow_trace_const(bt_event_borrow_stream_const(e));
        std::string domain = environment(trace, "domain");
        ++text_.skipped_by_domain_[domain.empty() ? "unknown" : one_word(domain)];
        return;
    }
    std::string name = class_name ? class_name : "unnamed";
    // Newer lttng-modules name irq:softirq_entry irq_softirq_entry and
    // timer:hrtimer_init timer_hrtimer_init: the kernel's names, as its text
    // shows them.
    if (name.starts_with("irq_softirq_")) name.erase(0, 4);
    else if (name.starts_with("timer_hrtimer_") || name.starts_with("timer_itimer_")) name.erase(0, 6);
    // A write to /proc/lttng-logger is LTTng's write to ftrace's
    // trace_marker: shown as ftrace shows that, so that validate finds the
    // workload's start marker in it.
    else if (name == "lttng_logger") name = "tracing_mark_write";
    for (char& c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';

    const bt_clock_class* clock = bt_message_event_borrow_stream_class_default_clock_class_const(m);
    if (!clock) unreadable(text_.name_, fmt::format("its {} events have no timestamps (no clock)", name));
    const std::uint64_t cycles = bt_clock_snapshot_get_value(bt_message_event_borrow_default_clock_snapshot_const(m));
    const std::uint64_t frequency = bt_clock_class_get_frequency(clock);
    std::uint64_t ns = frequency == 1000000000
                           ? cycles
                           : static_cast<std::uint64_t>(static_cast<unsigned __int128>(cycles) * 1000000000u /
                                                        (frequency ? frequency : 1));
    if (any_ && ns < last_ns_) {
        ++text_.backwards_;
        text_.most_backwards_ns_ = std::max(text_.most_backwards_ns_, last_ns_ - ns);
        ns = last_ns_;
    }
    any_ = true;
    last_ns_ = ns;

    const bt_packet* packet = bt_event_borrow_packet_const(e);
    const bt_field* packet_context = packet ? bt_packet_borrow_context_field_const(packet) : nullptr;
    const bt_field* common = bt_event_borrow_common_context_field_const(e);
    const bt_field* specific = bt_event_borrow_specific_context_field_const(e);
    std::optional<std::uint64_t> cpu = integer(packet_context, "cpu_id");
    if (!cpu) cpu = integer(common, "cpu_id");
    if (!cpu) unreadable(text_.name_, fmt::format("its {} events carry no cpu_id (not an LTTng kernel trace)", name));
    cpu_ = static_cast<unsigned>(*cpu);

    std::string comm = comm_;
    std::int64_t tid = tid_;
    for (const bt_field* context : {specific, common}) {
        if (const auto p = text(context, "procname")) comm = one_word(*p);
        if (const auto t = integer(context, "tid")) tid = static_cast<std::int64_t>(*t);
    }

    show_lost(ns);
    fmt::format_to(std::back_inserter(out_), "{:020} {:010} ", ns, cpu_);
    append_line_start(out_, comm, tid, cpu_, ns, name);
    const bt_field* payload = bt_event_borrow_payload_field_const(e);
    const auto lacks = [&](const char* fields) {
        unreadable(text_.name_, fmt::format("its {} event at {}.{:09} on CPU {} lacks its fields ({})", name,
                                            ns / 1000000000, ns % 1000000000, cpu_, fields));
    };
    if (is_timer_event(name)) {
        const auto timer = integer(payload, "timer");
        if (!timer) lacks("timer");
        fmt::format_to(std::back_inserter(out_), " timer=0x{:x}", *timer);
        if (name == "timer_start") {
            const auto function = integer(payload, "function");
            const auto expires = integer(payload, "expires");
            const auto now = integer(payload, "now");
            if (!function || !expires || !now) lacks("timer, function, expires, now");
            fmt::format_to(std::back_inserter(out_), " function=0x{:x} expires={} [timeout={}]", *function, *expires,
                           static_cast<std::int64_t>(*expires - *now));
            if (const auto bucket = integer(payload, "bucket_expiry"))
                fmt::format_to(std::back_inserter(out_), " bucket_expiry={}", *bucket);
            if (const auto flags = integer(payload, "flags")) append_timer_flags(out_, *flags, flags_text_);
        } else if (name == "timer_expire_entry") {
            const auto function = integer(payload, "function");
            const auto now = integer(payload, "now");
            if (!now) lacks("timer, now");
            if (function) fmt::format_to(std::back_inserter(out_), " function=0x{:x}", *function);
            fmt::format_to(std::back_inserter(out_), " now={}", *now);
            if (const auto baseclk = integer(payload, "baseclk"))
                fmt::format_to(std::back_inserter(out_), " baseclk={}", *baseclk);
        }
    } else if (name == "softirq_entry" || name == "softirq_exit" || name == "softirq_raise") {
        const auto vec = integer(payload, "vec");
        if (!vec) lacks("vec");
        out_ += ' ';
        append_softirq_fields(out_, *vec);
    } else if (name == "tracing_mark_write") {
        if (const auto msg = text(payload, "msg")) {
            out_ += ' ';
            out_ += one_line(*msg);
        }
    } else if (name == "sched_switch") {
        // The events after it on this CPU are the next task's.
        if (const auto next = text(payload, "next_comm")) comm_ = one_word(*next);
        if (const auto next = integer(payload, "next_tid")) tid_ = static_cast<std::int64_t>(*next);
    }
    out_ += '\n';
    if (out_.size() >= kFlushBytes) flush();
}

LttngStreamText& LttngText::add_stream() {
    return streams_.emplace_back(*this, static_cast<unsigned>(streams_.size()));
}

void LttngText::keep_error(const char* what) noexcept {
    try {
        if (error_.empty()) error_ = what;
    } catch (...) {
    }
}

void LttngText::throw_error() const {
    if (!error_.empty()) throw InputError(error_);
}

namespace {

// A stream's file, read line by line for the merge.
struct StreamLines {
    std::FILE* file = nullptr;
    char* line = nullptr;
    std::size_t capacity = 0;
    ssize_t length = -1; // the current line's, -1 at the end
    ~StreamLines() {
        std::free(line);
        if (file) std::fclose(file);
    }
    void next() { length = file ? ::getline(&line, &capacity, file) : -1; }
    bool valid() const { return length > static_cast<ssize_t>(kKeyBytes); }
    std::string_view key() const { return {line, kKeyBytes}; }
};

} // namespace

void LttngText::write_merged(int fd) {
    if (!kernel_seen_ && !skipped_by_domain_.empty())
        throw InputError(fmt::format("{}: an LTTng {} trace, not a kernel one: timersim reads the kernel's timer "
                                     "events (lttng-modules)",
                                     name_, skipped_by_domain_.contains("ust") ? "userspace (UST)"
                                                                               : skipped_by_domain_.begin()->first));
    std::string out = "# tracer: ";
    out += tracer_.empty() ? "lttng" : tracer_;
    out += " (LTTng kernel trace, CTF, read with libbabeltrace2)\n";
    if (!kernel_release_.empty()) fmt::format_to(std::back_inserter(out), "# kernel: {}\n", kernel_release_);
    if (!hostname_.empty()) fmt::format_to(std::back_inserter(out), "# hostname: {}\n", hostname_);
    if (backwards_ > 0)
        fmt::format_to(std::back_inserter(out),
                       "# lttng: {} events earlier than the event before them on their stream (up to {} ns): shown "
                       "at its time\n",
                       backwards_, most_backwards_ns_);
    for (const auto& [domain, count] : skipped_by_domain_)
        fmt::format_to(std::back_inserter(out), "# lttng: {} events of {} traces skipped\n", count, domain);

    std::vector<StreamLines> lines(streams_.size());
    for (std::size_t i = 0; i < streams_.size(); ++i) {
        const int copy = ::dup(streams_[i].file_.fd);
        if (copy < 0 || ::lseek(copy, 0, SEEK_SET) != 0 || !(lines[i].file = ::fdopen(copy, "r"))) {
            if (copy >= 0) ::close(copy);
            throw_temporary_file_error(name_, "cannot read its text back", errno);
        }
        lines[i].next();
    }
    const auto flush = [&] {
        if (!write_all(fd, out)) throw_temporary_file_error(name_, "cannot write its text", errno);
        out.clear();
    };
    while (true) {
        // The earliest line; on a tie the lowest CPU, then the first stream.
        StreamLines* best = nullptr;
        for (StreamLines& s : lines)
            if (s.valid() && (!best || s.key() < best->key())) best = &s;
        if (!best) break;
        out.append(best->line + kKeyBytes, static_cast<std::size_t>(best->length) - kKeyBytes);
        if (out.size() >= kFlushBytes) flush();
        best->next();
    }
    flush();
}

} // namespace timersim
