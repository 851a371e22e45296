// Trace format v1 (docs/trace-format.md): TraceWriter -> TraceReader round
// trips, the syntax a person may write by hand, and every error with its
// exact message; plus the malformed traces in tests/data/bad-traces/.
#include "workloads/traces/input/parse_util.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"

#include "test_data_dir.hpp"
#include "tests/error_corpus.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace timersim;

namespace {

// Events read from `text`, with their string_views copied out.
struct Read {
    TraceHeader header;
    std::vector<TraceEvent> events;
    std::vector<std::string> tokens, labels, cb_tokens; // own copies: the reader's views die with the line
    std::size_t timers = 0;
};

// With a filter, the reader parses every line with its general parser
// (the plain-line scanner is only tried without one).
Read read_all(const std::string& text, const std::string& name = "t.trace", const TraceFilter* filter = nullptr) {
    std::istringstream in(text);
    TraceReader reader(in, name);
    if (filter) reader.set_filter(*filter);
    Read r;
    r.header = reader.header();
    TraceEvent e;
    while (reader.next(e)) {
        r.tokens.emplace_back(e.key.token);
        r.labels.emplace_back(e.label);
        r.cb_tokens.emplace_back(e.cb_key ? e.cb_key->token : std::string_view{});
        r.events.push_back(e);
    }
    for (std::size_t i = 0; i < r.events.size(); ++i) {
        r.events[i].key.token = r.tokens[i];
        r.events[i].label = r.labels[i];
        if (r.events[i].cb_key) r.events[i].cb_key->token = r.cb_tokens[i];
    }
    r.timers = reader.timer_count();
    return r;
}

// what() of the TraceError that reading `text` throws ("" if none).
std::string error_of(const std::string& text, const std::string& name = "t.trace",
                     const TraceFilter* filter = nullptr) {
    try {
        read_all(text, name, filter);
    } catch (const TraceError& e) {
        return e.what();
    }
    return "";
}

TraceEvent arm(std::uint64_t t, std::uint64_t timer, ExpiryForm form, std::uint64_t value) {
    TraceEvent e;
    e.time_ns = t;
    e.kind = TraceEventKind::arm;
    e.key = TimerKey{false, timer, {}};
    e.expiry = form;
    e.expiry_value = value;
    return e;
}

const std::string kHeader = "# timersim-trace v1 hz=250 start_jiffies=4294892296\n";

} // namespace

TEST_CASE("every event form survives writer -> reader unchanged") {
    std::vector<TraceEvent> events;
    events.push_back(arm(0, 7, ExpiryForm::in_jiffies, 250));
    events.push_back(arm(0, 18446744073709551615ull, ExpiryForm::in_ns, 1));
    TraceEvent m = arm(1000, 7, ExpiryForm::at_jiffies, 18446744073709551615ull);
    m.kind = TraceEventKind::modify;
    m.flags = TraceFlags{true, true, true};
    m.cpu = kMaxTraceCpu;
    m.label = "tcp_write_timer";
    m.kidx = 1023;
    m.know = 4294967296;
    m.cb_key = TimerKey{false, 7, {}};
    events.push_back(m);
    TraceEvent s = arm(1000, 0, ExpiryForm::at_jiffies, 0);
    s.key = TimerKey{true, 0, "ffff9a0c8b3e1e28"};
    s.flags.pinned = true;
    s.cpu = 0;
    s.cb_key = TimerKey{true, 0, "0x00000000a1b2c3d4"}; // first seen as cb=: gets its id here
    events.push_back(s);
    TraceEvent c;
    c.time_ns = 18446744073709551615ull;
    c.kind = TraceEventKind::cancel;
    c.key = TimerKey{true, 0, "0x00000000a1b2c3d4"};
    events.push_back(c);
    TraceEvent c2 = c;
    c2.key = TimerKey{true, 0, "ffff9a0c8b3e1e28"};
    c2.label = "x[mod]";
    events.push_back(c2);
    TraceEvent h = c2;
    h.label = "#x#kidx=95"; // found by fuzzing: the writer refused a label the reader accepts
    events.push_back(h);

    std::ostringstream out;
    const TraceHeader header{1000, 123};
    {
        TraceWriter writer(out, header, "written by a test\nover two lines");
        for (const TraceEvent& e : events) writer.write(e);
        CHECK(writer.events() == events.size());
    }
    const Read r = read_all(out.str());
    CHECK(r.header.hz == 1000);
    CHECK(r.header.start_jiffies == 123);
    REQUIRE(r.events.size() == events.size());
    const std::uint32_t expected_ids[] = {0, 1, 0, 2, 3, 2, 2};
    const std::optional<std::uint32_t> expected_cbs[] = {{}, {}, 0, 3, {}, {}, {}};
    for (std::size_t i = 0; i < events.size(); ++i) {
        CAPTURE(i);
        const TraceEvent& a = events[i];
        const TraceEvent& b = r.events[i];
        CHECK(b.time_ns == a.time_ns);
        CHECK(b.kind == a.kind);
        CHECK(b.key == a.key);
        CHECK(b.timer == expected_ids[i]);
        CHECK(b.expiry == a.expiry);
        CHECK(b.expiry_value == a.expiry_value);
        CHECK(b.flags == a.flags);
        CHECK(b.cpu == a.cpu);
        CHECK(b.label == a.label);
        CHECK(b.kidx == a.kidx);
        CHECK(b.know == a.know);
        CHECK(b.cb_key == a.cb_key);
        CHECK(b.cb == expected_cbs[i]);
    }
    CHECK(r.timers == 4);
    CHECK(out.str().starts_with("# timersim-trace v1 hz=1000 start_jiffies=123\n# written by a test\n# over two lines\n"));
}

TEST_CASE("the writer and the reader also work on FILE*") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    {
        TraceWriter writer(f, TraceHeader{300, 5});
        for (std::uint64_t i = 0; i < 20000; ++i) writer.write(arm(i * 1000, i % 100, ExpiryForm::in_jiffies, i));
        writer.flush();
    }
    std::rewind(f);
    TraceReader reader(f, "tmp");
    CHECK(reader.header().hz == 300);
    TraceEvent e;
    std::uint64_t n = 0;
    while (reader.next(e)) {
        CHECK(e.expiry_value == n);
        CHECK(e.timer == n % 100);
        ++n;
    }
    CHECK(n == 20000);
    CHECK(reader.events() == 20000);
    CHECK(reader.timer_count() == 100);
    std::fclose(f);
}

TEST_CASE("hand-written traces: units, defaults, comments, CRLF, any field order") {
    const Read r = read_all(
        "# my workload\n"
        "\n"
        "#timersim-trace   v1    hz=1000\r\n"
        "   # indented comment\n"
        "0 arm conn-1 in=10j\n"
        "5us arm 7 in=2ms   # a trailing comment\n"
        "1ms modify conn-1 label=my_fn cpu=2 at=4294667400 flags=pinned,deferrable\r\n"
        "1ms cancel 007\n"
        "\t2s\tarm\tlast\tin=3s\n");
    CHECK(r.header.hz == 1000);
    CHECK(r.header.start_jiffies == initial_jiffies(1000)); // the default
    REQUIRE(r.events.size() == 5);
    CHECK(r.events[0].key == TimerKey{true, 0, "conn-1"});
    CHECK(r.events[0].expiry == ExpiryForm::in_jiffies);
    CHECK(r.events[1].time_ns == 5000);
    CHECK(r.events[1].expiry == ExpiryForm::in_ns);
    CHECK(r.events[1].expiry_value == 2000000);
    CHECK(r.events[2].time_ns == 1000000);
    CHECK(r.events[2].kind == TraceEventKind::modify);
    CHECK(r.events[2].timer == 0);
    CHECK(r.events[2].flags == TraceFlags{true, true, false});
    CHECK(r.events[2].cpu == 2u);
    CHECK(r.events[2].label == "my_fn");
    CHECK(r.events[3].key == TimerKey{false, 7, {}}); // 007 is the number 7
    CHECK(r.events[3].timer == 1);
    CHECK(r.events[4].time_ns == 2000000000);
    CHECK(r.events[4].expiry_value == 3000000000);
    CHECK(r.timers == 3);
}

TEST_CASE("the jiffies of an event and of its expiry") {
    const TraceHeader h{300, 1000};
    // HZ=300: ticks at 0, 3333333, 6666666, 10000000 ns.
    CHECK(ticks_at(300, 0) == 0);
    CHECK(ticks_at(300, 3333332) == 0);
    CHECK(ticks_at(300, 3333333) == 1);
    CHECK(ticks_at(300, 6666666) == 2);
    CHECK(ticks_at(300, 9999999) == 2);
    CHECK(ticks_at(300, 10000000) == 3);
    CHECK(ticks_at(1000, 18446744073709551615ull) == 18446744073709ull);
    CHECK(jiffies_at(h, 10000000) == 1003);
    TraceEvent e = arm(10000000, 1, ExpiryForm::in_jiffies, 5);
    CHECK(expiry_jiffies(h, e) == 1008);
    e.expiry = ExpiryForm::in_ns;
    e.expiry_value = 10000000; // exactly 3 jiffies
    CHECK(expiry_jiffies(h, e) == 1006);
    e.expiry_value = 10000001; // rounds up
    CHECK(expiry_jiffies(h, e) == 1007);
    e.expiry = ExpiryForm::at_jiffies;
    e.expiry_value = 17;
    CHECK(expiry_jiffies(h, e) == 17);
}

TEST_CASE("the writer refuses events the format cannot carry") {
    std::ostringstream out;
    TraceWriter writer(out, TraceHeader{.hz = 250});
    writer.write(arm(100, 1, ExpiryForm::in_jiffies, 1));
    CHECK_THROWS_AS(writer.write(arm(99, 1, ExpiryForm::in_jiffies, 1)), std::invalid_argument);
    TraceEvent e = arm(100, 1, ExpiryForm::none, 0);
    CHECK_THROWS_AS(writer.write(e), std::invalid_argument); // arm without expiry
    e.kind = TraceEventKind::cancel;
    e.expiry = ExpiryForm::in_jiffies;
    CHECK_THROWS_AS(writer.write(e), std::invalid_argument); // cancel with expiry
    for (const std::string_view bad : std::initializer_list<std::string_view>{"", "has space", "a=b", "#x", "123", "x\n"}) {
        TraceEvent t = arm(100, 0, ExpiryForm::in_jiffies, 1);
        t.key = TimerKey{true, 0, bad};
        CAPTURE(bad);
        CHECK_THROWS_AS(writer.write(t), std::invalid_argument);
    }
    TraceEvent l = arm(100, 1, ExpiryForm::in_jiffies, 1);
    l.label = "two words";
    CHECK_THROWS_AS(writer.write(l), std::invalid_argument);
    const std::string long_label(kMaxLabel + 1, 'x');
    l.label = long_label;
    CHECK_THROWS_AS(writer.write(l), std::invalid_argument);
    TraceEvent c = arm(100, 1, ExpiryForm::in_jiffies, 1);
    c.cpu = kMaxTraceCpu + 1;
    CHECK_THROWS_AS(writer.write(c), std::invalid_argument);
    CHECK_THROWS_AS(TraceWriter(out, TraceHeader{0, 0}), std::invalid_argument);
}

TEST_CASE("every error names file, line, what is wrong and the field") {
    struct Case {
        std::string input;
        std::string error;
    };
    const std::string E = kHeader;
    const std::string long_line(kMaxTraceLine + 1, '1');
    const Case cases[] = {
        // header
        {"", "t.trace:1: expected the header '# timersim-trace v1 hz=HZ [start_jiffies=J]' before the first event (header)"},
        {"# a comment\n0 arm 1 in=1j\n",
         "t.trace:2: expected the header '# timersim-trace v1 hz=HZ [start_jiffies=J]' before the first event (header)"},
        {"# timersim-trace\n", "t.trace:1: the header has no version: expected '# timersim-trace v1 hz=HZ [start_jiffies=J]' (header)"},
        {"# timersim-trace v2 hz=250\n", "t.trace:1: unsupported trace version 'v2': this reader reads v1 (header)"},
        {"# timersim-trace v1\n", "t.trace:1: the header has no hz= (hz)"},
        {"# timersim-trace v1 hz=0\n", "t.trace:1: bad hz '0': expected an integer 1..10000 (hz)"},
        {"# timersim-trace v1 hz=250 hz=250\n", "t.trace:1: hz= given twice (hz)"},
        {"# timersim-trace v1 hz=250 start_jiffies=-1\n",
         "t.trace:1: bad start_jiffies '-1': expected an unsigned 64-bit integer (start_jiffies)"},
        {"# timersim-trace v1 hz=250 start_jiffies=1 start_jiffies=1\n", "t.trace:1: start_jiffies= given twice (start_jiffies)"},
        {"# timersim-trace v1 hz=250 seed=4\n", "t.trace:1: unknown header field 'seed=4' (header)"},
        {"# timersim-trace v1 hz=250 fast\n", "t.trace:1: expected key=value in the header, got 'fast' (header)"},
        // lines
        {E + long_line + "\n", "t.trace:2: line longer than 4096 bytes (line)"},
        // time
        {E + "1.5ms arm 1 in=1j\n",
         "t.trace:2: bad time '1.5ms': expected nanoseconds, or an integer with unit ns, us, ms or s (time)"},
        {E + "18446744073709551616 arm 1 in=1j\n",
         "t.trace:2: time '18446744073709551616' does not fit in 64-bit nanoseconds (time)"},
        {E + "18446744073709551s arm 1 in=1j\n", "t.trace:2: time '18446744073709551s' does not fit in 64-bit nanoseconds (time)"},
        {E + "5 arm 1 in=1j\n4 arm 1 in=1j\n",
         "t.trace:3: time 4 ns is before the previous event's 5 ns: times must not decrease (time)"},
        // kind
        {E + "5\n", "t.trace:2: missing event kind after the time (kind)"},
        {E + "5 # comment\n", "t.trace:2: missing event kind after the time (kind)"},
        {E + "5 add 1 in=1j\n", "t.trace:2: unknown event kind 'add': expected arm, modify or cancel (kind)"},
        // timer
        {E + "5 cancel\n", "t.trace:2: missing timer id after 'cancel' (timer)"},
        {E + "5 cancel 18446744073709551616\n", "t.trace:2: timer id '18446744073709551616' does not fit in 64 bits (timer)"},
        {E + "5 cancel " + std::string(65, 'x') + "\n",
         "t.trace:2: timer id '" + std::string(40, 'x') + "'... is longer than 64 characters (timer)"},
        {E + "5 cancel timer=1\n",
         "t.trace:2: timer id 'timer=1' contains '=': write the id alone, as in '0 arm 7 in=10j' (timer)"},
        {E + "5 cancel t\x01\n", "t.trace:2: timer id 't\\x01' has a character that is not printable ASCII (timer)"},
        // expiry
        {E + "5 arm 1\n", "t.trace:2: arm needs in= or at= (expiry)"},
        {E + "5 modify 1 cpu=1\n", "t.trace:2: modify needs in= or at= (expiry)"},
        {E + "5 arm 1 in=1j at=5\n", "t.trace:2: in= and at= given together: give one (expiry)"},
        {E + "5 cancel 1 at=5\n", "t.trace:2: cancel takes no in= or at= (expiry)"},
        {E + "5 arm 1 in=10\n", "t.trace:2: bad timeout '10': expected an integer with unit j, ns, us, ms or s (in)"},
        {E + "5 arm 1 in=-1j\n", "t.trace:2: bad timeout '-1j': expected an integer with unit j, ns, us, ms or s (in)"},
        {E + "5 arm 1 in=18446744073709551616j\n", "t.trace:2: timeout '18446744073709551616j' is out of range (in)"},
        {E + "5 arm 1 in=18446744073709551615ms\n", "t.trace:2: timeout '18446744073709551615ms' is out of range (in)"},
        {E + "5 arm 1 at=now\n", "t.trace:2: bad expiry 'now': expected absolute jiffies (an unsigned 64-bit integer) (at)"},
        {E + "5 arm 1 in=1j in=2j\n", "t.trace:2: in= given twice (in)"},
        // fields
        {E + "5 arm 1 in=1j flags=deferrable,lazy\n",
         "t.trace:2: unknown flag 'lazy': expected deferrable, pinned or irqsafe, comma-separated (flags)"},
        {E + "5 arm 1 in=1j flags=\n",
         "t.trace:2: unknown flag '': expected deferrable, pinned or irqsafe, comma-separated (flags)"},
        {E + "5 arm 1 in=1j cpu=262144\n", "t.trace:2: bad cpu '262144': expected 0..262143 (cpu)"},
        {E + "5 arm 1 in=1j cpu=1 cpu=1\n", "t.trace:2: cpu= given twice (cpu)"},
        {E + "5 arm 1 in=1j label=\n", "t.trace:2: empty label (label)"},
        {E + "5 arm 1 in=1j label=" + std::string(256, 'f') + "\n", "t.trace:2: label longer than 255 characters (label)"},
        {E + "5 arm 1 in=1j label=a\x7f\n", "t.trace:2: label 'a\\x7f' has a character that is not printable ASCII (label)"},
        {E + "5 arm 1 in=1j kidx=1024\n", "t.trace:2: bad kidx '1024': expected 0..1023 (kidx)"},
        {E + "5 arm 1 in=1j know=x\n", "t.trace:2: bad know 'x': expected jiffies (an unsigned 64-bit integer) (know)"},
        {E + "5 arm 1 in=1j color=red\n", "t.trace:2: unknown field 'color' (field)"},
        {E + "5 arm 1 in=1j deferrable\n", "t.trace:2: expected key=value, got 'deferrable' (field)"},
        {E + "5 arm 1 in=1j cb=\n", "t.trace:2: empty callback timer id (cb)"},
        {E + "5 arm 1 in=1j cb=a=b\n", "t.trace:2: callback timer id 'a=b' contains '=' (cb)"},
        {E + "5 arm 1 in=1j cb=#7\n", "t.trace:2: callback timer id '#7' starts with '#' (cb)"},
        {E + "5 arm 1 in=1j cb=" + std::string(65, 'f') + "\n",
         "t.trace:2: callback timer id '" + std::string(40, 'f') + "'... is longer than 64 characters (cb)"},
        {E + "5 arm 1 in=1j cb=99999999999999999999\n",
         "t.trace:2: callback timer id '99999999999999999999' does not fit in 64 bits (cb)"},
        {E + "5 cancel 1 cb=1 cb=1\n", "t.trace:2: cb= given twice (cb)"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.input);
        CHECK(error_of(c.input) == c.error);
    }
}

TEST_CASE("cb= names the timer whose callback made the event, in the timers' namespace") {
    const Read r = read_all(kHeader + "0 arm 7 in=10j\n40ms arm 7 in=20j cb=7\n40ms cancel x cb=7 # same block\n"
                                      "50ms arm y in=1j cb=z\n60ms arm 8 at=5\n");
    REQUIRE(r.events.size() == 5);
    CHECK(!r.events[0].cb);
    CHECK(r.events[1].cb == 0u);
    CHECK(r.events[1].cb_key == TimerKey{false, 7, {}});
    CHECK(r.events[2].cb == 0u);
    CHECK(r.events[2].timer == 1u);
    // A timer first named by cb= gets its id after the event's own timer.
    CHECK(r.events[3].timer == 2u);
    CHECK(r.events[3].cb == 3u);
    CHECK(!r.events[4].cb);
    CHECK(r.timers == 5);
    // A number has no token, in the TIMER column as in cb= (found by fuzzing:
    // "007" kept its text and did not write back as itself).
    const Read n = read_all(kHeader + "0 arm 007 in=1j cb=0009\n");
    CHECK(n.events[0].key == TimerKey{false, 7, {}});
    CHECK(n.events[0].key.token.empty());
    CHECK(n.events[0].cb_key->token.empty());
    // A bad cb= adds neither timer.
    std::istringstream in(kHeader + "0 arm a in=1j\n0 arm b in=1j cb=c=d\n");
    TraceReader reader(in, "t");
    TraceEvent e;
    CHECK(reader.next(e));
    CHECK_THROWS_AS(reader.next(e), TraceError);
    CHECK(reader.timer_count() == 1);
}

TEST_CASE("an error is reported once, with the TraceError's parts") {
    try {
        read_all(kHeader + "0 arm 1 in=1j\n\n# c\n7 arm 1 in=1j cpu=x\n", "dir/run.trace");
        FAIL("no error");
    } catch (const TraceError& e) {
        CHECK(e.file() == "dir/run.trace");
        CHECK(e.line() == 5);
        CHECK(e.field() == "cpu");
        CHECK(e.message() == "bad cpu 'x': expected 0..262143");
        CHECK(std::string(e.what()) == "dir/run.trace:5: bad cpu 'x': expected 0..262143 (cpu)");
    }
}

TEST_CASE("a line with an error adds no timer, and the reader keeps ids dense") {
    std::istringstream in(kHeader + "0 arm a in=1j\n0 arm b in=1j flags=x\n");
    TraceReader reader(in, "t");
    TraceEvent e;
    CHECK(reader.next(e));
    CHECK_THROWS_AS(reader.next(e), TraceError);
    CHECK(reader.timer_count() == 1);
    CHECK(reader.timer_key(0) == TimerKey{true, 0, "a"});
}

TEST_CASE("lines may be as long as 4096 bytes, and reading streams") {
    // One line of exactly the limit, and enough lines to cycle the buffer.
    std::string text = kHeader;
    std::string line = "0 arm 1 in=1j label=";
    line += std::string(kMaxLabel, 'x');
    line += " # ";
    line.resize(kMaxTraceLine, 'c');
    text += line + "\n";
    for (int i = 0; i < 50000; ++i) text += "1 arm " + std::to_string(i) + " in=1j\n";
    const Read r = read_all(text);
    CHECK(r.events.size() == 50001);
    CHECK(r.events[0].label.size() == kMaxLabel);
    CHECK(r.timers == 50000);
}

TEST_CASE("tests/data/bad-traces: each file fails with the error its first line names") {
    const std::filesystem::path dir = std::filesystem::path(TEST_DATA_DIR) / "bad-traces";
    timersim::testing::check_error_corpus(dir, ".trace", 10, [](std::istream& in, const std::string& name) {
        TraceReader reader(in, name);
        TraceEvent e;
        while (reader.next(e)) {
        }
    });
}

// A filter that keeps every event: reading through it takes the general
// parser for every line, the reference for the plain-line scanner.
const TraceFilter kKeepAll{.from = TraceTime{0, false}};

void check_same_events(const Read& fast, const Read& general) {
    REQUIRE(fast.events.size() == general.events.size());
    for (std::size_t i = 0; i < fast.events.size(); ++i) {
        CAPTURE(i);
        const TraceEvent& a = fast.events[i];
        const TraceEvent& b = general.events[i];
        CHECK(a.time_ns == b.time_ns);
        CHECK(a.kind == b.kind);
        CHECK(a.timer == b.timer);
        CHECK(a.key == b.key);
        CHECK(a.expiry == b.expiry);
        CHECK(a.expiry_value == b.expiry_value);
        CHECK(a.flags == b.flags);
        CHECK(a.cpu == b.cpu);
        CHECK(a.label == b.label);
        CHECK(a.kidx == b.kidx);
        CHECK(a.know == b.know);
        CHECK(a.cb == b.cb);
        CHECK(a.cb_key == b.cb_key);
    }
    CHECK(fast.timers == general.timers);
}

TEST_CASE("plain lines (the writer's shape) read exactly as the general parser reads them") {
    // Random lines, most in the shape TraceWriter writes for numbered
    // timers, the rest one step off it (a unit, a symbolic or 20-digit
    // timer, leading zeros, tabs, two spaces, label=, flags=, comments):
    // every event must come out as through the general parser.
    std::mt19937_64 rng(7);
    std::string text = kHeader;
    std::uint64_t t = 0;
    const auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
    for (int i = 0; i < 20000; ++i) {
        if (pick(50) == 0) text += pick(2) ? "# a comment\n" : "\n";
        t += pick(3) == 0 ? 0 : 1 + rng() % 100000;
        std::string line = pick(20) == 0 ? "00" + std::to_string(t) : std::to_string(t);
        if (pick(30) == 0) line = std::to_string(t) + "ns";
        const unsigned kind = pick(3);
        line += pick(40) == 0 ? "\t" : " ";
        line += kind == 0 ? "arm" : kind == 1 ? "modify" : "cancel";
        line += pick(40) == 0 ? "  " : " ";
        const unsigned timer_form = pick(40);
        line += timer_form == 0   ? "t" + std::to_string(pick(50))
                : timer_form == 1 ? "18446744073709551615" // 20 digits: the general parser's
                : timer_form == 2 ? "007"
                                  : std::to_string(pick(500));
        std::vector<std::string> fields;
        if (kind != 2) fields.push_back(pick(20) == 0 ? "in=" + std::to_string(pick(100)) + "j"
                                                      : "at=" + std::to_string(4294892296ull + rng() % 100000));
        if (pick(4) == 0) fields.push_back("cpu=" + std::to_string(pick(10) == 0 ? kMaxTraceCpu : pick(4)));
        if (pick(5) == 0) fields.push_back("cb=" + std::to_string(pick(600)));
        if (pick(30) == 0) fields.push_back("label=tcp_write_timer");
        if (pick(30) == 0) fields.push_back("flags=pinned");
        std::shuffle(fields.begin(), fields.end(), rng);
        for (const std::string& f : fields) line += " " + f;
        if (pick(50) == 0) line += " # why";
        text += line + "\n";
    }
    const Read fast = read_all(text);
    const Read general = read_all(text, "t.trace", &kKeepAll);
    CHECK(fast.events.size() == 20000);
    check_same_events(fast, general);
}

TEST_CASE("a plain line with an error gives the general parser's error") {
    for (const std::string line : {
             "5 arm 1 at=10\n3 arm 1 at=10",          // time goes back
             "5 cancel 1 at=10",                      // cancel with an expiry
             "5 arm 1",                               // arm without one
             "5 arm 1 cpu=3",                         // the same, with a field
             "5 arm 1 at=10 at=11",                   // a field twice
             "5 arm 1 at=10 cb=2 cb=2",
             "5 arm 1 at=10 cpu=262144",              // cpu above kMaxTraceCpu
             "5 arm 1 at=",                           // empty value
             "5 arm 1 at=99999999999999999999",       // 20 digits, too big
             "5 arm 1 at=1x",
             "5 arm 99999999999999999999 at=1",       // timer id too big
             "99999999999999999999 arm 1 at=1",       // time too big
             "5 arm",                                 // no timer
             "5 arms 1 at=1",
             "5 arm 1 at=10 ",                        // trailing blank (fine)
             "5 arm 1 at=10 x=1",
         }) {
        CAPTURE(line);
        const std::string text = kHeader + line + "\n";
        CHECK(error_of(text) == error_of(text, "t.trace", &kKeepAll));
    }
    CHECK(error_of(kHeader + "5 arm 1 at=10 at=11\n") == "t.trace:2: at= given twice (at)");
}

TEST_CASE("parse_uint: decimal digits summed or from_chars, the same results") {
    using detail::parse_uint;
    std::uint64_t v = 0;
    CHECK((parse_uint("9999999999999999999", v) && v == 9999999999999999999ull)); // 19 digits
    CHECK((parse_uint("18446744073709551615", v) && v == 18446744073709551615ull)); // 20: from_chars
    v = 1;
    CHECK_FALSE(parse_uint("18446744073709551616", v));
    CHECK(v == 1);
    CHECK((parse_uint("000000000000000000000042", v) && v == 42));
    std::uint32_t w = 5;
    CHECK_FALSE(parse_uint("4294967296", w)); // out of range: untouched
    CHECK(w == 5);
    CHECK((parse_uint("4294967295", w) && w == 4294967295u));
    CHECK_FALSE(parse_uint("12x", w)); // from_chars stores what it read before the 'x'
    CHECK(w == 12);
    CHECK_FALSE(parse_uint("", w));
    CHECK_FALSE(parse_uint("-1", w));
    CHECK_FALSE(parse_uint("+1", w));
    CHECK((parse_uint("ff", w, 16) && w == 255));
}

TEST_CASE("parse_hex16: every byte at every place of sixteen, as a digit-by-digit parse reads it") {
    const auto reference = [](std::string_view s, std::uint64_t& v) {
        v = 0;
        for (const char c : s) {
            if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
            v = v << 4 | static_cast<std::uint64_t>(detail::hex_digit(c));
        }
        return true;
    };
    std::string text = "0123456789abcDEF";
    for (std::size_t at = 0; at < text.size(); ++at) {
        const char kept = text[at];
        for (int b = 0; b < 256; ++b) {
            text[at] = static_cast<char>(b);
            std::uint64_t ours = 1, theirs = 2;
            const bool ok = detail::parse_hex16(text, ours);
            REQUIRE(ok == reference(text, theirs));
            if (ok) REQUIRE(ours == theirs);
        }
        text[at] = kept;
    }
    std::uint64_t v = 0;
    CHECK(detail::parse_hex16("ffff888003a1b2c0", v));
    CHECK(v == 0xffff888003a1b2c0ull);
    CHECK_FALSE(detail::parse_hex16("ffff888003a1b2c", v)); // fifteen
}

TEST_CASE("is_alnum and hex_digit answer as the C locale's isalnum and isxdigit") {
    for (int c = 0; c < 256; ++c) {
        CAPTURE(c);
        const char ch = static_cast<char>(c);
        CHECK(detail::is_alnum(ch) == (std::isalnum(c) != 0));
        CHECK((detail::hex_digit(ch) >= 0) == (std::isxdigit(c) != 0));
        if (std::isxdigit(c)) {
            const char digit[2] = {ch, 0};
            CHECK(detail::hex_digit(ch) == std::stoi(digit, nullptr, 16));
        }
    }
}

TEST_CASE("next_token and trim, eight bytes at a time, split as a byte-at-a-time scan does") {
    // Reference: the byte-at-a-time versions they replaced.
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    const auto ref_trim = [&](std::string_view s) {
        while (!s.empty() && blank(s.front())) s.remove_prefix(1);
        while (!s.empty() && blank(s.back())) s.remove_suffix(1);
        return s;
    };
    // Blanks, their neighbours and their images with the high bit set (a
    // SWAR test that carried between bytes, or ignored bit 7, would misread them).
    const char alphabet[] = {' ',    '\t',   ' ',    'a',    '=',    '!',    '\x08',
                             '\x0a', '\x1f', '\x21', '\xa0', '\x89', '\xff', '\0'};
    std::mt19937 rng(7);
    std::size_t tokens_seen = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string s(rng() % 40, ' ');
        for (char& c : s) c = alphabet[rng() % std::size(alphabet)];
        CAPTURE(s);
        CHECK(detail::trim(s) == ref_trim(s));
        // Each token in turn, and where each leaves the rest.
        std::string_view rest = s, token;
        std::size_t i = 0;
        while (true) {
            while (i < s.size() && blank(s[i])) ++i;
            if (i == s.size()) {
                CHECK_FALSE(detail::next_token(rest, token));
                CHECK(rest.empty());
                break;
            }
            std::size_t j = i;
            while (j < s.size() && !blank(s[j])) ++j;
            REQUIRE(detail::next_token(rest, token));
            CHECK(token.data() == s.data() + i);
            CHECK(token.size() == j - i);
            CHECK(rest.data() == s.data() + j);
            CHECK(rest.size() == s.size() - j);
            ++tokens_seen;
            i = j;
        }
    }
    CHECK(tokens_seen > 50000);
}

TEST_CASE("plain lines: numbers of every length from 1 to 19 digits read as the general parser reads them") {
    // The plain scan reads numbers 8 or 16 bytes at a time: every length,
    // with and without leading zeros, in every column, at the end of a
    // line and at the end of the input (no newline after the last line),
    // must give what the general parser gives.
    std::mt19937_64 rng(11);
    const auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
    const auto zero_padded = [](std::uint64_t v, unsigned width) {
        std::string s = std::to_string(v);
        if (s.size() < width) s.insert(0, width - s.size(), '0');
        return s;
    };
    // A number of exactly `digits` digits, leading zeros allowed.
    const auto number = [&](unsigned digits) {
        std::uint64_t limit = 1;
        for (unsigned i = 0; i < digits; ++i) limit *= 10;
        return zero_padded(digits == 19 ? rng() % 10000000000000000000ull : rng() % limit, digits);
    };
    for (const bool final_newline : {true, false}) {
        CAPTURE(final_newline);
        std::string text = kHeader;
        std::uint64_t t = 0;
        unsigned time_widths = 0;
        unsigned timer_lengths = 0;
        for (int i = 0; i < 20000; ++i) {
            t += pick(4) == 0 ? pick(1000) : 0; // never decreasing
            const unsigned width = std::max<unsigned>(1 + pick(19), static_cast<unsigned>(std::to_string(t).size()));
            time_widths |= 1u << (width - 1);
            const unsigned kind = pick(3);
            const unsigned timer_digits = 1 + pick(19);
            timer_lengths |= 1u << (timer_digits - 1);
            std::string line = zero_padded(t, width) + (kind == 0 ? " arm " : kind == 1 ? " modify " : " cancel ");
            line += number(timer_digits);
            std::vector<std::string> fields;
            if (kind != 2) fields.push_back("at=" + number(1 + pick(19)));
            if (pick(3) == 0) fields.push_back("cb=" + number(1 + pick(19)));
            if (pick(4) == 0) fields.push_back("cpu=" + std::to_string(pick(64)));
            std::shuffle(fields.begin(), fields.end(), rng);
            for (const std::string& f : fields) line += " " + f;
            text += line + "\n";
        }
        if (!final_newline) text.pop_back();
        CHECK(timer_lengths == (1u << 19) - 1);
        CHECK((time_widths >> 6) == (1u << 13) - 1); // widths 7..19 (t soon has 6 digits)
        const Read fast = read_all(text);
        const Read general = read_all(text, "t.trace", &kKeepAll);
        CHECK(fast.events.size() == 20000);
        check_same_events(fast, general);
    }
    // The last line, without a newline, after lines of digits: the reader's
    // buffer holds stale digits right after it, which must not count.
    for (std::size_t last_width = 1; last_width <= 19; ++last_width) {
        CAPTURE(last_width);
        std::string text = kHeader;
        for (int i = 0; i < 10000; ++i) text += "1 arm 1111 cpu=1 cb=111 at=111\n";
        text += "2 cancel " + std::string(last_width, '5');
        const Read fast = read_all(text);
        const Read general = read_all(text, "t.trace", &kKeepAll);
        REQUIRE(fast.events.size() == 10001);
        CHECK(fast.events.back().key.number == general.events.back().key.number);
        check_same_events(fast, general);
    }
}
