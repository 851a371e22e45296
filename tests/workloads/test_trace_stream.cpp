// A replay whose events are not kept in memory (TraceLoadOptions::
// max_event_bytes, workloads/traces/replay/event_cursor.hpp): it reads them
// again from the input and runs exactly as a replay of the kept events, and
// the memory it needs does not grow with the trace's length. Memory is
// counted by a test allocator (allocation_meter.hpp), never timed.
#include "sim/machine/engine_run.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include "test_data_dir.hpp"
#include "tests/allocation_meter.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

using namespace timersim;

namespace {

constexpr unsigned kHz = 250;
constexpr std::uint64_t kStartJiffies = 1000;
constexpr std::uint64_t kTimers = 5'000;

// A file under the system's temporary directory, removed at the end.
struct TempFile {
    explicit TempFile(const std::string& name)
        : path((std::filesystem::temp_directory_path() /
                fmt::format("timersim-test-stream-{}-{}", name, static_cast<const void*>(this)))
                   .string()) {}
    ~TempFile() { std::filesystem::remove(path); }
    std::string path;
};

// `events` arms and cancels of kTimers timers, 5 us apart: the trace grows
// with `events`, what is live at once does not.
void write_trace(const std::string& path, std::uint64_t events) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    TraceWriter writer(f, TraceHeader{.hz = kHz, .start_jiffies = kStartJiffies});
    TraceEvent e;
    for (std::uint64_t i = 0; i < events; ++i) {
        e.time_ns = i * 5'000;
        e.kind = i % 4 == 3 ? TraceEventKind::cancel : TraceEventKind::arm;
        e.key = TimerKey{false, i % kTimers, {}};
        e.expiry = e.kind == TraceEventKind::cancel ? ExpiryForm::none : ExpiryForm::in_jiffies;
        e.expiry_value = 1 + i % 97;
        writer.write(e);
    }
    writer.flush();
    std::fclose(f);
}

std::shared_ptr<const LoadedTrace> load(const std::string& path, TraceKind kind, std::size_t max_event_bytes) {
    InputFile in(path, kind == TraceKind::ftrace ? InputFile::Directories::opened : InputFile::Directories::refused);
    TraceLoadOptions options;
    options.max_event_bytes = max_event_bytes;
    return load_trace(in, kind, HzChoice{}, options);
}

RunResult replay(const std::shared_ptr<const LoadedTrace>& trace, TraceReplayStats* stats = nullptr) {
    const TraceSummary& s = trace->summary();
    MachineConfig m;
    m.hz = s.header.hz;
    m.start_jiffies = s.header.start_jiffies;
    m.cpus = s.cpus;
    m.ticks = s.end_ns() * s.header.hz / 1'000'000'000 + 2;
    return run_machine(Design::modern, m,
                       WorkloadSpec{.name = "test", .description = "test", .factory = trace_replay(trace, stats)});
}

// The most bytes allocated at once while loading and replaying a trace of
// `events` events, over what was allocated before.
std::size_t peak_bytes(std::uint64_t events, std::size_t max_event_bytes) {
    TempFile file(fmt::format("{}", events));
    write_trace(file.path, events);
    allocation_meter::mark();
    TraceReplayStats stats;
    const RunResult r = replay(load(file.path, TraceKind::timersim, max_event_bytes), &stats);
    const std::size_t peak = allocation_meter::peak_since_mark();
    REQUIRE(stats.events == events);
    REQUIRE(r.total.arms == events - events / 4);
    return peak;
}

} // namespace

TEST_CASE("a replay of events read again runs as the replay of the events kept") {
    SUBCASE("a kernel capture, its fires matched against the kernel's") {
        const std::string path = std::string(TEST_DATA_DIR) + "/kernel/capture-6.1-hz250.trace.xz";
        const auto kept = load(path, TraceKind::ftrace, TraceLoadOptions::kDefaultMaxEventBytes);
        const auto streamed = load(path, TraceKind::ftrace, 0);
        CHECK(kept->memory_bytes() > streamed->memory_bytes());
        CHECK(kept->summary().events == streamed->summary().events);
        TraceReplayStats a, b;
        const RunResult x = replay(kept, &a);
        const RunResult y = replay(streamed, &b);
        CHECK(a.events == b.events);
        CHECK(a.events > 2000);
        CHECK(x.total.arms == y.total.arms);
        CHECK(x.total.fired == y.total.fired);
        CHECK(x.total.cancelled == y.total.cancelled);
        CHECK(x.total.pending == y.total.pending);
        REQUIRE(x.kernel_fires);
        REQUIRE(y.kernel_fires);
        CHECK(x.kernel_fires->same_jiffy_cpu == y.kernel_fires->same_jiffy_cpu);
        CHECK(x.kernel_fires->same_jiffy_cpu > 500);
    }
    SUBCASE("a timersim trace, replayed twice from one load") {
        TempFile file("twice");
        write_trace(file.path, 20'000);
        const auto streamed = load(file.path, TraceKind::timersim, 1024); // 32 events' worth
        const auto kept = load(file.path, TraceKind::timersim, TraceLoadOptions::kDefaultMaxEventBytes);
        const RunResult x = replay(kept), y = replay(streamed), z = replay(streamed);
        CHECK(x.total.arms == 15'000);
        CHECK(x.total.fired == y.total.fired);
        CHECK(y.total.fired == z.total.fired);
        CHECK(x.total.cancelled == y.total.cancelled);
        CHECK(x.total.error_jiffies.counts() == y.total.error_jiffies.counts());
    }
}

TEST_CASE("the memory of a replay of events read again does not grow with the trace's length") {
    constexpr std::uint64_t kEvents = 100'000;
    const std::size_t streamed = peak_bytes(kEvents, 0);
    const std::size_t streamed_10x = peak_bytes(10 * kEvents, 0);
    // The events kept: 32 bytes each, so the measurement sees what grows.
    const std::size_t kept_10x = peak_bytes(10 * kEvents, TraceLoadOptions::kDefaultMaxEventBytes);
    CAPTURE(streamed);
    CAPTURE(streamed_10x);
    CAPTURE(kept_10x);
    constexpr std::size_t kMargin = 1 << 20; // 1 MiB: 1/32 of what 900K more events kept take
    CHECK(streamed_10x <= streamed + kMargin);
    CHECK(kept_10x >= streamed_10x + 10 * kEvents * 32 * 9 / 10);
}

// The input must be the same when a replay reads it again: a file that
// changed after the load stops the replay with "FILE: changed while being
// read" (InputError, which the CLI prints as one line, exit 2), never a
// replay of other events.
TEST_CASE("a trace changed after its load stops the replay that reads it again") {
    TempFile file("changed");
    write_trace(file.path, 20'000);
    const auto streamed = load(file.path, TraceKind::timersim, 0);
    write_trace(file.path, 10'000);
    try {
        replay(streamed);
        FAIL("the replay read a changed file");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()) == file.path + ": changed while being read");
    }
}
