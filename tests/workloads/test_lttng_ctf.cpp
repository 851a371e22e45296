// LTTng input (lttng_ctf.hpp, through KernelText): the real LTTng kernel
// trace of Linux 3.6 in tests/data/lttng/lttng-3.6-scp renders as ftrace
// text the ftrace reader takes, with every timer event babeltrace2 shows
// (and a 6.12 trace, tests/data/lttng/lttng-6.12-from-ftrace, with 6.12's);
// the directory is known by its content (its parent too); a damaged or
// foreign one is an InputError, never a crash.
#include "workloads/traces/input/kernel_line.hpp"
#include "workloads/traces/input/kernel_text.hpp"
#include "workloads/traces/input/lttng_ctf.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "test_data_dir.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

using namespace timersim;
namespace fs = std::filesystem;

namespace {

const fs::path kTrace = fs::path(TEST_DATA_DIR) / "lttng" / "lttng-3.6-scp";

// A directory's kernel text, as every command reads it.
std::string kernel_text(const fs::path& dir) {
    InputFile in(dir.string(), InputFile::Directories::opened);
    KernelText text(in);
    return text.pass().read_all();
}

const std::string& trace_text() {
    static const std::string text = kernel_text(kTrace);
    return text;
}

struct Counts {
    std::map<FtraceEventType, std::uint64_t> by_type;
    FtraceReaderStats stats;
};

Counts count_events(const std::string& text) {
    FtraceReader reader(std::string_view(text), "in", 300);
    Counts c;
    FtraceEvent e;
    while (reader.next(e)) ++c.by_type[e.type];
    c.stats = reader.stats();
    return c;
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A scratch directory while it lives.
struct Scratch {
    Scratch() : dir(fs::temp_directory_path() / fmt::format("timersim-test-lttng-{}", ::getpid())) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    // A copy of the trace's metadata and stream in DIR/sub, the stream
    // first cut to `stream_bytes` and the metadata's `from` replaced by
    // `to` (of the same length).
    fs::path trace(const std::string& sub, std::size_t stream_bytes = std::string::npos, std::string_view from = {},
                   std::string_view to = {}) const {
        const fs::path d = dir / sub;
        fs::create_directories(d);
        std::string metadata = slurp(kTrace / "metadata");
        if (!from.empty())
            for (auto at = metadata.find(from); at != std::string::npos; at = metadata.find(from, at + 1))
                metadata.replace(at, from.size(), to);
        std::ofstream(d / "metadata", std::ios::binary) << metadata;
        std::ofstream(d / "channel0_0", std::ios::binary) << slurp(kTrace / "channel0_0").substr(0, stream_bytes);
        return d;
    }
    fs::path dir;
};

// What reading `dir` as kernel text throws, its path shown as "DIR".
std::string input_error(const fs::path& dir) {
    try {
        kernel_text(dir);
    } catch (const InputError& e) {
        std::string what = e.what();
        if (what.starts_with(dir.string())) what.replace(0, dir.string().size(), "DIR");
        return what;
    }
    return "";
}

} // namespace

TEST_CASE("CTF metadata is known by its magic or its text's first line") {
    CHECK(is_ctf_metadata(slurp(kTrace / "metadata").substr(0, 6)));
    CHECK(is_ctf_metadata("\x75\xD1\x1D\x57"));  // big-endian packets
    CHECK(is_ctf_metadata("/* CTF 1.8 */\n")); // plain text
    CHECK_FALSE(is_ctf_metadata("# lttng-3.6-scp"));
    CHECK_FALSE(is_ctf_metadata("\x57\x1D\xD1"));
    CHECK_FALSE(is_ctf_metadata(""));
}

TEST_CASE("the 3.6 trace gives every timer event of its 17.4 s, in time order") {
    // tests/data/lttng/lttng-3.6-scp/README.md. babeltrace2's command line
    // stops 2.36 s in (1,439 timer_start): the reader does not.
    Counts c = count_events(trace_text());
    CHECK(c.by_type[FtraceEventType::timer_start] == 10617);
    CHECK(c.by_type[FtraceEventType::timer_expire_entry] == 10544);
    CHECK(c.by_type[FtraceEventType::timer_expire_exit] == 10544);
    CHECK(c.by_type[FtraceEventType::timer_cancel] == 10616);
    CHECK(c.by_type[FtraceEventType::timer_init] == 100);
    CHECK(c.stats.lines == 85729 + 3); // every event, and the header
    // The first and last events' times, as the kernel's text rounds them.
    CHECK(trace_text().find("\n           <...>-0       [000] 10509.628612: timer_init: timer=0xffff88001d49b8c0\n") !=
          std::string::npos);
    CHECK(trace_text().ends_with("] 10527.050371: sched_switch:\n"));
    // hrtimer, irq, sched and syscall events: skipped by name.
    CHECK(c.stats.other_by_name.contains("hrtimer_start"));
    CHECK(c.stats.other_by_name.contains("sched_switch"));
    CHECK(c.stats.lost_event_markers == 0);
}

TEST_CASE("the text's header gives the kernel, the host and the tracer from the trace's environment") {
    const std::string& text = trace_text();
    CHECK(text.starts_with("# tracer: lttng-modules 2.1.0 (LTTng kernel trace, CTF, read with libbabeltrace2)\n"
                           "# kernel: 3.6.11-1-ARCH\n"
                           "# hostname: VM3\n"));
}

TEST_CASE("timer events print as 3.6's print fmt prints them") {
    const std::string& text = trace_text();
    // The first timer_start and timer_expire_entry babeltrace2 shows:
    // timer_start { timer = 18446612132805589184, function =
    // 18446744071579262592, expires = 4298033184, now = 4298030184 }, and
    // timer_expire_entry { timer = 18446612132844908792, now = 4298030185,
    // function = 18446744072101237920 }.
    CHECK(text.find(fmt::format(" timer_start: timer=0x{:x} function=0x{:x} expires=4298033184 [timeout=3000]\n",
                                18446612132805589184ull, 18446744071579262592ull)) != std::string::npos);
    CHECK(text.find(fmt::format(" timer_expire_entry: timer=0x{:x} function=0x{:x} now=4298030185\n",
                                18446612132844908792ull, 18446744072101237920ull)) != std::string::npos);
    CHECK(text.find(fmt::format(" timer_cancel: timer=0x{:x}\n", 18446612132844908792ull)) != std::string::npos);
    // softirq events carry their vector, as the kernel's text does.
    CHECK(text.find(" softirq_entry: vec=1 [action=TIMER]\n") != std::string::npos);
    // Events after a sched_switch are the next task's.
    CHECK(text.find("\n lttng-consumerd-4034    [000] 10509.628720: sched_stat_runtime:\n") != std::string::npos);
}

TEST_CASE("a 6.12 trace's timer events print as 6.12's print fmt prints them, a logger write as a marker") {
    // tests/data/lttng/lttng-6.12-from-ftrace: lttng-modules' 6.8+ layouts
    // (timer_start with bucket_expiry and the flags word, timer_expire_entry
    // with baseclk), two CPUs, and the workload markers as lttng_logger.
    const std::string text = kernel_text(fs::path(TEST_DATA_DIR) / "lttng" / "lttng-6.12-from-ftrace");
    CHECK(text.starts_with("# tracer: lttng-modules 2.13.0 (LTTng kernel trace, CTF, read with libbabeltrace2)\n"
                           "# kernel: 6.12.118+deb13-cloud-amd64\n"));
    // The capture's first timer_start and the expiry of its second callback:
    //   timer_start: timer=000000001309b178 function=delayed_work_timer_fn expires=4294892546
    //     [timeout=250] bucket_expiry=4294892552 cpu=0 idx=65 flags=I
    //   timer_expire_entry: timer=00000000f7d036b8 function=mix_interrupt_randomness
    //     now=4294892298 baseclk=4294892298
    CHECK(text.find(" [000] 0.338021: timer_start: timer=0x1309b178 function=0xffffffff81000000 expires=4294892546 "
                    "[timeout=250] bucket_expiry=4294892552 cpu=0 idx=65 flags=I\n") != std::string::npos);
    CHECK(text.find(" [000] 0.367801: timer_expire_entry: timer=0xf7d036b8 function=0xffffffff81001000 "
                    "now=4294892298 baseclk=4294892298\n") != std::string::npos);
    CHECK(text.find(" [001] ") != std::string::npos);
    // A write to /proc/lttng-logger, without its newline, as ftrace shows a trace_marker write.
    CHECK(text.find(" [000] 4.187091: tracing_mark_write: timersim: workload start\n") != std::string::npos);
    CHECK(text.find(" [001] 16.702077: tracing_mark_write: timersim: workload end\n") != std::string::npos);
    CHECK(text.find("lttng_logger") == std::string::npos);
}

TEST_CASE("a line's time rounds to the microsecond, without wrapping at the clock's end") {
    // A damaged stream's clock near 2^64 ns once printed as 0.000000,
    // before the lines above it (fuzz/corpus/lttng_ctf/regress-time-wraps.ctf).
    std::string line;
    append_line_start(line, "c", 1, 0, 18446744073709551615ull, "e");
    CHECK(line.ends_with(" [000] 18446744073.709552: e:"));
    line.clear();
    append_line_start(line, "c", 1, 0, 1499, "e");
    CHECK(line.ends_with(" [000] 0.000001: e:"));
    line.clear();
    append_line_start(line, "c", 1, 0, 1500, "e");
    CHECK(line.ends_with(" [000] 0.000002: e:"));
}

TEST_CASE("a parent directory finds the traces below it; files beside a trace are not streams") {
    const Scratch scratch;
    const fs::path session = scratch.dir / "session";
    const fs::path kernel = scratch.trace("session/kernel");
    std::ofstream(kernel / "README.md") << "# not a stream\n";
    CHECK(find_ctf_traces(session.string()) == std::vector<std::string>{kernel.string()});
    CHECK(kernel_text(session) == trace_text());
    CHECK(find_ctf_traces(scratch.dir.string()) == std::vector<std::string>{kernel.string()});
}

TEST_CASE("a directory that is no LTTng kernel trace, or a damaged one, is one InputError") {
    const Scratch scratch;
    fs::create_directories(scratch.dir / "empty");
    CHECK(input_error(scratch.dir / "empty") ==
          "DIR: a directory, not an LTTng trace (no CTF metadata in it or below it)");
    // A userspace trace: its environment's domain is "ust".
    CHECK(input_error(scratch.trace("ust", std::string::npos, "domain = \"kernel\";", "domain = \"ust\";   ")) ==
          "DIR: an LTTng userspace (UST) trace, not a kernel one: timersim reads the kernel's timer events "
          "(lttng-modules)");
    // Metadata that does not parse.
    const fs::path corrupt = scratch.trace("corrupt", std::string::npos, "struct", "strXct");
    CHECK(input_error(corrupt) == fmt::format("DIR: an LTTng trace (CTF) that cannot be read: libbabeltrace2 cannot "
                                              "open it (metadata it cannot parse, or a stream file cut short or "
                                              "corrupt): Cannot create trace for `{}`",
                                              corrupt.string()));
    // A stream cut in the middle of a packet.
    const fs::path cut = scratch.trace("cut", 1000000);
    CHECK(input_error(cut) == fmt::format("DIR: an LTTng trace (CTF) that cannot be read: libbabeltrace2 cannot open "
                                          "it (metadata it cannot parse, or a stream file cut short or corrupt): "
                                          "Failed to index CTF stream file '{}/channel0_0'",
                                          cut.string()));
    // Metadata cut inside a packet (libbabeltrace2 2.0.4 would loop forever).
    const fs::path metadata_cut = scratch.trace("metadata-cut");
    fs::resize_file(metadata_cut / "metadata", 10000);
    CHECK(input_error(metadata_cut) ==
          fmt::format("DIR: an LTTng trace (CTF) that cannot be read: its metadata ({}/metadata) is cut short: its "
                      "last packet, at byte 8192, needs 4096 bytes and has 1808",
                      metadata_cut.string()));
    // Metadata and no stream.
    const fs::path bare = scratch.trace("bare", 0);
    CHECK(input_error(bare) == "DIR: an LTTng trace (CTF) that cannot be read: it has CTF metadata but no stream file "
                               "(none starts with CTF's packet magic)");
}

TEST_CASE("an input opened as a directory has no bytes of its own") {
    InputFile in(kTrace.string(), InputFile::Directories::opened);
    CHECK(in.is_directory());
    char c = 0;
    CHECK(in.read(&c, 1) == 0);
    CHECK(in.error() == "Is a directory");
    CHECK_THROWS_AS(InputFile(kTrace.string()), InputError);
}

TEST_CASE("the links given to libbabeltrace2 are gone once the trace is read, or found damaged") {
    const Scratch scratch;
    const fs::path tmp = scratch.dir / "tmp";
    fs::create_directories(tmp);
    const std::string before = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
    ::setenv("TMPDIR", tmp.c_str(), 1);
    CHECK(kernel_text(kTrace).size() == trace_text().size());
    CHECK(input_error(scratch.trace("cut", 1000000)).starts_with("DIR: an LTTng trace (CTF) that cannot be read: "));
    if (before.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", before.c_str(), 1);
    CHECK(fs::is_empty(tmp));
}

TEST_CASE("a session's traces are merged by time; a userspace trace beside the kernel's is skipped and counted") {
    const Scratch scratch;
    // Two kernel traces: every event twice, the two streams merged in time order.
    scratch.trace("twice/a");
    scratch.trace("twice/b");
    const std::string twice = kernel_text(scratch.dir / "twice");
    Counts c = count_events(twice);
    CHECK(c.by_type[FtraceEventType::timer_start] == 2 * 10617);
    CHECK(c.stats.lines == 2 * 85729 + 3);
    // A userspace trace beside the kernel's: its events are left out.
    scratch.trace("mixed/kernel");
    scratch.trace("mixed/ust", std::string::npos, "domain = \"kernel\";", "domain = \"ust\";   ");
    const std::string mixed = kernel_text(scratch.dir / "mixed");
    const std::string header_end = "# hostname: VM3\n";
    const auto split = trace_text().find(header_end) + header_end.size();
    CHECK(mixed == trace_text().substr(0, split) + "# lttng: 85729 events of ust traces skipped\n" +
                       trace_text().substr(split));
}
