// trace.dat input (trace_dat.hpp, through KernelText): the real trace.dat of
// tests/data/kernel/capture-6.1-hz250-softirq.* gives, through the ftrace
// reader, exactly the FtraceEvents the kernel's text of the same ring buffer
// gives; it is known by its magic, never its name; a truncated or corrupt one
// is an InputError, never a crash.
#include "workloads/traces/input/kernel_text.hpp"
#include "workloads/traces/input/trace_dat.hpp"
#include "workloads/traces/kernel/trace_costs.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "test_data_dir.hpp"
#include "tests/written_pipe.hpp"
#include "tests/xz_fixture.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace timersim;

namespace {

const std::filesystem::path kKernel = std::filesystem::path(TEST_DATA_DIR) / "kernel";
const std::filesystem::path kDat = kKernel / "capture-6.1-hz250-softirq.trace.dat";
const std::filesystem::path kText = kKernel / "capture-6.1-hz250-softirq.trace.xz";

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

const std::string& dat_bytes() {
    static const std::string bytes = slurp(kDat);
    return bytes;
}

// A file's kernel text, as every command reads it.
std::string kernel_text(const std::string& path) {
    InputFile in(path);
    KernelText text(in);
    return text.pass().read_all();
}

const std::string& dat_text() {
    static const std::string text = kernel_text(kDat.string());
    return text;
}

// Every FtraceEvent field but the line, as one comparable string.
std::string describe(const FtraceEvent& e) {
    std::ostringstream s;
    s << to_string(e.type) << ' ' << e.timestamp_ns << " cpu" << e.line_cpu << " timer=" << std::hex << e.timer
      << std::dec << " fn=" << e.function << " mod=" << e.module << " expires=" << e.expires
      << " timeout=" << e.timeout << " cpu=" << (e.cpu ? std::to_string(*e.cpu) : "-")
      << " idx=" << (e.idx ? std::to_string(*e.idx) : "-")
      << " bucket=" << (e.bucket_expiry ? std::to_string(*e.bucket_expiry) : "-") << " flags=" << e.flags
      << (e.flags_known ? "" : "?") << " now=" << (e.now ? std::to_string(*e.now) : "-")
      << " baseclk=" << (e.baseclk ? std::to_string(*e.baseclk) : "-");
    return s.str();
}

struct Read {
    std::vector<std::string> events;
    FtraceReaderStats stats;
};

Read read_events(const std::string& text) {
    FtraceReader reader(std::string_view(text), "in", 250);
    Read r;
    FtraceEvent e;
    while (reader.next(e)) r.events.push_back(describe(e));
    r.stats = reader.stats();
    return r;
}

// A file of these bytes, named bad.dat, while it lives.
struct BadDat {
    explicit BadDat(std::string_view bytes)
        : path(std::filesystem::temp_directory_path() / fmt::format("timersim-test-{}-bad.dat", ::getpid())) {
        std::ofstream(path, std::ios::binary) << bytes;
    }
    ~BadDat() { std::filesystem::remove(path); }
    std::filesystem::path path;
};

// What reading `bytes` as kernel text throws, its file's path shown as
// "bad.dat".
std::string input_error(std::string_view bytes) {
    const BadDat file(bytes);
    try {
        kernel_text(file.path.string());
    } catch (const InputError& e) {
        std::string what = e.what();
        if (what.starts_with(file.path.string())) what.replace(0, file.path.string().size(), "bad.dat");
        return what;
    }
    return "";
}

// What --costs-from-trace measures from a text.
TraceCosts costs_of(const std::string& text) {
    FtraceReader reader(std::string_view(text), "in", 250);
    TraceCostCollector costs;
    reader.set_observer(&costs);
    FtraceEvent e;
    while (reader.next(e)) {
    }
    return costs.result("in");
}

std::string describe(const CostDistribution& d) {
    std::ostringstream s;
    s << d.count << ' ' << d.p50 << ' ' << d.p90 << ' ' << d.p99 << ' ' << d.max;
    return s.str();
}

// $TMPDIR set to a new directory while it lives, then as it was.
struct ScopedTmpdir {
    explicit ScopedTmpdir(const std::string& name)
        : dir(std::filesystem::temp_directory_path() / fmt::format("timersim-test-{}-{}", name, ::getpid())) {
        if (const char* old = std::getenv("TMPDIR")) before = old;
        std::filesystem::create_directories(dir);
        ::setenv("TMPDIR", dir.c_str(), 1);
    }
    ~ScopedTmpdir() {
        if (before)
            ::setenv("TMPDIR", before->c_str(), 1);
        else
            ::unsetenv("TMPDIR");
        std::filesystem::remove_all(dir);
    }
    std::filesystem::path dir;
    std::optional<std::string> before;
};

// How many descriptors of this process are open on files in `dir` (an
// unlinked temporary file links as "DIR/#N (deleted)").
std::size_t files_open_in(const std::filesystem::path& dir) {
    std::size_t n = 0;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code error;
        const std::string target = std::filesystem::read_symlink(fd.path(), error).string();
        if (!error && target.starts_with(dir.string() + "/")) ++n;
    }
    return n;
}

} // namespace

TEST_CASE("a trace.dat is known by its magic, not by its name") {
    CHECK(is_trace_dat(dat_bytes()));
    CHECK(is_trace_dat(std::string(kTraceDatMagic) + "6"));
    CHECK_FALSE(is_trace_dat(std::string_view(kTraceDatMagic).substr(0, 9)));
    CHECK_FALSE(is_trace_dat("# tracer: nop\n"));
    CHECK_FALSE(is_trace_dat("\x17\x08\x44tracinG"));

    // Kernel text: text as it is, whatever the name; a trace.dat rendered,
    // whatever the name (here a copy called .txt).
    const auto dir = std::filesystem::temp_directory_path();
    const auto as_txt = dir / "timersim-test-trace-dat.txt";
    std::filesystem::copy_file(kDat, as_txt, std::filesystem::copy_options::overwrite_existing);
    CHECK(kernel_text(as_txt.string()) == dat_text());
    std::filesystem::remove(as_txt);
    const auto text_dat = dir / "timersim-test-text.dat";
    std::ofstream(text_dat) << "# hz=250\n";
    CHECK(kernel_text(text_dat.string()) == "# hz=250\n");
    std::filesystem::remove(text_dat);
}

TEST_CASE("the trace.dat gives the FtraceEvents of the text of the same ring buffer") {
    const Read from_dat = read_events(dat_text());
    const Read from_text = read_events(test::read_xz(kText));
    // README: 710 + 856 + 813 + 423 + 423 timer events in the capture.
    REQUIRE(from_text.events.size() == 3225);
    REQUIRE(from_dat.events.size() == from_text.events.size());
    for (std::size_t i = 0; i < from_dat.events.size(); ++i) {
        INFO("event " << i);
        REQUIRE(from_dat.events[i] == from_text.events[i]);
    }
    // The other events, counted by name the same way (the marker as the text
    // names it), and no lost events.
    CHECK(from_dat.stats.other_by_name == from_text.stats.other_by_name);
    CHECK(from_dat.stats.other_by_name.at("softirq_entry") == 3098);
    CHECK(from_dat.stats.other_by_name.at("tracing_mark_write") == 2);
    CHECK(from_dat.stats.lost_event_markers == 0);
}

TEST_CASE("trace.dat flags come from the raw field, not libtraceevent's D|P|I") {
    // The text's flags= counts (README): none 668, D 75, D|I 36, I 34, P 43.
    std::map<std::uint32_t, int> by_flags;
    FtraceReader reader(std::string_view(dat_text()), "in", 250);
    FtraceEvent e;
    while (reader.next(e))
        if (e.type == FtraceEventType::timer_start) {
            CHECK(e.flags_known);
            ++by_flags[e.flags];
        }
    CHECK(by_flags[0] == 668);
    CHECK(by_flags[kFtraceDeferrable] == 75);
    CHECK(by_flags[kFtraceDeferrable | kFtraceIrqsafe] == 36);
    CHECK(by_flags[kFtraceIrqsafe] == 34);
    CHECK(by_flags[kFtracePinned] == 43);
    CHECK(by_flags.size() == 5);
}

TEST_CASE("the rendering: trace-cmd's cpus= line, then time order across CPUs, timestamps in µs") {
    const std::string& text = dat_text();
    CHECK(text.starts_with("cpus=2\n"));
    // The first timer_start of the capture, as the kernel's text has it (with
    // the pointer's 0x): "<idle>-0 [000] d.h3. 0.004000: timer_start: timer=ff21dbeafe82f190 ...".
    CHECK(text.find("[000] 0.004000: timer_start: timer=0xff21dbeafe82f190 function=mix_interrupt_randomness "
                    "expires=4294892297 [timeout=0] cpu=0 idx=10 flags=\n") != std::string::npos);
    CHECK(text.find("tracing_mark_write: timersim: workload start\n") != std::string::npos);
    // Timestamps never go back (the reader refuses that anyway).
    CHECK_NOTHROW(read_events(text));
}

TEST_CASE("a truncated or corrupt trace.dat is an InputError, never a crash") {
    const std::string& bytes = dat_bytes();
    // Cut in the header, the event formats, kallsyms, the CPU data and just
    // before the end of the CPU data (tests/cli/layouts.sh does the same
    // through the CLI, also for a version 6 file).
    for (const std::size_t cut : {std::size_t{10}, std::size_t{11}, std::size_t{64}, std::size_t{4096},
                                  bytes.size() / 4, bytes.size() / 2, bytes.size() - 4096, bytes.size() - 300}) {
        INFO("cut at " << cut);
        const std::string error = input_error(std::string_view(bytes).substr(0, cut));
        CHECK(error.starts_with("bad.dat: a trace.dat (trace-cmd) that cannot be read: "));
        CHECK(error.find('\n') == std::string::npos);
    }
    // The magic, then garbage.
    CHECK(input_error(std::string(kTraceDatMagic) + std::string(5000, 'x'))
              .starts_with("bad.dat: a trace.dat (trace-cmd) that cannot be read: "));
    // Corrupt CPU data: some bytes flipped in each CPU's compressed data
    // (dump: CPU 0 at 905216, CPU 1 at 937984).
    std::string flipped = bytes;
    for (std::size_t at : {905216u + 100u, 937984u + 100u}) flipped[at] = static_cast<char>(~flipped[at]);
    const std::string error = input_error(flipped);
    CHECK(error.starts_with("bad.dat: a trace.dat (trace-cmd) that cannot be read: "));
}

TEST_CASE("the trace.dat's softirq_entry/exit give the costs the text gives (--costs-from-trace)") {
    const TraceCosts from_dat = costs_of(dat_text());
    const TraceCosts from_text = costs_of(test::read_xz(kText));
    REQUIRE(from_text.softirq_runs.count > 0);
    CHECK(describe(from_dat.softirq_runs) == describe(from_text.softirq_runs));
    CHECK(describe(from_dat.callbacks) == describe(from_text.callbacks));
    CHECK(describe(from_dat.run_overhead) == describe(from_text.run_overhead));
    CHECK(describe(from_dat.per_expiry) == describe(from_text.per_expiry));
    CHECK(from_dat.expiries_in_runs == from_text.expiries_in_runs);
    CHECK(from_dat.callback_by_function.size() == from_text.callback_by_function.size());
}

TEST_CASE("a piped trace.dat keeps only its text for the passes, not a copy of its bytes") {
    const ScopedTmpdir tmp("piped-dat");
    const test::WrittenPipe pipe(dat_bytes());
    InputFile in(pipe.name());
    KernelText text(in);
    // The text, rendered once; the trace.dat's own copy is closed.
    CHECK(files_open_in(tmp.dir) == 1);
    CHECK(text.pass().read_all() == dat_text());
    CHECK(text.pass().read_all() == dat_text());
}

TEST_CASE("a trace.dat reader whose end cannot be learnt is an error, not a success") {
    // SIGCHLD ignored: the kernel reaps the reader, and waitpid() fails
    // (ECHILD) without its status.
    struct sigaction ignore{};
    struct sigaction before{};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    REQUIRE(::sigaction(SIGCHLD, &ignore, &before) == 0);
    std::string error;
    try {
        kernel_text(kDat.string());
    } catch (const InputError& e) {
        error = e.what();
    }
    REQUIRE(::sigaction(SIGCHLD, &before, nullptr) == 0);
    CHECK(error == kDat.string() + ": cannot learn how its trace.dat reader ended (No child processes)");
}
