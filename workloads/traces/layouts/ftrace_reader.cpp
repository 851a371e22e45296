#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "workloads/traces/input/line_source.hpp"
#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/layouts/key_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace timersim {

using detail::LineSource;

bool other_line_cpu(std::string_view prefix, std::uint32_t& cpu) {
    for (auto open = prefix.find('['); open != std::string_view::npos; open = prefix.find('[', open + 1)) {
        const auto close = prefix.find(']', open);
        if (close == std::string_view::npos) return false;
        const std::string_view digits = prefix.substr(open + 1, close - open - 1);
        if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos)
            return std::from_chars(digits.data(), digits.data() + digits.size(), cpu).ec == std::errc{};
    }
    return false;
}

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

// The usual timestamp token before line[colon], "SECONDS.FRACTION" with 1
// to 10 digits of seconds and 1 to 9 of fraction, parsed in one backward
// pass (finding the token, checking it and parsing it were a tenth of a
// kernel trace's reading). False where the general path must decide:
// another token, or one looks_like_timestamp() and parse_timestamp() judge.
// The up to `most` decimal digits that end before line[i], read backwards:
// their value and 10^(their count); `i` moves to the first of them.
struct DigitsBack {
    std::uint64_t value = 0;
    std::uint64_t scale = 1;
};
DigitsBack digits_before(std::string_view line, std::size_t& i, std::size_t most) {
    DigitsBack d;
    for (std::size_t n = 0; n < most && i > 0 && detail::is_digit(line[i - 1]); ++n, --i) {
        d.value += static_cast<std::uint64_t>(line[i - 1] - '0') * d.scale;
        d.scale *= 10;
    }
    return d;
}

bool quick_timestamp(std::string_view line, std::size_t colon, std::size_t& begin, std::uint64_t& ns) {
    std::size_t i = colon;
    const DigitsBack fraction = digits_before(line, i, 9);
    if (i == colon || i == 0 || line[i - 1] != '.') return false;
    const std::size_t dot = --i;
    const DigitsBack seconds = digits_before(line, i, 10);
    if (i == dot || (i > 0 && !detail::is_blank(line[i - 1]))) return false;
    begin = i;
    ns = seconds.value * 1000000000ull + fraction.value * (1000000000ull / fraction.scale);
    return true;
}

// The usual CPU column before the timestamp, "[001]" as the last or the
// next-to-last token before line[end] ("... [001] d.s1."), read backwards
// without splitting the prefix into tokens. False where parse_cpu() must
// decide (trace-cmd -l's "1d..2.", anything else).
bool quick_cpu(std::string_view line, std::size_t end, std::uint32_t& cpu) {
    const auto bracketed_before = [&](std::size_t j) {
        // line[j - 1] is ']': 1 to 9 digits, then '[' at a token's start.
        std::size_t i = j - 1;
        const DigitsBack digits = digits_before(line, i, 9);
        if (i == j - 1 || i == 0 || line[i - 1] != '[') return false;
        if (i - 1 > 0 && !detail::is_blank(line[i - 2])) return false;
        cpu = static_cast<std::uint32_t>(digits.value);
        return true;
    };
    std::size_t j = end;
    while (j > 0 && detail::is_blank(line[j - 1])) --j;
    if (j == 0) return false;
    if (line[j - 1] == ']') return bracketed_before(j);
    while (j > 0 && !detail::is_blank(line[j - 1])) --j; // the flags column
    while (j > 0 && detail::is_blank(line[j - 1])) --j;
    return j > 0 && line[j - 1] == ']' && bracketed_before(j);
}

// One of the five timer events, "timer_start: ..." and so on, told by its
// name's distinct letters and one compare instead of a walk over the name
// and a compare with each (a tenth of a line's reading). False where the
// general path must decide: another event, or a name followed by ":x",
// which it reads as perf script's SYSTEM:EVENT.
bool quick_timer_event(std::string_view rest, FtraceEventType& event_type, std::size_t& name_end) {
    if (rest.size() < 12 || !rest.starts_with("timer_")) return false;
    std::string_view name;
    FtraceEventType type{};
    switch (rest[6]) {
    case 's': name = "timer_start", type = FtraceEventType::timer_start; break;
    case 'c': name = "timer_cancel", type = FtraceEventType::timer_cancel; break;
    case 'i': name = "timer_init", type = FtraceEventType::timer_init; break;
    case 'e':
        if (rest.size() < 15) return false;
        if (rest[14] == 'n') name = "timer_expire_entry", type = FtraceEventType::timer_expire_entry;
        else name = "timer_expire_exit", type = FtraceEventType::timer_expire_exit;
        break;
    default: return false;
    }
    if (rest.size() <= name.size() || rest[name.size()] != ':' || !rest.starts_with(name)) return false;
    const std::size_t after = name.size() + 1;
    if (after < rest.size() && (detail::is_alnum(rest[after]) || rest[after] == '_')) return false;
    name_end = name.size();
    event_type = type;
    return true;
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
    bool unknown_hz_ok = false;      // allow_unknown_hz(): a first pass that finds HZ
    bool hz_forced = false;          // force_hz(): --hz wins over a '# hz=' line
    bool seen_event = false;
    std::optional<std::uint64_t> first_ts;
    std::uint64_t last_ts = 0;
    FtraceReaderStats stats;
    std::optional<TraceFilter> filter;
    TraceFilterCounts filter_counts;
    std::unordered_map<std::uint64_t, std::string> function_of; // --function: the timer's last function=
    FtraceObserver* observer = nullptr;

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
    void timer_softirq_line(std::string_view line, std::string_view info, std::uint64_t ts, bool entry);
    bool keep(const FtraceEvent& e);
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
    if (!detail::parse_uint(value, hz_value) || !valid_hz(hz_value))
        fail("hz", fmt::format("bad '# hz=' line: {} is not an integer 1..{}", quote_for_error(value), kMaxHz));
    if (seen_event) fail("hz", "'# hz=' line after the first event: put it at the top");
    if (hz_line && *hz_line != hz_value)
        fail("hz", fmt::format("'# hz={}' contradicts the earlier '# hz={}'", hz_value, *hz_line));
    if (hz_option && *hz_option != hz_value && !hz_forced)
        fail("hz", fmt::format("'# hz={}' contradicts --hz {}; pass --force-hz to replay at --hz anyway", hz_value,
                               *hz_option));
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
    if (text.size() == 16) return detail::parse_hex16(text, value); // %p: the usual case
    if (text.empty() || text.size() > 16) return false;
    // At most 16 hex digits: always fits, so no overflow checks. No branch
    // per digit either: a bad one (-1) shows in `bad` at the end.
    std::uint64_t v = 0;
    int bad = 0;
    for (const char c : text) {
        const int d = detail::hex_digit(c);
        bad |= d;
        v = v << 4 | static_cast<std::uint64_t>(d & 15);
    }
    if (bad < 0) return false;
    value = v;
    return true;
}

} // namespace

void FtraceReader::Impl::parse_info(std::string_view info, FtraceEvent& e) {
    std::string_view timer, expires, timeout, cpu, idx, flags, now, baseclk, bucket;
    bool have_flags = false;
    std::string_view last_key;
    // Token by token: a key up to its first '=' (keys are short: a loop,
    // not a search), then the value up to a blank; a token without '=' is
    // passed over. Told apart by their length first, keys cost one compare.
    const char* p = info.data();
    const char* const end = p + info.size();
    while ((p = detail::skip_blanks(p, end)) != end) {
        if (*p == '[') {
            const char* const token_end = detail::find_blank(p, end);
            const std::string_view token(p, static_cast<std::size_t>(token_end - p));
            p = token_end;
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
        const char* const key_begin = p;
        while (p != end && *p != '=' && !detail::is_blank(*p)) ++p;
        if (p == end || *p != '=') continue; // no '=' in this token
        const std::string_view key(key_begin, static_cast<std::size_t>(p - key_begin));
        const char* const value_begin = ++p;
        p = detail::find_blank(p, end);
        const std::string_view value(value_begin, static_cast<std::size_t>(p - value_begin));
        last_key = key;
        switch (key.size()) {
        case 3:
            if (key == "cpu") cpu = value;
            else if (key == "idx") idx = value;
            else if (key == "now") now = value;
            break;
        case 5:
            if (key == "timer") timer = value;
            else if (key == "flags") { flags = value; have_flags = true; }
            break;
        case 7:
            if (key == "expires") expires = value;
            else if (key == "baseclk") baseclk = value;
            break;
        case 8:
            if (key == "function") e.function = value;
            break;
        case 13:
            if (key == "bucket_expiry") bucket = value;
            break;
        default: break;
        }
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
            ++stats.starts_with_flags;
            constexpr std::uint32_t dpi = kFtraceDeferrable | kFtracePinned | kFtraceIrqsafe;
            if ((e.flags & dpi) == dpi) ++stats.starts_with_dpi;
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
            if (observer) observer->other_line(source.line_number(), text);
            comment_line(text);
            continue;
        }
        if (other_line(text)) {
            if (observer) observer->other_line(source.line_number(), text);
            continue;
        }

        // The timestamp: the first token that ends in ':' (followed by a blank
        // or the end) and is a number. Comm names may contain ':' themselves.
        std::size_t from = 0;
        std::size_t colon = 0;
        std::size_t ts_begin = 0;
        std::uint64_t ts = 0;
        bool quick = false;
        while (true) {
            colon = line.find(':', from);
            if (colon == std::string_view::npos)
                fail("line", fmt::format("not an event line: expected 'TASK-PID [CPU] TIMESTAMP: EVENT: ...', got {}",
                                         quote_for_error(text)));
            from = colon + 1;
            if (colon + 1 < line.size() && !detail::is_blank(line[colon + 1])) continue;
            if ((quick = quick_timestamp(line, colon, ts_begin, ts))) break;
            ts_begin = colon;
            while (ts_begin > 0 && !detail::is_blank(line[ts_begin - 1])) --ts_begin;
            if (looks_like_timestamp(line.substr(ts_begin, colon - ts_begin))) break;
        }
        if (!quick) ts = parse_timestamp(line.substr(ts_begin, colon - ts_begin));

        if (!seen_event) {
            seen_event = true;
            if (hz_option) hz = *hz_option;
            else if (hz_line) hz = *hz_line;
            else if (!unknown_hz_ok) fail("hz", "HZ unknown: pass --hz or put a line '# hz=N' before the first event");
            first_ts = ts;
        }
        if (ts < last_ts)
            fail("timestamp", fmt::format("timestamp {}.{:09} is before the previous event's {}.{:09}: lines must "
                                          "be in time order",
                                          ts / 1000000000, ts % 1000000000, last_ts / 1000000000,
                                          last_ts % 1000000000));
        last_ts = ts;

        // The event name, then its text. perf script prints SYSTEM:EVENT
        // ("timer:timer_start: ", "irq:softirq_entry: "): the part after the
        // system is the name.
        std::string_view rest = detail::trim(line.substr(colon + 1));
        std::size_t name_end = 0;
        if (!quick_timer_event(rest, e.type, name_end)) {
            const auto identifier_end = [&rest](std::size_t from) {
                while (from < rest.size() && (detail::is_alnum(rest[from]) || rest[from] == '_'))
                    ++from;
                return from;
            };
            name_end = identifier_end(0);
            if (name_end > 0 && name_end + 1 < rest.size() && rest[name_end] == ':' &&
                identifier_end(name_end + 1) > name_end + 1) {
                rest.remove_prefix(name_end + 1);
                name_end = identifier_end(0);
            }
            if (name_end == 0 || name_end == rest.size() || rest[name_end] != ':') {
                if (observer) observer->other_line(source.line_number(), text);
                count_other("(other lines)");
                continue;
            }
            if (observer) {
                // perf script prints irq:softirq_entry (counted as "irq"
                // below, as it always was).
                std::string_view softirq = rest;
                if (softirq.starts_with("irq:softirq_")) softirq.remove_prefix(4);
                if (softirq.starts_with("softirq_entry:"))
                    timer_softirq_line(line.substr(0, ts_begin), softirq.substr(14), ts, true);
                else if (softirq.starts_with("softirq_exit:"))
                    timer_softirq_line(line.substr(0, ts_begin), softirq.substr(13), ts, false);
            }
            const std::string_view name = rest.substr(0, name_end);
            if (name == "timer_start") e.type = FtraceEventType::timer_start;
            else if (name == "timer_cancel") e.type = FtraceEventType::timer_cancel;
            else if (name == "timer_expire_entry") e.type = FtraceEventType::timer_expire_entry;
            else if (name == "timer_expire_exit") e.type = FtraceEventType::timer_expire_exit;
            else if (name == "timer_init") e.type = FtraceEventType::timer_init;
            else {
                if (observer) observer->other_line(source.line_number(), text);
                count_other(name);
                continue;
            }
        }
        const FtraceEventType type = e.type;
        e = FtraceEvent{};
        e.type = type;
        e.line = source.line_number();
        e.timestamp_ns = ts;
        if (!quick_cpu(line, ts_begin, e.line_cpu)) parse_cpu(detail::trim(line.substr(0, ts_begin)), e);
        parse_info(rest.substr(name_end + 1), e);
        ++stats.timer_events;
        if (observer) observer->timer_event(e);
        if (filter && !keep(e)) continue;
        return true;
    }
    return false;
}

void FtraceReader::Impl::timer_softirq_line(std::string_view prefix, std::string_view info, std::uint64_t ts,
                                            bool entry) {
    // 6.1 include/trace/events/irq.h softirq_entry/exit: "vec=%u [action=%s]".
    std::string_view token, key, value;
    unsigned vec = 0;
    if (!detail::next_token(info, token) || !detail::split_key_value(token, key, value) || key != "vec" ||
        !detail::parse_uint(value, vec))
        fail("vec", fmt::format("softirq_{} without vec=N", entry ? "entry" : "exit"));
    if (vec != 1) return; // TIMER_SOFTIRQ only
    FtraceEvent where;
    parse_cpu(detail::trim(prefix), where);
    observer->timer_softirq(
        FtraceTimerSoftirq{.entry = entry, .line = source.line_number(), .timestamp_ns = ts, .line_cpu = where.line_cpu});
}

bool FtraceReader::Impl::keep(const FtraceEvent& e) {
    std::string_view function = e.function;
    if (filter->function) {
        if (!e.function.empty()) {
            const auto it = function_of.try_emplace(e.timer).first;
            if (it->second != e.function) it->second.assign(e.function);
        } else if (const auto it = function_of.find(e.timer); it != function_of.end()) {
            function = it->second;
        }
    }
    return filter_event(*filter, filter_counts, e.line_cpu, function, e.timestamp_ns - *first_ts, e.timestamp_ns);
}

FtraceReader::FtraceReader(std::istream& in, std::string file_name, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxFtraceLine), std::move(file_name), hz)) {}

FtraceReader::FtraceReader(std::FILE* in, std::string file_name, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxFtraceLine), std::move(file_name), hz)) {}

FtraceReader::FtraceReader(std::string_view text, std::string file_name, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(text, kMaxFtraceLine), std::move(file_name), hz)) {}

FtraceReader::FtraceReader(InputFile& in, std::optional<unsigned> hz)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxFtraceLine), in.name(), hz)) {}

FtraceReader::~FtraceReader() = default;

bool FtraceReader::next(FtraceEvent& event) { return impl_->next(event); }
unsigned FtraceReader::hz() const noexcept { return impl_->hz; }
void FtraceReader::set_filter(TraceFilter filter) {
    if (filter.active()) impl_->filter = std::move(filter);
}
const TraceFilterCounts& FtraceReader::filter_counts() const noexcept { return impl_->filter_counts; }
void FtraceReader::set_observer(FtraceObserver* observer) noexcept { impl_->observer = observer; }
void FtraceReader::allow_unknown_hz() noexcept { impl_->unknown_hz_ok = true; }
void FtraceReader::force_hz() noexcept { impl_->hz_forced = true; }
std::optional<unsigned> FtraceReader::header_hz() const noexcept { return impl_->hz_line; }
std::optional<std::uint64_t> FtraceReader::first_timestamp_ns() const noexcept { return impl_->first_ts; }
const FtraceReaderStats& FtraceReader::stats() const noexcept { return impl_->stats; }
const std::string& FtraceReader::file_name() const noexcept { return impl_->file; }
std::uint64_t FtraceReader::line() const noexcept { return impl_->source.line_number(); }
void FtraceReader::fail(std::string_view field, std::string message) const { impl_->fail(field, std::move(message)); }

} // namespace timersim
