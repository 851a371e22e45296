// libFuzzer target: the LTTng (CTF) trace adapter (workloads/traces/input/
// lttng_ctf.hpp) on arbitrary bytes, through the entry point the CLI uses:
// KernelText over an InputFile of a directory, then FtraceReader and
// FtraceImporter over the text it renders (built by scripts/fuzz, not by
// meson).
//
// The input is one CTF trace directory: the bytes before the first
// kSeparator are its `metadata` file, those after it its one stream file
// `channel0_0` (no separator: all metadata, no stream). Both are written
// into a fresh temporary directory, removed after.
//
// Besides crashes, leaks, UB and hangs of this process it checks that
//   * every error is an InputError or a TraceError on one line that names
//     the directory ("DIR: ..."; a TraceError "DIR:LINE: ... (field)");
//   * the text it renders is in time order: the reader's error for a line
//     earlier than the one before it is a finding (the adapter shows an
//     event earlier than the one before it at that one's time);
//   * the importer's events are in time order.
// libbabeltrace2 runs in a forked child (forked_text.hpp): a crash of the
// child is an InputError "... libbabeltrace2 failed on it (SIGNAL) ...", by
// design. A child that ends with a non-zero status and no error message is
// a finding: only a sanitizer's report in our code running in the child
// ends it that way (scripts/fuzz points ASAN_OPTIONS/UBSAN_OPTIONS log_path
// at build-fuzz/logs/lttng_ctf/, as the child's stderr is /dev/null).
// libFuzzer sees the coverage of this process only: the child's (the
// rendering of events, libbabeltrace2) is not fed back.
#include "fuzz/fuzz_checks.hpp"
#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/kernel_text.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <unistd.h>

using namespace timersim;
using timersim::fuzz::check;
using timersim::fuzz::check_error;

namespace {

constexpr std::string_view kSeparator = "\n=STREAM=\n";

void write_file(const std::string& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    check(static_cast<bool>(out));
}

void check_input_error(const std::string& what, const std::string& dir) {
    check(what.find('\n') == std::string::npos);
    check(what.rfind(dir + ":", 0) == 0);
    // A child that ended without saying why (see the top).
    check(what.find("its reader stopped early") == std::string::npos);
}

void read_trace(const std::string& dir) {
    InputFile in(dir, InputFile::Directories::opened);
    KernelText text(in);
    FtraceReader reader(text.pass(), 250);
    FtraceImporter importer(reader);
    TraceEvent e;
    std::uint64_t last = 0;
    while (importer.next(e)) {
        check(e.time_ns >= last);
        last = e.time_ns;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    std::string dir = std::filesystem::temp_directory_path().string() + "/timersim-fuzz-ctf.XXXXXX";
    check(::mkdtemp(dir.data()) != nullptr);
    const auto cut = bytes.find(kSeparator);
    write_file(dir + "/metadata", bytes.substr(0, cut));
    if (cut != std::string_view::npos) write_file(dir + "/channel0_0", bytes.substr(cut + kSeparator.size()));
    try {
        read_trace(dir);
    } catch (const TraceError& e) {
        check_error(e, dir);
        check(e.message().find("must be in time order") == std::string::npos);
    } catch (const InputError& e) {
        check_input_error(e.what(), dir);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return 0;
}
