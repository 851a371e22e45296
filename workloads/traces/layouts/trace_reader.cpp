#include "workloads/traces/layouts/trace_reader.hpp"

#include "workloads/traces/input/line_source.hpp"
#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/layouts/key_index.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <optional>
#include <vector>

namespace timersim {

using detail::LineSource;

namespace {

// "<digits><unit>" with unit one of `units` (multipliers to ns, or 0 for
// jiffies). Returns false on syntax errors; sets `overflow` if it does not fit.
struct Unit {
    std::string_view suffix;
    std::uint64_t scale;
};

constexpr Unit kTimeUnits[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};

bool parse_scaled(std::string_view s, std::uint64_t& value, bool& overflow, const Unit*& unit,
                  const Unit* units, std::size_t n_units) {
    overflow = false;
    std::size_t digits = 0;
    while (digits < s.size() && detail::is_digit(s[digits])) ++digits;
    if (digits == 0) return false;
    const std::string_view suffix = s.substr(digits);
    unit = nullptr;
    for (std::size_t i = 0; i < n_units; ++i)
        if (units[i].suffix == suffix) unit = &units[i];
    if (!unit) return false;
    std::uint64_t v = 0;
    if (!detail::parse_uint(s.substr(0, digits), v)) {
        overflow = true; // all digits, so only the range can be wrong
        return true;
    }
    if (unit->scale > 1 && __builtin_mul_overflow(v, unit->scale, &v)) overflow = true;
    value = v;
    return true;
}

// The line `timersim gen` and TraceWriter write for a numbered timer:
// "NS KIND TIMER [at=J] [cpu=C] [cb=TIMER]", one space between tokens,
// every number at most 19 digits (so it fits). scan_plain() reads it in one
// pass, with no tokenising and no key=value search; any other line (another
// field, a unit, a symbolic timer, tabs, a comment, a field twice, an
// error) is left to the general parser, which gives the same event or the
// same error. Most traces are all plain lines.
struct PlainLine {
    std::uint64_t time = 0;
    TraceEventKind kind = TraceEventKind::arm;
    std::uint64_t timer = 0;
    bool has_at = false, has_cpu = false, has_cb = false;
    std::uint64_t at = 0, cpu = 0, cb = 0;
};

// A number of 1..19 digits at p, up to a space or the end; p moves past it.
inline bool scan_number_bytewise(const char*& p, const char* end, std::uint64_t& v) {
    const char* const start = p;
    v = 0;
    while (p < end) {
        const auto d = static_cast<unsigned>(static_cast<unsigned char>(*p) - '0');
        if (d > 9) break;
        v = v * 10 + d;
        ++p;
    }
    const auto n = p - start;
    return n > 0 && n <= 19 && (p == end || *p == ' ');
}

// The same, 16 bytes at a time where `readable` (LineSource::readable_end())
// allows: a number of up to 15 digits costs two loads and three multiplies
// per 8 digits, and no branch per digit (the bytewise loop's exit
// mispredicts as numbers change length). 16 digits or more, or digits that
// run on past the end of the line, go bytewise.
inline bool scan_number(const char*& p, const char* end, const char* readable, std::uint64_t& v) {
    if (readable - p < 16) return scan_number_bytewise(p, end, v);
    static constexpr std::uint64_t kPow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    constexpr std::uint64_t kZeros = 0x3030303030303030ull;
    const std::uint64_t x0 = detail::load8(p);
    std::size_t n = 0;
    if (const std::uint64_t m0 = detail::nondigit_bytes(x0)) {
        n = static_cast<std::size_t>(std::countr_zero(m0)) / 8;
        if (n == 0) return false;
        v = detail::digits8((x0 ^ kZeros) << (64 - 8 * n));
    } else {
        const std::uint64_t x1 = detail::load8(p + 8);
        const std::uint64_t m1 = detail::nondigit_bytes(x1);
        if (m1 == 0) return scan_number_bytewise(p, end, v);
        const auto n1 = static_cast<std::size_t>(std::countr_zero(m1)) / 8;
        const std::uint64_t low = n1 == 0 ? 0 : detail::digits8((x1 ^ kZeros) << (64 - 8 * n1));
        v = detail::digits8(x0 ^ kZeros) * kPow10[n1] + low;
        n = 8 + n1;
    }
    // Digits past the line's end are the next line's or stale bytes: then
    // only the bytes up to the end count.
    if (n > static_cast<std::size_t>(end - p)) return scan_number_bytewise(p, end, v);
    p += n;
    return p == end || *p == ' ';
}

inline bool scan_plain(std::string_view line, const char* readable, PlainLine& out) {
    const char* p = line.data();
    const char* const end = p + line.size();
    if (!scan_number(p, end, readable, out.time) || p == end) return false;
    ++p;
    const auto word = [&](std::string_view w) {
        if (static_cast<std::size_t>(end - p) <= w.size() || std::memcmp(p, w.data(), w.size()) != 0 ||
            p[w.size()] != ' ')
            return false;
        p += w.size() + 1;
        return true;
    };
    if (word("arm"))
        out.kind = TraceEventKind::arm;
    else if (word("modify"))
        out.kind = TraceEventKind::modify;
    else if (word("cancel"))
        out.kind = TraceEventKind::cancel;
    else
        return false;
    if (!scan_number(p, end, readable, out.timer)) return false;
    out.has_at = out.has_cpu = out.has_cb = false;
    while (p != end) {
        ++p; // the space
        if (end - p < 4) return false; // the shortest field, "at=0"
        bool* has = nullptr;
        std::uint64_t* value = nullptr;
        if (p[0] == 'a' && p[1] == 't' && p[2] == '=') {
            has = &out.has_at, value = &out.at, p += 3;
        } else if (p[0] == 'c' && p[1] == 'b' && p[2] == '=') {
            has = &out.has_cb, value = &out.cb, p += 3;
        } else if (p[0] == 'c' && p[1] == 'p' && p[2] == 'u' && p[3] == '=') {
            has = &out.has_cpu, value = &out.cpu, p += 4;
        } else {
            return false;
        }
        if (*has || !scan_number(p, end, readable, *value)) return false;
        *has = true;
    }
    // What the general parser would reject, it rejects (with its message).
    if (out.kind == TraceEventKind::cancel ? out.has_at : !out.has_at) return false;
    return !out.has_cpu || out.cpu <= kMaxTraceCpu;
}

enum FieldBit : unsigned {
    kIn = 1u << 0,
    kAt = 1u << 1,
    kFlags = 1u << 2,
    kCpu = 1u << 3,
    kLabel = 1u << 4,
    kKidx = 1u << 5,
    kKnow = 1u << 6,
    kCb = 1u << 7,
};

} // namespace

struct TraceReader::Impl {
    Impl(LineSource src, std::string name) : source(std::move(src)), file(std::move(name)) {}

    LineSource source;
    std::string file;
    TraceHeader header;
    std::uint64_t error_line = 0;
    std::uint64_t last_time = 0;
    std::uint64_t events = 0;
    detail::KeyIndex index;
    std::vector<TimerKey> keys; // by dense id
    std::optional<TraceFilter> filter;
    TraceFilterCounts filter_counts;
    std::unordered_map<std::string, std::string> label_of; // --function: the timer's last label=, by its name

    [[noreturn]] void fail(std::string_view field, std::string message) const {
        detail::fail_at(source, file, field, std::move(message));
    }

    // Next line, or false at the end; throws on overlong lines and read errors.
    bool read_line(std::string_view& line) {
        return detail::read_line_or_throw(source, file, line);
    }

    void read_header();
    bool next(TraceEvent& e);
    std::uint32_t intern(std::string_view token, bool symbolic, std::uint64_t number, TimerKey& key);
    struct TimerName {
        std::string_view text;
        bool symbolic = false;
        std::uint64_t number = 0;
    };
    TimerName check_timer(std::string_view text, std::string_view field) const;
    void parse_field(std::string_view token, TraceEvent& e, unsigned& seen, TimerName& cb);
    bool keep(const TraceEvent& e, const TimerName& timer);
};

bool TraceReader::Impl::keep(const TraceEvent& e, const TimerName& timer) {
    std::string_view label = e.label;
    if (filter->function) {
        std::string name = timer.symbolic ? std::string(timer.text) : std::to_string(timer.number);
        if (!label.empty()) {
            label_of[std::move(name)].assign(label);
        } else if (const auto it = label_of.find(name); it != label_of.end()) {
            label = it->second;
        }
        label = label.substr(0, label.find('[')); // "fn[module]": the function
    }
    return filter_event(*filter, filter_counts, e.cpu.value_or(0), label, e.time_ns, e.time_ns);
}

void TraceReader::Impl::read_header() {
    // The header is the first line; only comments and blank lines may come
    // before it.
    std::string_view line;
    constexpr std::string_view kExpected =
        "expected the header '# timersim-trace v1 hz=HZ [start_jiffies=J]' before the first event";
    std::string_view rest;
    std::string_view token;
    while (true) {
        if (!read_line(line)) fail("header", std::string(kExpected));
        rest = detail::trim(line);
        if (rest.empty()) continue;
        if (rest.front() != '#') fail("header", std::string(kExpected));
        rest.remove_prefix(1);
        std::string_view probe = rest;
        if (detail::next_token(probe, token) && token == "timersim-trace") break;
    }
    detail::next_token(rest, token); // "timersim-trace"
    if (!detail::next_token(rest, token))
        fail("header", "the header has no version: expected '# timersim-trace v1 hz=HZ [start_jiffies=J]'");
    if (token != "v1")
        fail("header", fmt::format("unsupported trace version {}: this reader reads v1", quote_for_error(token)));
    bool have_hz = false;
    bool have_start = false;
    while (detail::next_token(rest, token)) {
        std::string_view key, value;
        if (!detail::split_key_value(token, key, value))
            fail("header", fmt::format("expected key=value in the header, got {}", quote_for_error(token)));
        if (key == "hz") {
            if (have_hz) fail("hz", "hz= given twice");
            have_hz = true;
            unsigned hz = 0;
            if (!detail::parse_uint(value, hz) || !valid_hz(hz))
                fail("hz", fmt::format("bad hz {}: expected an integer 1..{}", quote_for_error(value), kMaxHz));
            header.hz = hz;
        } else if (key == "start_jiffies") {
            if (have_start) fail("start_jiffies", "start_jiffies= given twice");
            have_start = true;
            if (!detail::parse_uint(value, header.start_jiffies))
                fail("start_jiffies", fmt::format("bad start_jiffies {}: expected an unsigned 64-bit integer",
                                                  quote_for_error(value)));
        } else {
            fail("header", fmt::format("unknown header field {}", quote_for_error(token)));
        }
    }
    if (!have_hz) fail("hz", "the header has no hz=");
    if (!have_start) header.start_jiffies = initial_jiffies(header.hz);
}

std::uint32_t TraceReader::Impl::intern(std::string_view token, bool symbolic, std::uint64_t number,
                                        TimerKey& key) {
    if (index.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
        fail("timer", fmt::format("more than {} distinct timers", std::numeric_limits<std::uint32_t>::max() - 1));
    bool added = false;
    const std::uint32_t id = symbolic ? index.token(token, added) : index.number(number, added);
    if (added) keys.push_back(symbolic ? TimerKey{true, 0, index.token_text(id)} : TimerKey{false, number, {}});
    // From the line, not keys[id]: with many timers that would be a cache miss.
    key = TimerKey{symbolic, number, token};
    return id;
}

// Checks a timer name (the TIMER column, or cb=) without interning it.
TraceReader::Impl::TimerName TraceReader::Impl::check_timer(std::string_view text, std::string_view field) const {
    const char* what = field == "cb" ? "callback timer id" : "timer id";
    if (detail::all_digits(text)) {
        std::uint64_t number = 0;
        if (!detail::parse_uint(text, number))
            fail(field, fmt::format("{} {} does not fit in 64 bits", what, quote_for_error(text)));
        return TimerName{{}, false, number}; // a number has no token: 007 is 7
    }
    if (text.empty()) fail(field, fmt::format("empty {}", what));
    if (text.size() > kMaxTimerToken)
        fail(field, fmt::format("{} {} is longer than {} characters", what, quote_for_error(text), kMaxTimerToken));
    for (const char c : text) {
        if (!detail::is_graph(c))
            fail(field, fmt::format("{} {} has a character that is not printable ASCII", what, quote_for_error(text)));
        if (c == '=')
            fail(field, field == "cb"
                            ? fmt::format("{} {} contains '='", what, quote_for_error(text))
                            : fmt::format("{} {} contains '=': write the id alone, as in '0 arm 7 in=10j'", what,
                                          quote_for_error(text)));
    }
    if (text.front() == '#') fail(field, fmt::format("{} {} starts with '#'", what, quote_for_error(text)));
    return TimerName{text, true, 0};
}

void TraceReader::Impl::parse_field(std::string_view token, TraceEvent& e, unsigned& seen, TimerName& cb) {
    std::string_view key, value;
    if (!detail::split_key_value(token, key, value))
        fail("field", fmt::format("expected key=value, got {}", quote_for_error(token)));
    auto once = [&](unsigned bit, std::string_view name) {
        if (seen & bit) fail(name, fmt::format("{}= given twice", name));
        seen |= bit;
    };
    if (key == "in") {
        once(kIn, "in");
        static constexpr Unit kUnits[] = {{"j", 0}, {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
        bool overflow = false;
        const Unit* unit = nullptr;
        if (!parse_scaled(value, e.expiry_value, overflow, unit, kUnits, std::size(kUnits)))
            fail("in", fmt::format("bad timeout {}: expected an integer with unit j, ns, us, ms or s",
                                   quote_for_error(value)));
        if (overflow) fail("in", fmt::format("timeout {} is out of range", quote_for_error(value)));
        e.expiry = unit->scale == 0 ? ExpiryForm::in_jiffies : ExpiryForm::in_ns;
    } else if (key == "at") {
        once(kAt, "at");
        if (!detail::parse_uint(value, e.expiry_value))
            fail("at", fmt::format("bad expiry {}: expected absolute jiffies (an unsigned 64-bit integer)",
                                   quote_for_error(value)));
        e.expiry = ExpiryForm::at_jiffies;
    } else if (key == "flags") {
        once(kFlags, "flags");
        std::string_view rest = value;
        while (true) {
            const auto comma = rest.find(',');
            const std::string_view name = rest.substr(0, comma);
            if (name == "deferrable")
                e.flags.deferrable = true;
            else if (name == "pinned")
                e.flags.pinned = true;
            else if (name == "irqsafe")
                e.flags.irqsafe = true;
            else
                fail("flags", fmt::format("unknown flag {}: expected deferrable, pinned or irqsafe, comma-separated",
                                          quote_for_error(name)));
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    } else if (key == "cpu") {
        once(kCpu, "cpu");
        std::uint32_t cpu = 0;
        if (!detail::parse_uint(value, cpu) || cpu > kMaxTraceCpu)
            fail("cpu", fmt::format("bad cpu {}: expected 0..{}", quote_for_error(value), kMaxTraceCpu));
        e.cpu = cpu;
    } else if (key == "label") {
        once(kLabel, "label");
        if (value.empty()) fail("label", "empty label");
        if (value.size() > kMaxLabel) fail("label", fmt::format("label longer than {} characters", kMaxLabel));
        for (const char c : value)
            if (!detail::is_graph(c))
                fail("label", fmt::format("label {} has a character that is not printable ASCII",
                                          quote_for_error(value)));
        e.label = value;
    } else if (key == "kidx") {
        once(kKidx, "kidx");
        std::uint32_t idx = 0;
        if (!detail::parse_uint(value, idx) || idx > 1023)
            fail("kidx", fmt::format("bad kidx {}: expected 0..1023", quote_for_error(value)));
        e.kidx = idx;
    } else if (key == "know") {
        once(kKnow, "know");
        Jiffies now = 0;
        if (!detail::parse_uint(value, now))
            fail("know", fmt::format("bad know {}: expected jiffies (an unsigned 64-bit integer)",
                                     quote_for_error(value)));
        e.know = now;
    } else if (key == "cb") {
        once(kCb, "cb");
        cb = check_timer(value, "cb");
    } else {
        fail("field", fmt::format("unknown field {}", quote_for_error(key)));
    }
}

bool TraceReader::Impl::next(TraceEvent& e) {
    std::string_view line;
    PlainLine plain;
    while (read_line(line)) {
        if (!filter && scan_plain(line, source.readable_end(), plain) && plain.time >= last_time) {
            // Field by field, not `e = TraceEvent{}` and then these: GCC
            // clears an event with `rep stos`, whose start-up cost was an
            // eighth of next()'s time. Every field is set; a new one must be
            // too (the plain-vs-general tests compare every field).
            static_assert(sizeof(void*) != 8 || sizeof(TraceEvent) == 168,
                          "TraceEvent changed: set its new field here");
            e.time_ns = plain.time;
            e.kind = plain.kind;
            e.expiry = plain.has_at ? ExpiryForm::at_jiffies : ExpiryForm::none;
            e.expiry_value = plain.has_at ? plain.at : 0;
            e.flags = TraceFlags{};
            e.cpu = plain.has_cpu ? std::optional(static_cast<std::uint32_t>(plain.cpu)) : std::nullopt;
            e.label = {};
            e.kidx.reset();
            e.know.reset();
            e.cb.reset();
            e.cb_key.reset();
            last_time = e.time_ns;
            e.timer = intern({}, false, plain.timer, e.key);
            if (plain.has_cb) {
                TimerKey cb_key;
                e.cb = intern({}, false, plain.cb, cb_key);
                e.cb_key = cb_key;
            }
            ++events;
            return true;
        }
        std::string_view rest = line;
        std::string_view token;
        if (!detail::next_token(rest, token) || token.front() == '#') continue; // blank or comment

        e = TraceEvent{};
        bool overflow = false;
        const Unit* unit = nullptr;
        if (detail::is_digit(token.back()) && detail::parse_uint(token, e.time_ns)) {
            // Bare nanoseconds, the form writers use: the fast path.
        } else if (!parse_scaled(token, e.time_ns, overflow, unit, kTimeUnits, std::size(kTimeUnits))) {
            // A bare number is nanoseconds.
            if (detail::all_digits(token)) {
                if (!detail::parse_uint(token, e.time_ns))
                    fail("time", fmt::format("time {} does not fit in 64-bit nanoseconds", quote_for_error(token)));
            } else {
                fail("time", fmt::format("bad time {}: expected nanoseconds, or an integer with unit ns, us, ms or s",
                                         quote_for_error(token)));
            }
        } else if (overflow) {
            fail("time", fmt::format("time {} does not fit in 64-bit nanoseconds", quote_for_error(token)));
        }
        if (e.time_ns < last_time)
            fail("time", fmt::format("time {} ns is before the previous event's {} ns: times must not decrease",
                                     e.time_ns, last_time));

        if (!detail::next_token(rest, token) || token.front() == '#')
            fail("kind", "missing event kind after the time");
        if (token == "arm")
            e.kind = TraceEventKind::arm;
        else if (token == "modify")
            e.kind = TraceEventKind::modify;
        else if (token == "cancel")
            e.kind = TraceEventKind::cancel;
        else
            fail("kind", fmt::format("unknown event kind {}: expected arm, modify or cancel", quote_for_error(token)));

        if (!detail::next_token(rest, token) || token.front() == '#')
            fail("timer", fmt::format("missing timer id after '{}'", to_string(e.kind)));
        const std::string_view timer_text = token;

        unsigned seen = 0;
        TimerName cb;
        while (detail::next_token(rest, token) && token.front() != '#') parse_field(token, e, seen, cb);
        const TimerName timer = check_timer(timer_text, "timer");

        if (e.kind == TraceEventKind::cancel) {
            if (seen & (kIn | kAt)) fail("expiry", "cancel takes no in= or at=");
        } else {
            if ((seen & kIn) && (seen & kAt)) fail("expiry", "in= and at= given together: give one");
            if (!(seen & (kIn | kAt))) fail("expiry", fmt::format("{} needs in= or at=", to_string(e.kind)));
        }
        last_time = e.time_ns;
        // A filtered-out event interns nothing: the kept events' dense ids
        // stay 0, 1, 2... as if the others were not in the file.
        if (filter && !keep(e, timer)) continue;
        // Timer ids are interned last, so a line with an error adds no timer.
        e.timer = intern(timer.text, timer.symbolic, timer.number, e.key);
        if (seen & kCb) {
            TimerKey cb_key;
            e.cb = intern(cb.text, cb.symbolic, cb.number, cb_key);
            e.cb_key = cb_key;
        }
        ++events;
        return true;
    }
    return false;
}

TraceReader::TraceReader(std::istream& in, std::string file_name)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxTraceLine), std::move(file_name))) {
    impl_->read_header();
}

TraceReader::TraceReader(std::FILE* in, std::string file_name)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxTraceLine), std::move(file_name))) {
    impl_->read_header();
}

TraceReader::TraceReader(InputFile& in)
    : impl_(std::make_unique<Impl>(LineSource(in, kMaxTraceLine), in.name())) {
    impl_->read_header();
}

TraceReader::~TraceReader() = default;

const TraceHeader& TraceReader::header() const noexcept { return impl_->header; }
bool TraceReader::next(TraceEvent& event) { return impl_->next(event); }
void TraceReader::set_filter(TraceFilter filter) {
    if (filter.active()) impl_->filter = std::move(filter);
}
const TraceFilterCounts& TraceReader::filter_counts() const noexcept { return impl_->filter_counts; }
const std::string& TraceReader::file_name() const noexcept { return impl_->file; }
std::uint64_t TraceReader::line() const noexcept { return impl_->source.line_number(); }
std::uint64_t TraceReader::events() const noexcept { return impl_->events; }
std::size_t TraceReader::timer_count() const noexcept { return impl_->keys.size(); }
TimerKey TraceReader::timer_key(std::uint32_t id) const { return impl_->keys.at(id); }

} // namespace timersim
