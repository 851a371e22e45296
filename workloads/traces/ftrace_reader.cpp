#include "workloads/traces/ftrace_reader.hpp"

#include "workloads/traces/key_index.hpp"
#include "workloads/traces/line_source.hpp"
#include "workloads/traces/parse_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace timersim {

using detail::LineSource;

std::string_view to_string(FtraceEventType type) noexcept {
    switch (type) {
    case FtraceEventType::timer_init: return "timer_init";
    case FtraceEventType::timer_start: return "timer_start";
    case FtraceEventType::timer_cancel: return "timer_cancel";
    case FtraceEventType::timer_expire_entry: return "timer_expire_entry";
    case FtraceEventType::timer_expire_exit: return "timer_expire_exit";
    }
    return "?";
}

std::optional<Jiffies> FtraceEvent::jiffies() const noexcept {
    if (type == FtraceEventType::timer_start) return expires - static_cast<Jiffies>(timeout);
    if (type == FtraceEventType::timer_expire_entry) return now;
    return std::nullopt;
}

namespace {

using namespace std::string_view_literals;

// "[123]"
bool bracketed_cpu(std::string_view token, std::uint32_t& cpu) {
    if (token.size() < 3 || token.front() != '[' || token.back() != ']') return false;
    return detail::parse_uint(token.substr(1, token.size() - 2), cpu);
}

// Last blank-separated token of `s` (which has no trailing blanks); shrinks `s`.
std::string_view pop_last_token(std::string_view& s) {
    std::size_t end = s.size();
    while (end > 0 && detail::is_blank(s[end - 1])) --end;
    std::size_t begin = end;
    while (begin > 0 && !detail::is_blank(s[begin - 1])) --begin;
    const std::string_view token = s.substr(begin, end - begin);
    s = s.substr(0, begin);
    return token;
}

bool looks_like_timestamp(std::string_view token) {
    if (token.empty() || !detail::is_digit(token.front())) return false;
    bool dot = false;
    for (const char c : token) {
        if (c == '.') {
            if (dot) return false;
            dot = true;
        } else if (!detail::is_digit(c)) {
            return false;
        }
    }
    return token.back() != '.';
}

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

} // namespace

// ---------------------------------------------------------------------------
// FtraceReader

struct FtraceReader::Impl {
    Impl(LineSource src, std::string name, std::optional<unsigned> hz)
        : source(std::move(src)), file(std::move(name)), hz_option(hz) {}

    LineSource source;
    std::string file;
    std::optional<unsigned> hz_option;
    std::optional<unsigned> hz_line; // from "# hz=N"
    unsigned hz = 0;                 // resolved at the first event line
    bool seen_event = false;
    std::optional<std::uint64_t> first_ts;
    std::uint64_t last_ts = 0;
    FtraceReaderStats stats;

    [[noreturn]] void fail(std::string_view field, std::string message) const {
        detail::fail_at(source, file, field, std::move(message));
    }

    bool read_line(std::string_view& line) {
        return detail::read_line_or_throw(source, file, line);
    }

    void comment_line(std::string_view text);
    bool other_line(std::string_view text);
    bool next(FtraceEvent& e);
    std::uint64_t parse_timestamp(std::string_view token);
    void parse_cpu(std::string_view prefix, FtraceEvent& e);
    void parse_info(std::string_view info, FtraceEvent& e);
    void count_other(std::string_view name) {
        ++stats.other_events;
        const auto it = stats.other_by_name.find(name);
        if (it != stats.other_by_name.end())
            ++it->second;
        else
            stats.other_by_name.emplace(std::string(name), 1);
    }
};

void FtraceReader::Impl::comment_line(std::string_view text) {
    // "# hz=N" gives HZ; any other comment (the tracer header) is skipped.
    text.remove_prefix(1);
    text = detail::trim(text);
    if (!text.starts_with("hz=")) return;
    const std::string_view value = text.substr(3);
    unsigned hz_value = 0;
    if (!detail::parse_uint(value, hz_value) || hz_value < 1 || hz_value > kMaxTraceHz)
        fail("hz", fmt::format("bad '# hz=' line: {} is not an integer 1..{}", quote_for_error(value), kMaxTraceHz));
    if (seen_event) fail("hz", "'# hz=' line after the first event: put it at the top");
    if (hz_line && *hz_line != hz_value)
        fail("hz", fmt::format("'# hz={}' contradicts the earlier '# hz={}'", hz_value, *hz_line));
    if (hz_option && *hz_option != hz_value)
        fail("hz", fmt::format("'# hz={}' contradicts --hz {}", hz_value, *hz_option));
    hz_line = hz_value;
}

bool FtraceReader::Impl::other_line(std::string_view text) {
    // trace-cmd report: "cpus=2", "version = 6", "CPU 1 is empty";
    // ftrace and trace-cmd: "CPU:1 [LOST 12 EVENTS]", "CPU:1 [12 EVENTS DROPPED]";
    // stack traces: " => func".
    if (text.starts_with("cpus=") || text.starts_with("version =") || text.starts_with("=>")) return true;
    if (text.starts_with("CPU ") && text.ends_with("is empty")) return true;
    if (text.starts_with("CPU:")) {
        const auto lost = text.find("[LOST ");
        const auto dropped = text.find("EVENTS DROPPED]");
        if (lost != std::string_view::npos || dropped != std::string_view::npos) {
            ++stats.lost_event_markers;
            std::string_view rest = lost != std::string_view::npos ? text.substr(lost + 6)
                                                                   : text.substr(text.find('[') + 1);
            std::string_view count;
            std::uint64_t n = 0;
            if (detail::next_token(rest, count) && detail::parse_uint(count, n)) stats.lost_events += n;
        }
        return true;
    }
    return false;
}

std::uint64_t FtraceReader::Impl::parse_timestamp(std::string_view token) {
    const auto dot = token.find('.');
    if (dot == std::string_view::npos)
        fail("timestamp", fmt::format("timestamp {} is not in seconds: record with a clock counting time (local, "
                                      "global, mono, boot), not a counter (x86-tsc, counter)",
                                      quote_for_error(token)));
    const std::string_view frac = token.substr(dot + 1);
    std::uint64_t seconds = 0;
    std::uint64_t fraction = 0;
    if (frac.size() > 9 || !detail::parse_uint(frac, fraction))
        fail("timestamp", fmt::format("bad timestamp {}: expected seconds with 1 to 9 decimals",
                                      quote_for_error(token)));
    if (!detail::parse_uint(token.substr(0, dot), seconds) || seconds > 18000000000ull)
        fail("timestamp", fmt::format("timestamp {} is out of range", quote_for_error(token)));
    for (std::size_t i = frac.size(); i < 9; ++i) fraction *= 10;
    return seconds * 1000000000ull + fraction;
}

void FtraceReader::Impl::parse_cpu(std::string_view prefix, FtraceEvent& e) {
    // ftrace:           "  <idle>-0       [001] ..s1."  (flags column optional,
    //                   "(  tgid)" column optional)
    // trace-cmd report: "  <idle>-0     [001]"
    // trace-cmd -l:     "<idle>-0       1d..2."        (CPU and flags run together)
    std::string_view rest = prefix;
    const std::string_view last = pop_last_token(rest);
    if (bracketed_cpu(last, e.line_cpu)) return;
    const std::string_view before = pop_last_token(rest);
    if (bracketed_cpu(before, e.line_cpu)) return;
    std::size_t digits = 0;
    while (digits < last.size() && detail::is_digit(last[digits])) ++digits;
    if (digits > 0 && digits < last.size() && detail::parse_uint(last.substr(0, digits), e.line_cpu)) return;
    fail("cpu", "no CPU column ('[001]', or trace-cmd -l's '1d..2.') before the timestamp");
}

namespace {

bool parse_pointer(std::string_view text, std::uint64_t& value) {
    if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
    if (text.empty() || text.size() > 16) return false;
    for (const char c : text)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return detail::parse_uint(text, value, 16);
}

} // namespace

void FtraceReader::Impl::parse_info(std::string_view info, FtraceEvent& e) {
    std::string_view timer, expires, timeout, cpu, idx, flags, now, baseclk, bucket;
    bool have_flags = false;
    std::string_view token;
    std::string_view last_key;
    while (detail::next_token(info, token)) {
        if (token.front() == '[') {
            std::string_view inner = token.substr(1);
            if (!inner.empty() && inner.back() == ']') inner.remove_suffix(1);
            std::string_view key, value;
            if (detail::split_key_value(inner, key, value)) {
                if (key == "timeout") timeout = value;
                last_key = key;
            } else if (last_key == "function") {
                e.module = inner; // "function=fn [module]"
            }
            continue;
        }
        std::string_view key, value;
        if (!detail::split_key_value(token, key, value)) continue;
        last_key = key;
        if (key == "timer") timer = value;
        else if (key == "function") e.function = value;
        else if (key == "expires") expires = value;
        else if (key == "cpu") cpu = value;
        else if (key == "idx") idx = value;
        else if (key == "flags") { flags = value; have_flags = true; }
        else if (key == "now") now = value;
        else if (key == "baseclk") baseclk = value;
        else if (key == "bucket_expiry") bucket = value;
    }
    const std::string_view name = to_string(e.type);
    if (timer.empty()) fail("timer", fmt::format("{} without timer=", name));
    if (!parse_pointer(timer, e.timer))
        fail("timer", fmt::format("bad timer {}: expected a pointer in hex", quote_for_error(timer)));

    if (e.type == FtraceEventType::timer_start) {
        if (expires.empty()) fail("expires", "timer_start without expires=");
        if (!detail::parse_uint(expires, e.expires))
            fail("expires", fmt::format("bad expires {}: expected jiffies", quote_for_error(expires)));
        if (timeout.empty()) fail("timeout", "timer_start without [timeout=]");
        if (!detail::parse_int(timeout, e.timeout))
            fail("timeout", fmt::format("bad timeout {}: expected a signed number of jiffies", quote_for_error(timeout)));
        if (!cpu.empty()) {
            std::uint32_t v = 0;
            if (!detail::parse_uint(cpu, v) || v > kFtraceCpuMask)
                fail("cpu", fmt::format("bad cpu {}: expected 0..{}", quote_for_error(cpu), kFtraceCpuMask));
            e.cpu = v;
        }
        if (!idx.empty()) {
            std::uint32_t v = 0;
            if (!detail::parse_uint(idx, v) || v > 1023)
                fail("idx", fmt::format("bad idx {}: expected 0..1023", quote_for_error(idx)));
            e.idx = v;
        }
        if (!bucket.empty()) {
            Jiffies v = 0;
            if (!detail::parse_uint(bucket, v))
                fail("bucket_expiry", fmt::format("bad bucket_expiry {}: expected jiffies", quote_for_error(bucket)));
            e.bucket_expiry = v;
        }
        if (have_flags) {
            e.flags_known = true;
            bool hex = false;
            std::string_view rest = flags;
            while (!rest.empty()) {
                const auto bar = rest.find('|');
                const std::string_view part = rest.substr(0, bar);
                std::uint64_t bits = 0;
                if (part == "M") e.flags |= kFtraceMigrating;
                else if (part == "D") e.flags |= kFtraceDeferrable;
                else if (part == "P") e.flags |= kFtracePinned;
                else if (part == "I") e.flags |= kFtraceIrqsafe;
                else if ((part.starts_with("0x") || part.starts_with("0X")) && part.size() <= 10 &&
                         detail::parse_uint(part.substr(2), bits, 16)) {
                    e.flags |= static_cast<std::uint32_t>(bits);
                    hex = true;
                } else {
                    fail("flags", fmt::format("bad flags {}: expected M, D, P, I joined by '|', or 0x...",
                                              quote_for_error(flags)));
                }
                if (bar == std::string_view::npos) break;
                rest.remove_prefix(bar + 1);
            }
            // 4.2-4.10 print the raw flags word: its low bits are the CPU.
            if (hex && !e.cpu) e.cpu = e.flags & kFtraceCpuMask;
            e.flags &= kFtraceMigrating | kFtraceDeferrable | kFtracePinned | kFtraceIrqsafe;
        }
    } else if (e.type == FtraceEventType::timer_expire_entry) {
        if (now.empty()) fail("now", "timer_expire_entry without now=");
        Jiffies v = 0;
        if (!detail::parse_uint(now, v)) fail("now", fmt::format("bad now {}: expected jiffies", quote_for_error(now)));
        e.now = v;
        if (!baseclk.empty()) {
            if (!detail::parse_uint(baseclk, v))
                fail("baseclk", fmt::format("bad baseclk {}: expected jiffies", quote_for_error(baseclk)));
            e.baseclk = v;
        }
    }
}

bool FtraceReader::Impl::next(FtraceEvent& e) {
    std::string_view line;
    while (read_line(line)) {
        ++stats.lines;
        std::string_view text = detail::trim(line);
        if (text.empty()) continue;
        if (text.front() == '#') {
            comment_line(text);
            continue;
        }
        if (other_line(text)) continue;

        // The timestamp: the first token that ends in ':' (followed by a blank
        // or the end) and is a number. Comm names may contain ':' themselves.
        std::size_t from = 0;
        std::size_t colon = 0;
        std::size_t ts_begin = 0;
        while (true) {
            colon = line.find(':', from);
            if (colon == std::string_view::npos)
                fail("line", fmt::format("not an event line: expected 'TASK-PID [CPU] TIMESTAMP: EVENT: ...', got {}",
                                         quote_for_error(text)));
            from = colon + 1;
            if (colon + 1 < line.size() && !detail::is_blank(line[colon + 1])) continue;
            ts_begin = colon;
            while (ts_begin > 0 && !detail::is_blank(line[ts_begin - 1])) --ts_begin;
            if (looks_like_timestamp(line.substr(ts_begin, colon - ts_begin))) break;
        }
        const std::uint64_t ts = parse_timestamp(line.substr(ts_begin, colon - ts_begin));

        if (!seen_event) {
            seen_event = true;
            if (hz_option) hz = *hz_option;
            else if (hz_line) hz = *hz_line;
            else fail("hz", "HZ unknown: pass --hz or put a line '# hz=N' before the first event");
            first_ts = ts;
        }
        if (ts < last_ts)
            fail("timestamp", fmt::format("timestamp {}.{:09} is before the previous event's {}.{:09}: lines must "
                                          "be in time order",
                                          ts / 1000000000, ts % 1000000000, last_ts / 1000000000,
                                          last_ts % 1000000000));
        last_ts = ts;

        // The event name, then its text.
        std::string_view rest = detail::trim(line.substr(colon + 1));
        if (rest.starts_with("timer:timer_")) rest.remove_prefix(6); // perf script prints system:event
        std::size_t name_end = 0;
        while (name_end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[name_end])) ||
                                          rest[name_end] == '_'))
            ++name_end;
        if (name_end == 0 || name_end == rest.size() || rest[name_end] != ':') {
            count_other("(other lines)");
            continue;
        }
        const std::string_view name = rest.substr(0, name_end);
        if (name == "timer_start") e.type = FtraceEventType::timer_start;
        else if (name == "timer_cancel") e.type = FtraceEventType::timer_cancel;
        else if (name == "timer_expire_entry") e.type = FtraceEventType::timer_expire_entry;
        else if (name == "timer_expire_exit") e.type = FtraceEventType::timer_expire_exit;
        else if (name == "timer_init") e.type = FtraceEventType::timer_init;
        else {
            count_other(name);
            continue;
        }
        const FtraceEventType type = e.type;
        e = FtraceEvent{};
        e.type = type;
        e.line = source.line_number();
        e.timestamp_ns = ts;
        parse_cpu(detail::trim(line.substr(0, ts_begin)), e);
        parse_info(rest.substr(name_end + 1), e);
        ++stats.timer_events;
        return true;
    }
    return false;
}

FtraceReader::FtraceReader(std::istream& in, std::string file_name, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxFtraceLine), std::move(file_name), hz)) {}

FtraceReader::FtraceReader(std::FILE* in, std::string file_name, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxFtraceLine), std::move(file_name), hz)) {}

FtraceReader::FtraceReader(InputFile& in, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxFtraceLine), in.name(), hz)) {}

FtraceReader::~FtraceReader() = default;

bool FtraceReader::next(FtraceEvent& event) { return impl_->next(event); }
unsigned FtraceReader::hz() const noexcept { return impl_->hz; }
std::optional<std::uint64_t> FtraceReader::first_timestamp_ns() const noexcept { return impl_->first_ts; }
const FtraceReaderStats& FtraceReader::stats() const noexcept { return impl_->stats; }
const std::string& FtraceReader::file_name() const noexcept { return impl_->file; }
std::uint64_t FtraceReader::line() const noexcept { return impl_->source.line_number(); }
void FtraceReader::fail(std::string_view field, std::string message) const { impl_->fail(field, std::move(message)); }

// ---------------------------------------------------------------------------
// FtraceImporter

namespace {

enum class Pending : std::uint8_t { unseen, pending, idle };

struct TimerState {
    std::uint64_t pointer = 0;
    Pending state = Pending::unseen;
    bool held = false;            // a timer_cancel of this timer awaits its meaning
    std::uint32_t held_cpu = 0;
    std::uint64_t held_time = 0;  // relative ns
    std::uint64_t held_seq = 0;   // its slot in the output queue
};

enum class Slot : std::uint8_t { ready, held, dropped };

struct OutEvent {
    std::uint64_t time_ns = 0;
    TraceEventKind kind = TraceEventKind::cancel;
    Slot slot = Slot::ready;
    TraceFlags flags;
    std::uint32_t timer = 0; // TimerState index
    std::uint32_t label = kNoLabel;
    Jiffies at = 0;
    std::optional<std::uint32_t> cpu;
    std::optional<std::uint32_t> kidx;
    std::optional<Jiffies> know;
    // Inside the callback of timer `cb` (TimerState index) on its CPU;
    // cb_pending: that callback's timer_expire_exit has not been seen yet.
    std::uint32_t cb = kNoTimer;
    bool cb_pending = false;
    std::uint64_t cb_serial = 0;
    static constexpr std::uint32_t kNoLabel = 0xFFFFFFFFu;
    static constexpr std::uint32_t kNoTimer = 0xFFFFFFFFu;
};

// A timer callback running on a CPU: from its timer_expire_entry to its
// timer_expire_exit. The events its CPU traces in between come from the
// callback (cb=). Without a timer_expire_exit (the event was not recorded)
// nothing can be attributed: the callback ends unconfirmed at the CPU's next
// timer_expire_entry, after the pair window, or at the end of the trace, and
// its events lose their cb=.
struct OpenCallback {
    std::uint32_t timer = 0;
    std::uint64_t serial = 0;
    std::uint64_t entry_time = 0; // relative ns
    std::uint64_t first_seq = 0;  // output queue position at the entry
};

// A FIFO of OutEvents addressed by ever-increasing sequence numbers; grows by
// doubling, never shrinks, so a steady state allocates nothing.
class OutQueue {
public:
    bool empty() const noexcept { return head_ == tail_; }
    std::uint64_t head() const noexcept { return head_; }
    std::uint64_t tail() const noexcept { return tail_; }
    OutEvent& front() noexcept { return at(head_); }
    void pop() noexcept { ++head_; }
    OutEvent& at(std::uint64_t seq) noexcept { return ring_[seq & (ring_.size() - 1)]; }
    std::uint64_t push(const OutEvent& e) {
        if (tail_ - head_ == ring_.size()) grow();
        at(tail_) = e;
        return tail_++;
    }

private:
    void grow() {
        std::vector<OutEvent> bigger(ring_.empty() ? 64 : ring_.size() * 2);
        for (std::uint64_t s = head_; s != tail_; ++s) bigger[s & (bigger.size() - 1)] = at(s);
        ring_.swap(bigger);
    }
    std::vector<OutEvent> ring_;
    std::uint64_t head_ = 0;
    std::uint64_t tail_ = 0;
};

} // namespace

struct FtraceImporter::Impl {
    Impl(FtraceReader& r, std::uint64_t window) : reader(r), pair_window_ns(window) {}

    FtraceReader& reader;
    std::uint64_t pair_window_ns;
    FtraceImportStats stats;
    bool eof = false;
    std::optional<Jiffies> start_jiffies;
    std::uint64_t latest = 0; // relative time of the last event read
    detail::KeyIndex index;
    std::vector<TimerState> timers;
    std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> label_ids;
    std::vector<std::string_view> labels;
    std::string label_buffer;
    OutQueue queue;
    std::unordered_map<std::uint32_t, OpenCallback> callbacks; // by CPU
    std::uint64_t callback_serial = 0;
    char token[2 + 16 + 1] = {};
    char cb_token[2 + 16 + 1] = {};

    // Marks the event at output position `seq`, traced by `cpu`, if a
    // callback is open there.
    void mark_callback(OutEvent& out, std::uint32_t cpu, std::uint64_t seq) {
        const auto it = callbacks.find(cpu);
        if (it == callbacks.end()) return;
        out.cb = it->second.timer;
        out.cb_serial = it->second.serial;
        out.cb_pending = true;
        it->second.first_seq = std::min(it->second.first_seq, seq); // a held cancel is older than the entry
    }

    // Ends the callback open on `cpu`: its events keep cb= if its
    // timer_expire_exit was seen (`confirmed`), else they lose it.
    void close_callback(std::uint32_t cpu, bool confirmed) {
        const auto it = callbacks.find(cpu);
        if (it == callbacks.end()) return;
        const OpenCallback& c = it->second;
        for (std::uint64_t seq = std::max(c.first_seq, queue.head()); seq != queue.tail(); ++seq) {
            OutEvent& o = queue.at(seq);
            if (!o.cb_pending || o.cb_serial != c.serial) continue;
            o.cb_pending = false;
            if (!confirmed) o.cb = OutEvent::kNoTimer;
        }
        if (!confirmed) ++stats.unconfirmed_callbacks;
        callbacks.erase(it);
    }


    std::uint32_t timer_index(std::uint64_t pointer) {
        bool added = false;
        const std::uint32_t id = index.number(pointer, added);
        if (added) {
            timers.push_back(TimerState{.pointer = pointer});
            ++stats.timers;
        }
        return id;
    }

    std::uint32_t label_id(const FtraceEvent& e) {
        if (e.function.empty()) return OutEvent::kNoLabel;
        label_buffer.assign(e.function);
        if (!e.module.empty()) {
            label_buffer += '[';
            label_buffer += e.module;
            label_buffer += ']';
        }
        if (label_buffer.size() > kMaxLabel) label_buffer.resize(kMaxLabel);
        for (char& c : label_buffer)
            if (!detail::is_graph(c)) c = '?';
        const auto it = label_ids.find(std::string_view(label_buffer));
        if (it != label_ids.end()) return it->second;
        const auto id = static_cast<std::uint32_t>(labels.size());
        const auto [ins, ok] = label_ids.emplace(label_buffer, id);
        (void)ok;
        labels.push_back(std::string_view(ins->first));
        return id;
    }

    void fill_arm(OutEvent& out, const FtraceEvent& e) {
        out.at = e.expires;
        out.flags.deferrable = e.flags & kFtraceDeferrable;
        out.flags.pinned = e.flags & kFtracePinned;
        out.flags.irqsafe = e.flags & kFtraceIrqsafe;
        out.cpu = e.cpu;
        out.kidx = e.idx;
        out.know = e.jiffies();
        out.label = label_id(e);
    }

    // The held timer_cancel of `s` was a del_timer().
    void resolve_as_cancel(TimerState& s) {
        OutEvent& h = queue.at(s.held_seq);
        if (s.state == Pending::pending) {
            h.slot = Slot::ready;
            h.kind = TraceEventKind::cancel;
            s.state = Pending::idle;
            ++stats.cancels;
        } else {
            h.slot = Slot::dropped; // armed before the trace began: the replay never had it
            ++stats.dropped_cancels;
        }
        s.held = false;
    }

    // timer_expire_entry: the callback of `timer` starts on `cpu` (a callback
    // still open there never saw its exit).
    void open_callback(std::uint32_t cpu, std::uint32_t timer, std::uint64_t rel) {
        close_callback(cpu, false);
        callbacks.emplace(cpu, OpenCallback{timer, ++callback_serial, rel, queue.tail()});
    }

    void process(const FtraceEvent& e);
    bool next(TraceEvent& out);
};

void FtraceImporter::Impl::process(const FtraceEvent& e) {
    const std::uint64_t rel = e.timestamp_ns - *reader.first_timestamp_ns();
    latest = rel;
    if (!start_jiffies) {
        if (const auto j = e.jiffies()) start_jiffies = *j - ticks_at(reader.hz(), rel);
    }
    const std::uint32_t ti = timer_index(e.timer);
    TimerState& s = timers[ti];

    if (s.held) {
        const bool paired = e.line_cpu == s.held_cpu && rel - s.held_time <= pair_window_ns;
        if (paired && e.type == FtraceEventType::timer_start) {
            // mod_timer() moving a pending timer: detach (cancel) + enqueue (start).
            OutEvent& h = queue.at(s.held_seq);
            h.slot = Slot::ready;
            h.kind = TraceEventKind::modify;
            fill_arm(h, e);
            if (h.cb == OutEvent::kNoTimer) mark_callback(h, e.line_cpu, s.held_seq);
            s.held = false;
            s.state = Pending::pending;
            ++stats.modifies;
            ++stats.requeues;
            return;
        }
        if (paired && e.type == FtraceEventType::timer_expire_entry) {
            // The run loop's detach before the callback: an expiry.
            queue.at(s.held_seq).slot = Slot::dropped;
            s.held = false;
            s.state = Pending::idle;
            ++stats.expiries;
            ++stats.expiry_detaches;
            open_callback(e.line_cpu, ti, rel);
            return;
        }
        resolve_as_cancel(s);
    }

    switch (e.type) {
    case FtraceEventType::timer_init:
        return;
    case FtraceEventType::timer_expire_exit: {
        const auto it = callbacks.find(e.line_cpu);
        if (it != callbacks.end() && it->second.timer == ti) close_callback(e.line_cpu, true);
        return;
    }
    case FtraceEventType::timer_start: {
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        fill_arm(out, e);
        if (s.state == Pending::pending) {
            ++stats.anomalies; // a cancel went missing (lost events?)
            out.kind = TraceEventKind::modify;
            ++stats.modifies;
        } else {
            out.kind = TraceEventKind::arm;
            ++stats.arms;
        }
        s.state = Pending::pending;
        mark_callback(out, e.line_cpu, queue.tail());
        queue.push(out);
        return;
    }
    case FtraceEventType::timer_cancel: {
        OutEvent out;
        out.time_ns = rel;
        out.timer = ti;
        out.slot = Slot::held;
        mark_callback(out, e.line_cpu, queue.tail());
        s.held_seq = queue.push(out);
        s.held = true;
        s.held_cpu = e.line_cpu;
        s.held_time = rel;
        return;
    }
    case FtraceEventType::timer_expire_entry:
        if (s.state == Pending::pending) ++stats.anomalies; // its detach went missing
        s.state = Pending::idle;
        ++stats.expiries;
        open_callback(e.line_cpu, ti, rel);
        return;
    }
}

bool FtraceImporter::Impl::next(TraceEvent& out) {
    while (true) {
        while (!queue.empty()) {
            OutEvent& f = queue.front();
            if (f.slot == Slot::dropped) {
                queue.pop();
                continue;
            }
            if (f.slot == Slot::held) {
                if (!eof && latest - f.time_ns <= pair_window_ns) break;
                resolve_as_cancel(timers[f.timer]);
                continue;
            }
            if (f.cb_pending) {
                const auto open = std::find_if(callbacks.begin(), callbacks.end(),
                                               [&](const auto& c) { return c.second.serial == f.cb_serial; });
                if (!eof && open != callbacks.end() && latest - open->second.entry_time <= pair_window_ns) break;
                if (open != callbacks.end()) {
                    close_callback(open->first, false);
                } else { // cannot happen: a closed callback settles its events
                    f.cb_pending = false;
                    f.cb = OutEvent::kNoTimer;
                }
                continue;
            }
            const TimerState& s = timers[f.timer];
            fmt::format_to_n(token, sizeof token - 1, "0x{:016x}", s.pointer);
            out = TraceEvent{};
            out.time_ns = f.time_ns;
            out.kind = f.kind;
            out.timer = f.timer;
            out.key = TimerKey{true, 0, std::string_view(token, 18)};
            if (f.kind != TraceEventKind::cancel) {
                out.expiry = ExpiryForm::at_jiffies;
                out.expiry_value = f.at;
                out.flags = f.flags;
                out.cpu = f.cpu;
                if (f.label != OutEvent::kNoLabel) out.label = labels[f.label];
                out.kidx = f.kidx;
                out.know = f.know;
            }
            if (f.cb != OutEvent::kNoTimer) {
                fmt::format_to_n(cb_token, sizeof cb_token - 1, "0x{:016x}", timers[f.cb].pointer);
                out.cb = f.cb;
                out.cb_key = TimerKey{true, 0, std::string_view(cb_token, 18)};
                ++stats.callback_events;
            }
            queue.pop();
            return true;
        }
        if (eof) {
            if (reader.stats().timer_events == 0)
                reader.fail("event", "no timer events (timer_start, timer_cancel, timer_expire_entry...) found: "
                                     "record the timer:timer_* events");
            return false;
        }
        FtraceEvent e;
        if (!reader.next(e)) {
            eof = true;
            continue;
        }
        process(e);
    }
}

FtraceImporter::FtraceImporter(FtraceReader& reader, std::uint64_t pair_window_ns)
    : impl_(std::make_unique<Impl>(reader, pair_window_ns)) {}

FtraceImporter::~FtraceImporter() = default;

bool FtraceImporter::next(TraceEvent& event) { return impl_->next(event); }

TraceHeader FtraceImporter::header() const {
    TraceHeader h;
    h.hz = impl_->reader.hz();
    h.start_jiffies = impl_->start_jiffies ? *impl_->start_jiffies : initial_jiffies(h.hz);
    return h;
}

const FtraceImportStats& FtraceImporter::stats() const noexcept { return impl_->stats; }

} // namespace timersim
