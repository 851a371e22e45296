// InputFile (workloads/traces/input/input_file.hpp): passes over a file, a pipe
// or standard input; xz, gzip and zstd decompressed in-process, told apart by
// their magic bytes and never by the name; errors that name the file. The
// compressed inputs are made here with the same libraries (liblzma, zlib,
// libzstd), so the tests need no tools.
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"
#include "workloads/traces/replay/loaded_trace_data.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include "tests/written_pipe.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <lzma.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace timersim;

namespace {

struct TempFile {
    explicit TempFile(const std::string& name)
        : path((std::filesystem::temp_directory_path() /
                fmt::format("timersim-test-input-{}-{}-{}", ::getpid(), name, static_cast<const void*>(this)))
                   .string()) {}
    ~TempFile() { std::filesystem::remove(path); }
    std::string path;
};

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    REQUIRE(out.good());
}

std::string xz(const std::string& in) {
    std::string out(lzma_stream_buffer_bound(in.size()), '\0');
    std::size_t pos = 0;
    REQUIRE(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const std::uint8_t*>(in.data()),
                                    in.size(), reinterpret_cast<std::uint8_t*>(out.data()), &pos,
                                    out.size()) == LZMA_OK);
    out.resize(pos);
    return out;
}

std::string gzip(const std::string& in) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// With a checksum, as the zstd tool writes by default.
std::string zstd(const std::string& in) {
    std::string out(ZSTD_compressBound(in.size()), '\0');
    ZSTD_CCtx* c = ZSTD_createCCtx();
    REQUIRE(c != nullptr);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), in.data(), in.size());
    ZSTD_freeCCtx(c);
    REQUIRE(!ZSTD_isError(n));
    out.resize(n);
    return out;
}

// A trace v1 of `events` lines, about 30 bytes each.
std::string trace_text(unsigned events) {
    std::string text = "# timersim-trace v1 hz=250 start_jiffies=1000\n";
    for (unsigned i = 0; i < events; ++i) text += fmt::format("{} arm t{} in={}j\n", i * 1000, i % 977, 1 + i % 300);
    return text;
}

// Reads all of `in` in pieces of `piece` bytes.
std::string read_in_pieces(InputFile& in, std::size_t piece) {
    std::string out;
    std::vector<char> buffer(piece);
    while (true) {
        const std::size_t got = in.read(buffer.data(), piece);
        out.append(buffer.data(), got);
        if (got < piece) break;
    }
    return out;
}

std::string read_path(const std::string& path, std::size_t piece = 4096) {
    InputFile in(path);
    std::string text = read_in_pieces(in, piece);
    CHECK_MESSAGE(!in.failed(), in.error());
    return text;
}

} // namespace

TEST_CASE("plain, xz, gzip and zstd inputs read back the same bytes, known by their magic") {
    const std::string text = trace_text(20'000); // ~500 KB: several buffers
    struct Case {
        const char* what;
        std::string bytes;
        Compression compression;
    };
    const std::vector<Case> cases{
        {"plain", text, Compression::none},
        {"xz", xz(text), Compression::xz},
        {"gzip", gzip(text), Compression::gzip},
        {"zstd", zstd(text), Compression::zstd},
    };
    for (const Case& c : cases) {
        CAPTURE(c.what);
        // The names lie on purpose: only the bytes count.
        TempFile file("lying-name.gz");
        write_file(file.path, c.bytes);
        {
            InputFile in(file.path);
            CHECK(in.compression() == c.compression);
            CHECK(in.name() == file.path);
        }
        for (const std::size_t piece : {std::size_t{1} << 20, std::size_t{65536}, std::size_t{4093}, std::size_t{7}})
            CHECK(read_path(file.path, piece) == text);
    }
}

TEST_CASE("concatenated xz streams, gzip members and zstd frames read as one input") {
    const std::string a = trace_text(3000);
    const std::string b = "3000000000 cancel t1\n3000000001 arm t2 in=5j\n";
    for (const auto& [what, bytes] : std::vector<std::pair<std::string, std::string>>{
             {"xz", xz(a) + xz(b)}, {"gzip", gzip(a) + gzip(b)}, {"zstd", zstd(a) + zstd(b)}}) {
        CAPTURE(what);
        TempFile file("concatenated");
        write_file(file.path, bytes);
        CHECK(read_path(file.path) == a + b);
    }
}

TEST_CASE("truncated or corrupt compressed input is an error, not a short input") {
    const std::string text = trace_text(20'000);
    for (const auto& [what, bytes] :
         std::vector<std::pair<std::string, std::string>>{
             {"xz", xz(text)}, {"gzip", gzip(text)}, {"zstd", zstd(text)}}) {
        CAPTURE(what);
        TempFile file("broken");
        // Cut: the data ends before its stream does.
        write_file(file.path, bytes.substr(0, bytes.size() - 10));
        {
            InputFile in(file.path);
            const std::string got = read_in_pieces(in, 65536);
            CHECK(in.failed());
            CHECK(in.error() == what + ": unexpected end of the compressed data");
            CHECK(got.size() <= text.size()); // xz: cut in the index after the data
            CHECK(text.compare(0, got.size(), got) == 0); // what came before the cut is right
        }
        // Corrupt: bytes in the middle changed.
        std::string corrupt = bytes;
        for (std::size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 16; ++i)
            corrupt[i] = static_cast<char>(~corrupt[i]);
        write_file(file.path, corrupt);
        InputFile in(file.path);
        read_in_pieces(in, 65536);
        CHECK(in.failed());
        CHECK(in.error().rfind(what + ": compressed data is corrupt", 0) == 0);
    }
}

TEST_CASE("inputs shorter than any magic, or starting like one, are plain text") {
    for (const std::string& bytes : {std::string(), std::string("#"), std::string("\xFD" "7zX", 4),
                                    std::string("\x1F", 1), std::string("\x28\xB5\x2F", 3), std::string("12 arm")}) {
        CAPTURE(bytes.size());
        TempFile file("short");
        write_file(file.path, bytes);
        InputFile in(file.path);
        CHECK(in.compression() == Compression::none);
        CHECK(read_in_pieces(in, 3) == bytes);
        CHECK(!in.failed());
    }
}

TEST_CASE("an input that cannot be opened or read throws InputError naming it") {
    const auto message = [](const std::string& path) {
        try {
            InputFile in(path);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message("/nonexistent/no-such.trace") == "/nonexistent/no-such.trace: No such file or directory");
    const std::string dir = std::filesystem::temp_directory_path().string();
    CHECK(message(dir) == dir + ": Is a directory");
}

TEST_CASE("a pipe is read in one pass, however its writer splits the bytes") {
    const std::string text = trace_text(5000);
    for (const std::string& bytes : {text, gzip(text), xz(text), zstd(text)}) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        // The writer hands over one byte at a time first (the magic arrives
        // in pieces), then the rest in odd-sized writes.
        std::thread writer([&, fd = fds[1]] {
            std::size_t at = 0;
            for (std::size_t piece = 1; at < bytes.size(); piece = piece < 8 ? piece + 1 : 4099) {
                const std::size_t n = std::min(piece, bytes.size() - at);
                const ssize_t w = ::write(fd, bytes.data() + at, n);
                if (w <= 0) break;
                at += static_cast<std::size_t>(w);
            }
            ::close(fd);
        });
        std::string got;
        {
            InputFile in(fmt::format("/dev/fd/{}", fds[0]));
            got = read_in_pieces(in, 65536);
            CHECK(!in.failed());
        }
        writer.join();
        ::close(fds[0]);
        CHECK(got == text);
    }
}

TEST_CASE("an input kept for reading again gives its bytes again: files compressed or not, and pipes") {
    const std::string text = trace_text(5000);
    for (const std::string& bytes : {text, xz(text), zstd(text)}) {
        TempFile file("again");
        write_file(file.path, bytes);
        InputFile in(file.path);
        in.keep_for_reading_again();
        CHECK(in.peek(3) == text.substr(0, 3)); // peeked bytes are still read
        CHECK(read_in_pieces(in, 4093) == text);
        std::unique_ptr<InputFile> again = in.read_again();
        CHECK(again->name() == file.path);
        CHECK(read_in_pieces(*again, 65536) == text);
        // A pass may begin before the one before it is done, and go on.
        std::unique_ptr<InputFile> third = again->read_again();
        CHECK(read_in_pieces(*third, 7) == text);
    }
    for (const std::string& bytes : {text, gzip(text)}) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        std::thread writer([&, fd = fds[1]] {
            for (std::size_t at = 0; at < bytes.size();) {
                const ssize_t w = ::write(fd, bytes.data() + at, std::min<std::size_t>(4099, bytes.size() - at));
                if (w <= 0) break;
                at += static_cast<std::size_t>(w);
            }
            ::close(fd);
        });
        std::string first, second, third;
        {
            InputFile in(fmt::format("/dev/fd/{}", fds[0]));
            in.keep_for_reading_again();
            // The first pass stops early: reading again copies the rest.
            first.resize(100);
            first.resize(in.read(first.data(), first.size()));
            std::unique_ptr<InputFile> again = in.read_again();
            second = read_in_pieces(*again, 65536);
            third = read_in_pieces(*again->read_again(), 65536);
        }
        writer.join();
        ::close(fds[0]);
        CHECK(first == text.substr(0, 100));
        CHECK(second == text);
        CHECK(third == text);
    }
}

namespace {

// The same bytes in a file and through a pipe, for tests that read both
// alike.
struct FileAndPipe {
    FileAndPipe(const std::string& name, const std::string& bytes) : file(name), pipe(bytes) {
        write_file(file.path, bytes);
    }
    std::vector<std::string> paths() const { return {file.path, pipe.name()}; }
    TempFile file;
    test::WrittenPipe pipe;
};

std::unique_ptr<InputFile> kept_for_reading_again(const std::string& path) {
    auto in = std::make_unique<InputFile>(path);
    in->keep_for_reading_again();
    return in;
}

} // namespace

TEST_CASE("an input that stops being kept reads on, and cannot be read again") {
    const std::string text = trace_text(2000);
    const FileAndPipe inputs("stop", text);
    for (const std::string& path : inputs.paths()) {
        CAPTURE(path);
        const std::unique_ptr<InputFile> in = kept_for_reading_again(path);
        CHECK(in->peek(5) == text.substr(0, 5));
        in->stop_keeping();
        CHECK(read_in_pieces(*in, 4093) == text);
        CHECK_THROWS_AS(in->read_again(), std::logic_error);
    }
}

TEST_CASE("an input read again is not read further: its passes read on") {
    const std::string text = trace_text(3000);
    const FileAndPipe inputs("handed-on", text);
    // A pipe's rest is read into its copy by read_again(): reading on
    // would find it gone. A file refuses the same, so that a caller
    // tested on files is right on pipes.
    for (const std::string& path : inputs.paths()) {
        CAPTURE(path);
        const std::unique_ptr<InputFile> in = kept_for_reading_again(path);
        char first[100];
        CHECK(in->read(first, sizeof first) == sizeof first);
        std::unique_ptr<InputFile> again = in->read_again();
        char c = 0;
        CHECK_THROWS_AS(in->read(&c, 1), std::logic_error);
        CHECK_THROWS_AS(in->peek(1), std::logic_error);
        CHECK_THROWS_AS(in->read_all(), std::logic_error);
        CHECK(read_in_pieces(*again, 4093) == text);
        CHECK(read_in_pieces(*in->read_again(), 65536) == text); // and again
    }
}

namespace {

// What reading `in` to its end throws ("" if nothing).
std::string error_reading(InputFile& in) {
    try {
        read_in_pieces(in, 4096);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

std::string error_reading_again(InputFile& in) {
    try {
        in.read_again();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("a file that changes while it is read in passes is an InputError naming it") {
    const std::string text = trace_text(3000);
    for (const std::string& bytes : {text, zstd(text)}) {
        TempFile file("changing");
        const std::string message = file.path + ": changed while being read";
        // Longer between the passes.
        write_file(file.path, bytes);
        {
            InputFile in(file.path);
            in.keep_for_reading_again();
            CHECK(read_in_pieces(in, 4096) == text);
            std::ofstream(file.path, std::ios::app) << "1 arm t1 in=1j\n";
            CHECK(error_reading_again(in) == message);
        }
        // As long, but written again (its modification time set apart: a
        // rewrite within the same clock tick could keep it).
        write_file(file.path, bytes);
        {
            InputFile in(file.path);
            in.keep_for_reading_again();
            CHECK(read_in_pieces(in, 4096) == text);
            write_file(file.path, bytes);
            const timespec times[2] = {{.tv_sec = 0, .tv_nsec = UTIME_OMIT}, {.tv_sec = 1'000'000'000, .tv_nsec = 0}};
            REQUIRE(::utimensat(AT_FDCWD, file.path.c_str(), times, 0) == 0);
            CHECK(error_reading_again(in) == message);
        }
        // Cut during the second pass: found at its end.
        write_file(file.path, bytes);
        {
            InputFile in(file.path);
            in.keep_for_reading_again();
            CHECK(read_in_pieces(in, 4096) == text);
            std::unique_ptr<InputFile> again = in.read_again();
            std::filesystem::resize_file(file.path, bytes.size() / 2);
            CHECK(error_reading(*again) == message);
        }
        // Unchanged: three passes, no error.
        {
            InputFile in(file.path);
            in.keep_for_reading_again();
            const std::string first = read_in_pieces(in, 4096);
            std::unique_ptr<InputFile> again = in.read_again();
            CHECK(read_in_pieces(*again, 4096) == first);
            CHECK(read_in_pieces(*again->read_again(), 4096) == first);
        }
    }
}

TEST_CASE("a regular file of size 0 (tracefs, /proc) is copied: every pass reads what the first read") {
    // /proc/self/io counts the bytes this process read: its text differs
    // each time it is made, as tracefs's trace does while tracing.
    const std::string path = "/proc/self/io";
    struct stat st{};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    REQUIRE(S_ISREG(st.st_mode));
    REQUIRE(st.st_size == 0);
    InputFile in(path);
    in.keep_for_reading_again();
    const std::string first = read_in_pieces(in, 4096);
    CHECK(first.starts_with("rchar: "));
    std::unique_ptr<InputFile> again = in.read_again();
    CHECK(read_in_pieces(*again, 4096) == first);
    CHECK(read_in_pieces(*again->read_again(), 7) == first);
}

TEST_CASE("temporary files go in $TMPDIR, else /tmp, and their errors name the directory used") {
    const char* env = std::getenv("TMPDIR");
    const std::optional<std::string> before = env ? std::optional<std::string>(env) : std::nullopt;
    ::unsetenv("TMPDIR");
    CHECK(temporary_directory() == "/tmp");
    ::setenv("TMPDIR", "", 1);
    CHECK(temporary_directory() == "/tmp");
    const std::string missing = "/nonexistent/timersim-tmp";
    ::setenv("TMPDIR", missing.c_str(), 1);
    CHECK(temporary_directory() == missing);
    std::string error;
    {
        const std::string text = trace_text(10); // less than a pipe holds: the writer never waits
        const test::WrittenPipe pipe(text);
        InputFile in(pipe.name());
        try {
            in.keep_for_reading_again();
        } catch (const InputError& e) {
            error = e.what();
        }
        CHECK(read_in_pieces(in, 4096) == text);
        CHECK(error == pipe.name() + ": no temporary file to read it again from in " + missing +
                           " (No such file or directory)");
    }
    if (before)
        ::setenv("TMPDIR", before->c_str(), 1);
    else
        ::unsetenv("TMPDIR");
}

TEST_CASE("reading again must be asked for before the first read") {
    TempFile file("order");
    write_file(file.path, trace_text(10));
    InputFile in(file.path);
    CHECK_THROWS_AS(in.read_again(), std::logic_error);
    char c = 0;
    CHECK(in.read(&c, 1) == 1);
    CHECK_THROWS_AS(in.keep_for_reading_again(), std::logic_error);
}

TEST_CASE("the trace reader reads any input and names it in its errors") {
    const std::string text = trace_text(3000);
    TempFile plain("plain");
    write_file(plain.path, text);
    TempFile packed("packed");
    write_file(packed.path, zstd(text));
    InputFile a(plain.path);
    InputFile b(packed.path);
    TraceReader ra(a);
    TraceReader rb(b);
    CHECK(rb.file_name() == packed.path);
    TraceEvent ea;
    TraceEvent eb;
    std::uint64_t events = 0;
    while (ra.next(ea)) {
        REQUIRE(rb.next(eb));
        CHECK(ea.time_ns == eb.time_ns);
        CHECK(ea.timer == eb.timer);
        CHECK(ea.expiry_value == eb.expiry_value);
        ++events;
    }
    CHECK(!rb.next(eb));
    CHECK(events == 3000);

    // Corrupt data in the middle: FILE:LINE at the line it broke in.
    std::string bytes = xz(text);
    bytes.resize(bytes.size() / 2);
    write_file(packed.path, bytes);
    InputFile c(packed.path);
    TraceReader rc(c);
    std::string error;
    std::uint64_t read = 0;
    try {
        while (rc.next(ea)) ++read;
    } catch (const TraceError& e) {
        error = e.what();
    }
    CHECK(read > 0);
    CHECK(read < 3000);
    CHECK(error == fmt::format("{}:{}: read error: xz: unexpected end of the compressed data (line)", packed.path,
                               read + 2));
}

TEST_CASE("load_trace reads its input once: a pipe gives the same trace as the file") {
    const std::string text = trace_text(4000) + "4000000000 arm t5 in=1j cpu=2\n";
    TempFile file("load");
    write_file(file.path, xz(text));
    const auto from_file = load_trace(file.path, TraceKind::timersim, {});
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const std::string bytes = xz(text);
    std::thread writer([&, fd = fds[1]] {
        for (std::size_t at = 0; at < bytes.size();) {
            const ssize_t w = ::write(fd, bytes.data() + at, bytes.size() - at);
            if (w <= 0) break;
            at += static_cast<std::size_t>(w);
        }
        ::close(fd);
    });
    std::shared_ptr<const LoadedTrace> from_pipe;
    {
        InputFile in(fmt::format("/dev/fd/{}", fds[0]));
        from_pipe = load_trace(in, TraceKind::timersim, {});
    }
    writer.join();
    ::close(fds[0]);
    const TraceSummary& a = from_file->summary();
    const TraceSummary& b = from_pipe->summary();
    CHECK(a.events == 4001);
    CHECK(b.events == a.events);
    CHECK(b.last_event_ns == a.last_event_ns);
    CHECK(b.last_event_line == 4002);
    CHECK(b.cpus == 3);
    CHECK(b.header.start_jiffies == 1000);
    // 32 bytes an event, in chunks of 8Ki events, and each of the 977
    // timers' name and label (short keys: in the strings themselves, in
    // vectors at most twice as large as needed).
    const std::size_t names = 977 * 2 * sizeof(std::string);
    CHECK(from_pipe->memory_bytes() >= 4001 * 32 + names);
    CHECK(from_pipe->memory_bytes() <= 8192 * 32 + 4096 + 2 * names);
}

// The loader's event store: single chunks first, then chunks carved from
// 2 MiB blocks. Every event must read back as written, and no two chunks
// may share memory, across both kinds and several blocks.
TEST_CASE("a loaded trace's event store reads back every event, past its first blocks") {
    LoadedTrace::Data data;
    constexpr std::size_t kEvents = LoadedTrace::Data::kChunk * (3 * LoadedTrace::Data::kChunksPerBlock + 2) + 5;
    for (std::size_t i = 0; i < kEvents; ++i) {
        trace_store::StoredEvent e;
        e.time_ns = i;
        e.value = ~i;
        e.timer = static_cast<std::uint32_t>(i * 7);
        data.push(e);
    }
    REQUIRE(data.count == kEvents);
    CHECK(data.chunks.size() == (kEvents + LoadedTrace::Data::kChunk - 1) / LoadedTrace::Data::kChunk);
    // One block a chunk for the first kChunksPerBlock chunks, then one a block.
    CHECK(data.blocks.list.size() == LoadedTrace::Data::kChunksPerBlock + 3);
    bool all = true;
    for (std::size_t i = 0; i < kEvents; ++i) {
        const trace_store::StoredEvent& e = data.at(i);
        all = all && e.time_ns == i && e.value == ~i && e.timer == static_cast<std::uint32_t>(i * 7);
    }
    CHECK(all);
    std::vector<const trace_store::StoredEvent*> starts(data.chunks.begin(), data.chunks.end());
    std::sort(starts.begin(), starts.end());
    for (std::size_t i = 1; i < starts.size(); ++i)
        CHECK(starts[i] - starts[i - 1] >= static_cast<std::ptrdiff_t>(LoadedTrace::Data::kChunk));
}
