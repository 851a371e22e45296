// A replay whose events are not kept in memory (TraceLoadOptions::
// max_event_bytes, workloads/traces/replay/event_cursor.hpp): it reads them
// again from the input and runs exactly as a replay of the kept events, and
// the memory it needs does not grow with the trace's length. Memory is
// counted by a test allocator (allocation_meter.hpp), never timed.
#include "sim/machine/engine_run.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/replay/loaded_trace_data.hpp"
#include "workloads/traces/replay/shared_pass.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include "test_data_dir.hpp"
#include "tests/allocation_meter.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

namespace {

using trace_store::StoredEvent;

// Every event of a pass of a reader of its own, chunk by chunk, letting go
// of each as it goes; the first error it meets.
struct ReadAll {
    std::vector<StoredEvent> events;
    std::exception_ptr error;
};
void read_all(SharedPass::Reader& reader, std::size_t count, ReadAll& out) {
    try {
        for (std::size_t k = 0; k * SharedPass::kChunk < count; ++k) {
            const auto chunk = reader.chunk(k);
            out.events.insert(out.events.end(), chunk->begin(), chunk->end());
            reader.release(k + 1);
        }
    } catch (...) {
        out.error = std::current_exception();
    }
}

bool same_events(const std::vector<StoredEvent>& a, const std::vector<StoredEvent>& b) {
    static_assert(sizeof(StoredEvent) == 32); // no padding: compared bytewise
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(StoredEvent)) == 0;
}

} // namespace

TEST_CASE("replays reading at the same time share one pass over the input") {
    TempFile file("shared");
    write_trace(file.path, 300'000); // 74 chunks: past what the pass keeps, and past how far one may lead
    const auto trace = load(file.path, TraceKind::timersim, 0);
    const LoadedTrace::Data& data = trace->data();
    REQUIRE(data.count == 300'000);
    std::vector<StoredEvent> expected;
    {
        const auto source = data.reopen();
        TraceEvent e;
        while (source->next(e)) expected.push_back(trace_store::stored_event(e));
    }
    std::atomic<int> opened = 0;
    const TraceReopener counting = [&] {
        ++opened;
        return data.reopen();
    };
    SharedPasses passes;
    SharedPass::Reader a = passes.join(counting, data.count, data.file);
    SharedPass::Reader b = passes.join(counting, data.count, data.file);
    ReadAll got_a, got_b;
    std::thread ta([&] { read_all(a, data.count, got_a); });
    std::thread tb([&] { read_all(b, data.count, got_b); });
    ta.join();
    tb.join();
    CHECK_FALSE(got_a.error);
    CHECK_FALSE(got_b.error);
    CHECK(same_events(got_a.events, expected));
    CHECK(same_events(got_b.events, expected));
    CHECK(opened == 1);
    CHECK(passes.counts().passes == 1);
    CHECK(passes.counts().joined == 1);
    // Past its first chunk, the pass takes no one else: a replay starting
    // now reads a pass of its own.
    SharedPass::Reader c = passes.join(counting, data.count, data.file);
    ReadAll got_c;
    read_all(c, data.count, got_c);
    CHECK(same_events(got_c.events, expected));
    CHECK(opened == 2);
    CHECK(passes.counts().passes == 2);
}

TEST_CASE("an input that ends early stops every reader of the shared pass") {
    TempFile file("short");
    write_trace(file.path, 50'000);
    const auto trace = load(file.path, TraceKind::timersim, 0);
    const LoadedTrace::Data& data = trace->data();
    // The pass is told of more events than the input gives.
    SharedPasses passes;
    const std::size_t count = data.count + 10'000;
    SharedPass::Reader a = passes.join(data.reopen, count, data.file);
    SharedPass::Reader b = passes.join(data.reopen, count, data.file);
    ReadAll got_a, got_b;
    std::thread ta([&] { read_all(a, count, got_a); });
    std::thread tb([&] { read_all(b, count, got_b); });
    ta.join();
    tb.join();
    for (const ReadAll* got : {&got_a, &got_b}) {
        REQUIRE(got->error);
        CHECK_THROWS_AS(std::rethrow_exception(got->error), TraceError);
    }
}
